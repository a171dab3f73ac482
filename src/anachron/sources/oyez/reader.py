"""The ``oyez`` reader: Supreme Court case documents, live or from a snapshot (:mod:`anachron.sources.oyez`)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Iterable

import pandas as pd

from anachron.io import sha256_bytes, sha256_file
from anachron.sources.base import SourceError, SourceReader, find_snapshot_files
from anachron.sources.oyez.case_document import parse_case
from anachron.sources.oyez.layout import DEFAULT_TERMS, OYEZ_API, SNAPSHOT_PATTERN
from anachron.sources.oyez.table import finish_cases
from anachron.sources.oyez.timeline import COURT_TZ


class OyezCaseReader(SourceReader):
    """Oyez case documents for a set of terms, as the ``cases`` table (:mod:`anachron.sources.oyez`).

    Parameters
    ----------
    terms:
        October Terms to read (default :data:`~anachron.sources.oyez.layout.DEFAULT_TERMS`). Snapshot files of other
        terms are ignored.
    session:
        ``requests.Session`` for live mode (tests inject one replaying recordings);
        ``None`` builds one with retries (:func:`anachron.sources.base.make_session`).
    snapshot_dir:
        Directory holding ``oyez/cases/{term}.{docket}.json``; ``None`` falls back to
        ``$ANACHRON_SNAPSHOT_DIR`` and then to the live API.
    base_url, timeout:
        Oyez API base URL and seconds per request.

    After :meth:`read`, :attr:`manifest` holds one provenance record and
    :attr:`skipped_by_reason` the rows dropped (no docket, bad term, duplicates).

    Raises :class:`SourceError` from :meth:`read` on an HTTP failure, an unreadable or
    malformed document (naming the file/URL and the missing key), or no case at all.
    """

    source = "oyez"
    snapshot_layout = SNAPSHOT_PATTERN

    def __init__(
        self,
        terms: Iterable[int] | None = None,
        *,
        session: Any = None,
        snapshot_dir: str | os.PathLike[str] | None = None,
        base_url: str = OYEZ_API,
        timeout: float = 30.0,
    ) -> None:
        self.terms = sorted({int(t) for t in (terms if terms is not None else DEFAULT_TERMS)})
        if not self.terms:
            raise ValueError("OyezCaseReader needs at least one term")
        super().__init__(session=session, snapshot_dir=snapshot_dir)
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout

    def _cases(self, rows: list[dict[str, Any]], origin: str, sha: str, extra: dict[str, Any]) -> pd.DataFrame:
        """The ``cases`` table from the parsed documents of either mode, and its record."""
        df, skipped = finish_cases(rows)
        self.skipped_by_reason = skipped
        if df.empty:
            raise SourceError(
                f"Oyez: no cases for terms {self.terms[0]}-{self.terms[-1]} from {origin}. "
                + self._hint()
            )
        notes = df["oyez_outcome_note"].value_counts().to_dict()
        self._record(
            origin,
            sha,
            len(df),
            terms=self.terms,
            skipped_by_reason=skipped,
            oyez_outcome_notes={str(k): int(v) for k, v in notes.items()},
            vote_checks={str(k).split(":")[0]: int(v) for k, v in df["vote_check"].str.split(":").str[0].value_counts().items()},
            timezone=str(COURT_TZ),
            **extra,
        )
        return df

    # -- snapshot -----------------------------------------------------------------------
    def _read_snapshot(self, snap: Path) -> pd.DataFrame:
        files = find_snapshot_files(snap, SNAPSHOT_PATTERN)
        wanted = {str(t) for t in self.terms}
        rows, digests = [], []
        for path in files:
            if path.name.split(".", 1)[0] not in wanted:
                continue
            try:
                doc = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
                raise SourceError(f"{path}: could not read as JSON ({exc}); replace the file with an Oyez case document.") from exc
            digests.append(f"{path.name} {sha256_file(path)}")
            row = parse_case(doc, str(path))
            if row["term"] is not None and str(row["term"]) not in wanted:
                continue
            rows.append(row)
        origin = f"snapshot:{snap / 'oyez' / 'cases'}"
        extra = {"files": len(digests), "sha256_of": "sorted '<file> <sha256>' lines of the files read"}
        return self._cases(rows, origin, sha256_bytes("\n".join(sorted(digests)).encode("utf-8")), extra)

    # -- live ---------------------------------------------------------------------------
    def _read_live(self, session: Any) -> pd.DataFrame:
        rows, digests = [], []
        for term in self.terms:
            list_url = f"{self.base_url}/cases"
            resp = self._get(
                session,
                list_url,
                params={"filter": f"term:{term}", "per_page": 0},
                what=f"the Oyez case list of term {term}",
                timeout=self.timeout,
            )
            try:
                listing = resp.json()
            except ValueError as exc:
                raise SourceError(f"{resp.url}: the Oyez case list is not JSON ({exc}). {self._hint()}") from exc
            if not isinstance(listing, list):
                raise SourceError(f"{resp.url}: expected a JSON list of cases, got {type(listing).__name__}. {self._hint()}")
            digests.append(f"{resp.url} {sha256_bytes(resp.content)}")
            for item in listing:
                if not isinstance(item, dict) or not item.get("docket_number"):
                    continue
                url = item.get("href") or f"{self.base_url}/cases/{term}/{item['docket_number']}"
                doc_resp = self._get(session, url, what=f"Oyez case {term}/{item['docket_number']}", timeout=self.timeout)
                try:
                    doc = doc_resp.json()
                except ValueError as exc:
                    raise SourceError(f"{url}: the Oyez case document is not JSON ({exc}). {self._hint()}") from exc
                digests.append(f"{url} {sha256_bytes(doc_resp.content)}")
                rows.append(parse_case(doc, url))
        origin = f"{self.base_url}/cases?filter=term:{{term}}&per_page=0"
        extra = {"requests": len(digests), "sha256_of": "sorted '<url> <sha256 of body>' lines"}
        return self._cases(rows, origin, sha256_bytes("\n".join(sorted(digests)).encode("utf-8")), extra)


def fetch(
    *,
    snapshot_dir: str | os.PathLike[str] | None = None,
    session: Any = None,
    terms: Iterable[int] | None = None,
    base_url: str = OYEZ_API,
    timeout: float = 30.0,
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The ``cases`` table of the given terms, and its manifest (the ``fetch_oyez`` rule).

    Returns ``(cases, {"sources": [record], "skipped_by_reason": {...}})``; see
    :mod:`anachron.sources.oyez` for the columns. Raises :class:`SourceError` when nothing
    can be read.
    """
    return OyezCaseReader(terms, session=session, snapshot_dir=snapshot_dir, base_url=base_url, timeout=timeout).fetch()
