"""The ``scdb`` reader: the case-centred release, downloaded or from a snapshot (:mod:`anachron.sources.scdb`)."""

from __future__ import annotations

import io
import os
import zipfile
from pathlib import Path
from typing import Any, Iterable

import pandas as pd

from anachron.io import sha256_bytes, sha256_file
from anachron.sources.base import SourceError, SourceReader, find_snapshot_files
from anachron.sources.scdb.case_csv import parse_scdb_csv
from anachron.sources.scdb.layout import DEFAULT_RELEASE, DEFAULT_TERMS, SCDB_URL_TEMPLATE, SNAPSHOT_PATTERN


def _decode(data: bytes) -> str:
    """SCDB files have been released in UTF-8 and in Windows-1252; accept both."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("cp1252", errors="replace")


class SCDBCaseReader(SourceReader):
    """Case-centred SCDB rows (outcome, decision date) for a set of terms.

    Parameters
    ----------
    terms:
        October Terms to keep (default :data:`~anachron.sources.scdb.layout.DEFAULT_TERMS`;
        None in :func:`fetch` keeps the default).
    release, url:
        Live download: ``url`` or, when None,
        :data:`~anachron.sources.scdb.layout.SCDB_URL_TEMPLATE` for ``release``.
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
