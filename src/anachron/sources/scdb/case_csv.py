"""A case-centred SCDB CSV parsed into the ``scdb`` table: columns checked, unusable rows dropped and counted."""

from __future__ import annotations

import io
from typing import Iterable

import pandas as pd

from anachron.sources.base import read_csv_checked
from anachron.sources.dockets import normalize_docket

#: Columns the CSV must have.
REQUIRED_COLUMNS = ["caseId", "docket", "term", "dateDecision", "partyWinning", "decisionType", "caseName"]
OPTIONAL_COLUMNS = ["dateArgument", "usCite"]
#: Output columns, in order.
SCDB_COLUMNS = [
    "term",
    "docket",
    "docket_key",
    "case_id",
    "case_name",
    "decision_date",
    "argument_date",
    "party_winning",
    "decision_type",
    "us_cite",
]

#: Skip reasons (manifest ``skipped_by_reason``).
SKIP_NO_DOCKET = "missing_docket"
SKIP_BAD_TERM = "bad_term"
SKIP_BAD_DATE = "bad_decision_date"
SKIP_BAD_PARTY = "invalid_party_winning"
SKIP_DUPLICATE = "duplicate_term_docket"


def _iso_mdy(values: pd.Series) -> pd.Series:
    """M/D/YYYY strings (or ISO) -> ISO strings; unparseable -> None."""
    parsed = pd.to_datetime(values, format="%m/%d/%Y", errors="coerce")
    iso_like = pd.to_datetime(values.where(parsed.isna()), format="%Y-%m-%d", errors="coerce")
    parsed = parsed.fillna(iso_like)
    return parsed.dt.strftime("%Y-%m-%d").where(parsed.notna(), None)


def parse_scdb_csv(text: str, where: str, terms: Iterable[int] | None = None) -> tuple[pd.DataFrame, dict[str, int], dict[str, int]]:
    """Parse a case-centred SCDB CSV into the table of :mod:`anachron.sources.scdb`.

    Args:
        text: the CSV text.
        where: file path or URL, named in errors.
        terms: October Terms to keep (None keeps all).

    Returns:
        ``(table, skipped_by_reason, outcome_counts)``; ``outcome_counts`` counts the kept
        rows by ``party_winning`` (``petitioner_won``, ``petitioner_lost``, ``unclear``,
        ``missing``).

    Raises:
        SourceError: naming ``where`` and the column when a required column is missing.
    """
    raw = read_csv_checked(
        io.StringIO(text),
        REQUIRED_COLUMNS,
        name=where,
        usecols=REQUIRED_COLUMNS + OPTIONAL_COLUMNS,
        dtype="str",
        keep_default_na=False,
    )
    for c in OPTIONAL_COLUMNS:
        if c not in raw.columns:
            raw[c] = ""
    skipped: dict[str, int] = {}

    def drop(mask: pd.Series, reason: str) -> None:
        nonlocal raw
        n = int(mask.sum())
        if n:
            skipped[reason] = skipped.get(reason, 0) + n
            raw = raw.loc[~mask]

    raw = raw.copy()
    term = pd.to_numeric(raw["term"].str.strip(), errors="coerce")
    raw["_term"] = term
    drop(raw["_term"].isna(), SKIP_BAD_TERM)
    raw["_term"] = raw["_term"].astype("int64")
    if terms is not None:
        wanted = {int(t) for t in terms}
        raw = raw.loc[raw["_term"].isin(wanted)]
    raw["_docket_key"] = raw["docket"].map(normalize_docket)
    drop(raw["_docket_key"].isna(), SKIP_NO_DOCKET)
    raw["_decision_date"] = _iso_mdy(raw["dateDecision"].str.strip())
    drop(raw["_decision_date"].isna(), SKIP_BAD_DATE)
    pw = raw["partyWinning"].str.strip()
    pw_num = pd.to_numeric(pw, errors="coerce")
    bad_party = (pw != "") & ~pw_num.isin([0, 1, 2])
    raw["_party_winning"] = pw_num
    drop(bad_party, SKIP_BAD_PARTY)
    dup = raw.duplicated(["_term", "_docket_key"], keep="first")
    drop(dup, SKIP_DUPLICATE)

    out = pd.DataFrame(
        {
            "term": raw["_term"].astype("Int64"),
            "docket": raw["docket"].str.strip(),
            "docket_key": raw["_docket_key"],
            "case_id": raw["caseId"].str.strip(),
            "case_name": raw["caseName"].str.strip(),
            "decision_date": raw["_decision_date"],
            "argument_date": _iso_mdy(raw["dateArgument"].str.strip()),
            "party_winning": pd.to_numeric(raw["_party_winning"], errors="coerce").astype("Int64"),
            "decision_type": pd.to_numeric(raw["decisionType"].str.strip(), errors="coerce").astype("Int64"),
            "us_cite": raw["usCite"].str.strip().replace("", None),
        }
    )[SCDB_COLUMNS]
    out = out.sort_values(["term", "docket_key"], kind="mergesort").reset_index(drop=True)
    pwk = out["party_winning"]
    outcome_counts = {
        "petitioner_won": int((pwk == 1).sum()),
        "petitioner_lost": int((pwk == 0).sum()),
        "unclear": int((pwk == 2).sum()),
        "missing": int(pwk.isna().sum()),
    }
    return out, skipped, outcome_counts
