"""The ``forecastbench`` output table: its columns, and the join of questions with their resolutions."""

from __future__ import annotations

from collections import Counter

import pandas as pd

from anachron.sources.forecastbench.vintage import default_vintage

#: Columns of the join of questions with resolutions, in order.
JOIN_COLUMNS = [
    "question_id",
    "source",
    "question_type",
    "question",
    "background",
    "resolution_criteria",
    "market_resolution_criteria",
    "freeze_datetime",
    "freeze_date",
    "freeze_value",
    "freeze_value_explanation",
    "forecast_due_date",
    "resolution_date",
    "resolved",
    "resolved_to",
    "question_set",
    "resolution_set",
    "url",
]
#: Which vintage decided each label (:mod:`anachron.sources.forecastbench.vintage`).
LABEL_COLUMNS = ["label_vintage", "revised_value"]
#: Output columns, in order (:mod:`anachron.sources.forecastbench`).
COLUMNS = JOIN_COLUMNS + LABEL_COLUMNS


def join_questions_resolutions(
    questions: pd.DataFrame, resolutions: pd.DataFrame, counts: Counter | None = None
) -> pd.DataFrame:
    """Inner join of single questions and their resolutions on (due date, source, id).

    Duplicated questions (same due date, source, id) and resolutions (same plus resolution
    date) are dropped, first kept, and counted; so are unmatched rows on either side
    (``question_without_resolution``, ``resolution_without_question``). Returns the
    :data:`COLUMNS` frame, sorted, with a fresh index; ``label_vintage`` / ``revised_value`` say
    the labels are ForecastBench's (:func:`~anachron.sources.forecastbench.vintage.default_vintage`).
    """
    counts = counts if counts is not None else Counter()
    qkey = ["forecast_due_date", "source", "question_id"]
    dup_q = questions.duplicated(qkey, keep="first")
    counts["duplicate_question"] += int(dup_q.sum())
    questions = questions.loc[~dup_q]
    dup_r = resolutions.duplicated(qkey + ["resolution_date"], keep="first")
    counts["duplicate_resolution"] += int(dup_r.sum())
    resolutions = resolutions.loc[~dup_r]
    merged = questions.merge(resolutions, on=qkey, how="outer", indicator=True)
    counts["question_without_resolution"] += int((merged["_merge"] == "left_only").sum())
    counts["resolution_without_question"] += int((merged["_merge"] == "right_only").sum())
    out = merged.loc[merged["_merge"] == "both", JOIN_COLUMNS].copy()
    out["resolved"] = out["resolved"].astype(bool)
    out["resolved_to"] = out["resolved_to"].astype("float64")
    out = out.sort_values(["forecast_due_date", "source", "question_id", "resolution_date"], kind="mergesort")
    return default_vintage(out.reset_index(drop=True))
