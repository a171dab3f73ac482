"""The Supreme Court Database (SCDB), case-centred release: outcomes and decision dates.

Live (the default) downloads the release zip
``http://scdb.wustl.edu/_brickFiles/{release}/SCDB_{release}_caseCentered_Citation.csv.zip``
(:data:`SCDB_URL_TEMPLATE`; release ``2024_01`` by default, the one the snapshot holds) and
reads the CSV inside it. A snapshot directory holds the CSV itself as
``scdb/SCDB_*_caseCentered_Citation.csv``.

Output (both modes), one row per (term, docket)::

    term            int      October Term
    docket          str      docket as SCDB writes it ("13-604", "126, ORIG.")
    docket_key      str      :func:`anachron.sources.dockets.normalize_docket` of docket
    case_id         str      SCDB caseId ("2014-001")
    case_name       str      SCDB caseName (upper case)
    decision_date   str      ISO date of dateDecision (M/D/YYYY in the file)
    argument_date   str|None ISO date of dateArgument
    party_winning   Int64    partyWinning: 1 = the petitioning party won, 0 = it lost,
                             2 = unclear, <NA> = not coded
    decision_type   Int64    decisionType (1 opinion of the court, 2 per curiam without
                             argument, 4 decree, 5 equally divided, 6 per curiam after
                             argument, 7 judgment of the Court, ...)
    us_cite         str|None U.S. Reports citation

Rows with ``party_winning`` 2 or <NA> are kept in the table (they are real cases) and
counted in the manifest (``outcome_counts``). The legal task excludes a case SCDB codes 2
(unclear) as "no clear binary outcome" and does not fall back to another label for it; for
<NA> (not coded) it may use the Oyez ``winning_party`` instead. Rows that cannot be
used at all (no docket, a term or decision date that does not parse, a partyWinning code
outside 0/1/2) are dropped and counted in ``skipped_by_reason``; repeated (term, docket)
rows keep the first and are counted as ``duplicate_term_docket``.
"""

from __future__ import annotations

import io
import logging
import os
import zipfile
from pathlib import Path
from typing import Any, Iterable

import pandas as pd

from anachron.io import sha256_bytes, sha256_file
from anachron.sources.base import (
    SourceReader,
    SourceError,
    find_snapshot_files,
    read_csv_checked,
)
from anachron.sources.dockets import normalize_docket

log = logging.getLogger(__name__)

#: Default SCDB release (the snapshot's).
DEFAULT_RELEASE = "2024_01"
#: Download URL of a case-centred, citation-organised release zip.
SCDB_URL_TEMPLATE = "http://scdb.wustl.edu/_brickFiles/{release}/SCDB_{release}_caseCentered_Citation.csv.zip"
#: Snapshot path pattern, relative to the snapshot directory.
SNAPSHOT_PATTERN = "scdb/SCDB_*_caseCentered_Citation.csv"
#: Terms kept when none are given.
DEFAULT_TERMS = tuple(range(2014, 2025))
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

SKIP_NO_DOCKET = "missing_docket"
SKIP_BAD_TERM = "bad_term"
SKIP_BAD_DATE = "bad_decision_date"
SKIP_BAD_PARTY = "invalid_party_winning"
SKIP_DUPLICATE = "duplicate_term_docket"

#: JSON Schema of the ``sources.scdb`` config block.
CONFIG_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "default": {},
    "description": "Supreme Court Database release (live: the release zip; snapshot: scdb/SCDB_*_caseCentered_Citation.csv).",
    "properties": {
        "release": {
            "description": "SCDB release, e.g. 2024_01 (terms through 2023).",
            "type": "string",
            "pattern": "^[0-9]{4}_[0-9]{2}$",
            "default": DEFAULT_RELEASE,
        },
        "url": {
            "description": "Release zip URL; null builds it from `release` (SCDB_URL_TEMPLATE).",
            "type": ["string", "null"],
            "default": None,
        },
        "terms": {
            "description": "October Terms to keep.",
            "type": "array",
            "items": {"type": "integer", "minimum": 1789},
            "default": list(DEFAULT_TERMS),
        },
        "timeout": {"description": "Seconds for the download.", "type": "number", "exclusiveMinimum": 0, "default": 120},
    },
}


def _decode(data: bytes) -> str:
    """SCDB files have been released in UTF-8 and in Windows-1252; accept both."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("cp1252", errors="replace")


def _iso_mdy(values: pd.Series) -> pd.Series:
    """M/D/YYYY strings (or ISO) -> ISO strings; unparseable -> None."""
    parsed = pd.to_datetime(values, format="%m/%d/%Y", errors="coerce")
    iso_like = pd.to_datetime(values.where(parsed.isna()), format="%Y-%m-%d", errors="coerce")
    parsed = parsed.fillna(iso_like)
    return parsed.dt.strftime("%Y-%m-%d").where(parsed.notna(), None)


def parse_scdb_csv(text: str, where: str, terms: Iterable[int] | None = None) -> tuple[pd.DataFrame, dict[str, int], dict[str, int]]:
    """Parse a case-centred SCDB CSV into the table of the module docstring.

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


class SCDBCaseReader(SourceReader):
    """Case-centred SCDB rows (outcome, decision date) for a set of terms.

    Parameters
    ----------
    terms:
        October Terms to keep (default :data:`DEFAULT_TERMS`; None in :func:`fetch` keeps
        the default).
    release, url:
        Live download: ``url`` or, when None, :data:`SCDB_URL_TEMPLATE` for ``release``.
    session:
        ``requests.Session`` for live mode (tests inject one replaying a recorded zip).
    snapshot_dir:
        Directory holding ``scdb/SCDB_*_caseCentered_Citation.csv`` (the last by name is
        read); ``None`` falls back to ``$ANACHRON_SNAPSHOT_DIR`` and then to the download.

    After :meth:`read`: :attr:`manifest` (one record), :attr:`skipped_by_reason`,
    :attr:`outcome_counts`. Raises :class:`SourceError` on a failed download, a zip without
    a CSV, a missing column (naming the file and the column), or no row for the terms.
    """

    source = "scdb"
    snapshot_layout = SNAPSHOT_PATTERN

    def __init__(
        self,
        terms: Iterable[int] | None = None,
        *,
        release: str = DEFAULT_RELEASE,
        url: str | None = None,
        session: Any = None,
        snapshot_dir: str | os.PathLike[str] | None = None,
        timeout: float = 120.0,
    ) -> None:
        self.terms = sorted({int(t) for t in (terms if terms is not None else DEFAULT_TERMS)})
        self.release = release
        self.url = url or SCDB_URL_TEMPLATE.format(release=release)
        super().__init__(session=session, snapshot_dir=snapshot_dir)
        self.timeout = timeout
        self.outcome_counts: dict[str, int] = {}

    def _read_snapshot(self, snap: Path) -> pd.DataFrame:
        path = find_snapshot_files(snap, SNAPSHOT_PATTERN)[-1]
        try:
            text = _decode(path.read_bytes())
        except OSError as exc:
            raise SourceError(f"{path}: could not read ({exc}); check the snapshot directory.") from exc
        return self._cases(text, f"snapshot:{path}", sha256_file(path), str(path), {"snapshot_file": path.name})

    def _read_live(self, session: Any) -> pd.DataFrame:
        resp = self._get(session, self.url, what=f"the SCDB release {self.release}", timeout=self.timeout)
        data = resp.content
        try:
            with zipfile.ZipFile(io.BytesIO(data)) as zf:
                members = [n for n in zf.namelist() if n.lower().endswith(".csv") and not n.startswith("__MACOSX")]
                if not members:
                    raise SourceError(
                        f"{self.url}: the zip holds no .csv file ({', '.join(zf.namelist()) or 'empty'}); "
                        "check the release name. " + self._hint()
                    )
                member = members[0]
                text = _decode(zf.read(member))
        except zipfile.BadZipFile as exc:
            raise SourceError(f"{self.url}: not a zip file ({exc}); check the URL. {self._hint()}") from exc
        extra = {"zip_member": member, "release": self.release}
        return self._cases(text, self.url, sha256_bytes(data), f"{self.url}!{member}", extra)

    def _cases(self, text: str, origin: str, sha: str, where: str, extra: dict[str, Any]) -> pd.DataFrame:
        """Parse the CSV text of either mode; record the manifest entry."""
        df, skipped, outcomes = parse_scdb_csv(text, where, self.terms)
        if df.empty:
            raise SourceError(
                f"SCDB: no case in terms {self.terms[0]}-{self.terms[-1]} in {where}; the release may end before "
                f"these terms (pick a newer release) or the file is not a case-centred SCDB CSV. "
                + self._hint()
            )
        self.skipped_by_reason, self.outcome_counts = skipped, outcomes
        self._record(origin, sha, len(df), terms=self.terms, skipped_by_reason=skipped, outcome_counts=outcomes, **extra)
        return df

    def _manifest_extra(self, table: pd.DataFrame) -> dict[str, Any]:
        return {"outcome_counts": dict(self.outcome_counts)}


def fetch(
    *,
    snapshot_dir: str | os.PathLike[str] | None = None,
    session: Any = None,
    terms: Iterable[int] | None = None,
    release: str = DEFAULT_RELEASE,
    url: str | None = None,
    timeout: float = 120.0,
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The SCDB table for ``terms`` and its manifest (the ``fetch_scdb`` rule).

    Returns ``(table, {"sources": [record], "skipped_by_reason": {...}, "outcome_counts": {...}})``.
    Raises :class:`SourceError` when the release cannot be read.
    """
    reader = SCDBCaseReader(terms, release=release, url=url, session=session, snapshot_dir=snapshot_dir, timeout=timeout)
    return reader.fetch()
