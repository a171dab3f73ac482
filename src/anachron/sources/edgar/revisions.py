"""The time order of each period's reports: revision numbers, what was known on a date, restatement links."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pandas as pd

from anachron.sources.base import check_columns
from anachron.sources.edgar.table import COLUMNS, KEY_COLUMNS


def add_revisions(facts: pd.DataFrame, counts: Counter | None = None) -> pd.DataFrame:
    """Order each period's reports in time and add ``first_filed, revision, value_changed, restates``.

    A period is (cik, taxonomy, concept, unit, start, end). Its reports are ordered by
    ``filed``, then ``accn``, then ``val``; the first is revision 0. ``value_changed`` is True
    when a report's value differs from the previous report's, and then ``restates`` holds the
    previous report's ``accn``. Exact repeats (same period, accn, val, form, filed, fy, fp) are
    dropped and counted as ``duplicate_fact``. A ``derived`` column is kept (False when absent).
    Returns a new frame sorted by period and time.
    """
    counts = counts if counts is not None else Counter()
    df = facts.copy()
    df["derived"] = df["derived"].fillna(False).astype(bool) if "derived" in df.columns else False
    dup = df.duplicated(KEY_COLUMNS + ["accn", "val", "form", "filed", "fy", "fp"], keep="first")
    counts["duplicate_fact"] += int(dup.sum())
    df = df.loc[~dup]
    order = KEY_COLUMNS + ["filed", "accn", "val"]
    sort_key = df[order].copy()
    sort_key["start"] = sort_key["start"].fillna("")  # instants first, NaN-safe
    df = df.loc[sort_key.sort_values(order, kind="mergesort").index].reset_index(drop=True)
    group_key = [df["cik"], df["taxonomy"], df["concept"], df["unit"], df["start"].fillna(""), df["end"]]
    grouped = df.groupby(group_key, sort=False)
    df["first_filed"] = grouped["filed"].transform("min").astype("str")
    df["revision"] = grouped.cumcount().astype("int64")
    prev_val = grouped["val"].shift(1)
    prev_accn = grouped["accn"].shift(1)
    changed = (df["revision"] > 0) & (df["val"] != prev_val)
    df["value_changed"] = changed.astype(bool)
    df["restates"] = prev_accn.where(changed, None)
    return df[COLUMNS]


def as_of(facts: pd.DataFrame, date: Any) -> pd.DataFrame:
    """The value of every (company, concept, unit, period) as known on ``date``.

    Pure function over a :data:`COLUMNS` frame (as from
    :func:`~anachron.sources.edgar.reader.fetch`): keeps the reports filed on or before
    ``date`` (a date string, ``date`` or Timestamp; same-day filings count as known) and, per
    period, the latest of them (highest ``revision``). Periods first reported after ``date``
    are absent. Returns the selected rows (all columns), sorted by period, with a fresh index.

    Raises ``ValueError`` when ``date`` is not a date, :class:`SourceError` when a column is missing.
    """
    check_columns(facts, KEY_COLUMNS + ["filed", "revision"], "EDGAR facts")
    try:
        day = pd.Timestamp(date)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"as_of date {date!r} is not a date (use ISO YYYY-MM-DD)") from exc
    if day is pd.NaT:
        raise ValueError(f"as_of date {date!r} is not a date (use ISO YYYY-MM-DD)")
    if day.tzinfo is not None:
        day = day.tz_convert("UTC").tz_localize(None)
    known = facts.loc[pd.to_datetime(facts["filed"]) <= day.normalize()]
    if known.empty:
        return known.reset_index(drop=True)
    key = [known["cik"], known["taxonomy"], known["concept"], known["unit"], known["start"].fillna(""), known["end"]]
    latest = known.groupby(key, sort=False)["revision"].transform("max")
    out = known.loc[known["revision"] == latest]
    sort_key = out[KEY_COLUMNS].copy()
    sort_key["start"] = sort_key["start"].fillna("")
    return out.loc[sort_key.sort_values(KEY_COLUMNS, kind="mergesort").index].reset_index(drop=True)


def restatement_links(facts: pd.DataFrame) -> pd.DataFrame:
    """Rows whose value differs from the previous report of the same period (``value_changed``).

    Each row links a later filing (``accn``, ``filed``, new ``val``) to the filing it restates
    (``restates``); the previous value is added as ``previous_val``.
    """
    prev = facts.groupby(
        [facts["cik"], facts["taxonomy"], facts["concept"], facts["unit"], facts["start"].fillna(""), facts["end"]], sort=False
    )["val"].shift(1)
    out = facts.assign(previous_val=prev)
    return out.loc[out["value_changed"].astype(bool)].reset_index(drop=True)

