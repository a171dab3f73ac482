"""The ``cases`` table: its columns, the rows skipped, one row per (term, docket)."""

from __future__ import annotations

from typing import Any

import pandas as pd

#: Columns of the ``cases`` table, in order.
CASE_COLUMNS = [
    "term",
    "docket",
    "docket_key",
    "name",
    "petitioner",
    "respondent",
    "first_party_label",
    "second_party_label",
    "facts",
    "question",
    "granted_date",
    "argued_date",
    "decided_date",
    "oyez_outcome",
    "oyez_outcome_note",
    "winning_party",
    "majority_votes",
    "minority_votes",
    "vote_check",
    "lower_court",
    "citation",
    "additional_dockets",
    "href",
]

#: Skip reasons (manifest ``skipped_by_reason``).
SKIP_NO_DOCKET = "missing_docket"
SKIP_BAD_TERM = "bad_term"
SKIP_DUPLICATE = "duplicate_term_docket"
SKIP_NOT_JSON = "not_json_object"


def empty_cases() -> pd.DataFrame:
    """An empty ``cases`` table with the right columns."""
    df = pd.DataFrame({c: pd.Series(dtype="object") for c in CASE_COLUMNS})
    for c in ("term", "majority_votes", "minority_votes"):
        df[c] = pd.Series(dtype="Int64")
    return df[CASE_COLUMNS]


def finish_cases(rows: list[dict[str, Any]]) -> tuple[pd.DataFrame, dict[str, int]]:
    """Frame from parsed rows: drop rows without docket/term and (term, docket) repeats.

    Returns ``(cases, skipped_by_reason)``; the first of repeated (term, docket_key) rows is
    kept. Sorted by term, docket_key.
    """
    skipped: dict[str, int] = {}
    kept = []
    seen: set[tuple[int, str]] = set()
    for r in rows:
        if r["docket_key"] is None:
            skipped[SKIP_NO_DOCKET] = skipped.get(SKIP_NO_DOCKET, 0) + 1
            continue
        if r["term"] is None:
            skipped[SKIP_BAD_TERM] = skipped.get(SKIP_BAD_TERM, 0) + 1
            continue
        key = (r["term"], r["docket_key"])
        if key in seen:
            skipped[SKIP_DUPLICATE] = skipped.get(SKIP_DUPLICATE, 0) + 1
            continue
        seen.add(key)
        kept.append(r)
    if not kept:
        return empty_cases(), skipped
    df = pd.DataFrame(kept, columns=CASE_COLUMNS)
    for c in ("term", "majority_votes", "minority_votes"):
        df[c] = df[c].astype("Int64")
    df = df.sort_values(["term", "docket_key"], kind="mergesort").reset_index(drop=True)
    return df, skipped
