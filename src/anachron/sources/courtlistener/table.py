"""The ``courtlistener`` output table: its columns, the empty table, de-duplicated rows."""

from __future__ import annotations

from typing import Any

import pandas as pd

#: Output columns, in order.
COLUMNS = [
    "court",
    "case_name",
    "date_filed",
    "docket_number",
    "precedential_status",
    "download_url",
    "cluster_id",
    "opinion_id",
    "cite_count",
    "text",
    "text_source",
    "disposition",
    "disposition_source",
    "disposition_note",
    "outcome",
    "appellant",
    "appellee",
    "party_source",
    "origin",
]


def empty_table() -> pd.DataFrame:
    """An empty table with :data:`COLUMNS`."""
    df = pd.DataFrame({c: pd.Series(dtype="object") for c in COLUMNS})
    for c in ("cluster_id", "opinion_id", "cite_count"):
        df[c] = pd.Series(dtype="Int64")
    return df[COLUMNS]


def finish_table(rows: list[dict[str, Any]], skipped: dict[str, int]) -> pd.DataFrame:
    """The table of parsed rows: :data:`COLUMNS`, ids as ``Int64``, one row per (court, docket number).

    Rows without a docket number are told apart by court, case name and date filed. The
    first of repeated rows is kept; the others are counted in ``skipped`` (updated in
    place) as ``duplicate_court_docket``. No rows give :func:`empty_table`.
    """
    if not rows:
        return empty_table()
    df = pd.DataFrame(rows, columns=COLUMNS)
    for c in ("cluster_id", "opinion_id", "cite_count"):
        df[c] = pd.to_numeric(df[c], errors="coerce").astype("Int64")
    key = df["court"].astype(str) + "|" + df["docket_number"].fillna("").astype(str).str.strip().str.lower()
    no_docket = df["docket_number"].isna() | (df["docket_number"].astype(str).str.strip() == "")
    key = key.where(~no_docket, df["court"].astype(str) + "|name:" + df["case_name"].astype(str).str.lower() + "|" + df["date_filed"].astype(str))
    dup = key.duplicated(keep="first")
    if dup.any():
        skipped["duplicate_court_docket"] = skipped.get("duplicate_court_docket", 0) + int(dup.sum())
    return df.loc[~dup].reset_index(drop=True)
