"""Question-set files (``YYYY-MM-DD-{llm,human}.json``) as frames of single questions."""

from __future__ import annotations

from collections import Counter

import pandas as pd

from anachron.dates import to_iso
from anachron.frames import na_text
from anachron.sources.forecastbench.sets import open_set, require
from anachron.sources.forecastbench.table import JOIN_COLUMNS

QUESTION_SET_KEYS = ("forecast_due_date", "questions")
QUESTION_KEYS = ("id", "source", "question", "resolution_criteria", "background", "freeze_datetime", "url")


def parse_question_set(data: bytes | str | dict, name: str, counts: Counter | None = None) -> pd.DataFrame:
    """Parse one question-set file into a frame of single questions.

    ``name`` is the file name (used as ``question_set`` and in errors). Returns columns
    ``question_id, source, question_type, question, background, resolution_criteria,
    market_resolution_criteria, freeze_datetime, freeze_date, freeze_value,
    freeze_value_explanation, forecast_due_date, question_set, url``. Combination entries and
    entries with an unparseable freeze time are skipped and added to ``counts``.

    Raises :class:`SourceError` naming the file (and the question index) when a required key
    is missing or the JSON is invalid.
    """
    counts = counts if counts is not None else Counter()
    obj, due = open_set(data, name, QUESTION_SET_KEYS, "questions")
    rows = []
    for i, q in enumerate(obj["questions"]):
        require(q, QUESTION_KEYS, f"{name} (questions[{i}])")
        if isinstance(q["id"], list) or na_text(q.get("combination_of")) is not None:
            counts["combination_question"] += 1
            continue
        freeze_date = to_iso(q["freeze_datetime"], lenient=True, utc=True)
        if freeze_date is None:
            counts["bad_freeze_datetime"] += 1
            continue
        dates = q.get("resolution_dates")
        rows.append(
            {
                "question_id": str(q["id"]),
                "source": str(q["source"]),
                "question_type": "dataset" if isinstance(dates, list) else "market",
                "question": str(q["question"]),
                "background": "" if q["background"] is None else str(q["background"]),
                "resolution_criteria": "" if q["resolution_criteria"] is None else str(q["resolution_criteria"]),
                "market_resolution_criteria": na_text(q.get("market_info_resolution_criteria")),
                "freeze_datetime": str(q["freeze_datetime"]),
                "freeze_date": freeze_date,
                "freeze_value": na_text(q.get("freeze_datetime_value")),
                "freeze_value_explanation": na_text(q.get("freeze_datetime_value_explanation")),
                "forecast_due_date": due,
                "question_set": name,
                "url": "" if q["url"] is None else str(q["url"]),
            }
        )
    return pd.DataFrame(rows, columns=[c for c in JOIN_COLUMNS if c not in ("resolution_date", "resolved", "resolved_to", "resolution_set")])
