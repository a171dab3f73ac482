"""The ``edgar`` reader: SEC XBRL company facts, point in time, live or from a snapshot
(:mod:`anachron.sources.edgar`)."""

from __future__ import annotations

import logging
import os
import time
from collections import Counter
from pathlib import Path
from typing import Any, Iterable, Iterator

import pandas as pd

from anachron.io import sha256_bytes, sha256_file, utc_now
from anachron.sources.base import SourceReader, SourceError, find_snapshot_files
from anachron.sources.edgar.companyfacts import parse_cik, parse_companyfacts
from anachron.sources.edgar.fourth_quarters import derive_q4
from anachron.sources.edgar.layout import (
    CIK_FILE,
    COMPANYFACTS_URL,
    DEFAULT_CIKS,
    MIN_INTERVAL,
    SNAPSHOT_LAYOUT,
    SNAPSHOT_PATTERN,
    SOURCE,
    USER_AGENT_ENV,
)
from anachron.sources.edgar.revisions import add_revisions
from anachron.sources.edgar.user_agent import sec_user_agent

log = logging.getLogger(__name__)


class CompanyFactsReader(SourceReader):
    """All XBRL facts of the given companies, one row per filing's report (point in time).

    Parameters
    ----------
    ciks:
        Central index keys (ints or strings, with or without ``CIK`` and zero padding).
        ``None``: every ``edgar/companyfacts/CIK##########.json`` in the snapshot; live,
        :data:`DEFAULT_CIKS`.
    session:
        ``requests.Session`` for live reads (tests inject one replaying recordings);
        ``None`` builds one with retries.
    snapshot_dir:
        Directory holding ``edgar/companyfacts/``; ``None`` falls back to
        ``$ANACHRON_SNAPSHOT_DIR``, then to the live API.
    user_agent:
        SEC User-Agent with contact e-mail (live only); default ``$ANACHRON_SEC_USER_AGENT``.
    min_interval:
        Seconds between live requests.
    derive_q4:
        Add derived fourth quarters (:func:`~anachron.sources.edgar.fourth_quarters.derive_q4`; default True).

    After :meth:`read`: :attr:`manifest` (one :func:`manifest_entry` per company file, with
    ``cik`` and ``entity_name``) and :attr:`skipped_by_reason`.

    Raises :class:`SourceError` from :meth:`read` for a missing User-Agent (live), an HTTP
    failure (404 = unknown CIK), a missing snapshot file or a malformed file (naming the file
    and the key); ``ValueError`` for a malformed CIK.
    """

    source = SOURCE
    snapshot_layout = SNAPSHOT_LAYOUT

    def __init__(
        self,
        ciks: Iterable[int | str] | None = None,
        *,
        session: Any = None,
        snapshot_dir: str | os.PathLike[str] | None = None,
        user_agent: str | None = None,
        min_interval: float = MIN_INTERVAL,
        timeout: float = 60.0,
        derive_q4: bool = True,
    ) -> None:
        self.ciks = None if ciks is None else list(dict.fromkeys(parse_cik(c) for c in ciks))
        if self.ciks is not None and not self.ciks:
            raise ValueError("CompanyFactsReader needs at least one CIK")
        super().__init__(session=session, snapshot_dir=snapshot_dir)
        self.user_agent = user_agent
        self.min_interval = float(min_interval)
        self.timeout = timeout
        self.derive_q4 = bool(derive_q4)

    def _read_snapshot(self, snap: Path) -> pd.DataFrame:
        return self._facts(self._snapshot_docs(snap))

    def _read_live(self, session: Any) -> pd.DataFrame:
        return self._facts(self._live_docs(session))

    def _manifest_extra(self, table: pd.DataFrame) -> dict[str, Any]:
        return {
            "rows": int(len(table)),
            "companies": int(table["cik"].nunique()),
            "revisions": int((table["revision"] > 0).sum()),
            "value_changing_revisions": int(table["value_changed"].sum()),
            "derived_q4": int(table["derived"].sum()),
            "fetched_at": utc_now(),
        }

    def _facts(self, docs: Iterator[tuple[bytes, str, str, str]]) -> pd.DataFrame:
        """Parse the ``(data, name, origin, sha256)`` documents of either mode, add revision columns."""
        counts: Counter = Counter()
        frames = []
        for data, name, origin, sha in docs:
            df = parse_companyfacts(data, name, counts)
            frames.append(df)
            entity = df["entity_name"].iloc[0] if len(df) else ""
            cik = int(df["cik"].iloc[0]) if len(df) else None
            self._record(origin, sha, len(df), kind="companyfacts", cik=cik, entity_name=entity)
        facts = pd.concat(frames, ignore_index=True) if frames else parse_companyfacts({"cik": 1, "facts": {}}, "empty")
        facts["derived"] = False
        if self.derive_q4:
            derived = derive_q4(facts)
            if len(derived):
                facts = pd.concat([facts, derived], ignore_index=True)
        out = add_revisions(facts, counts)
        self.skipped_by_reason = {k: int(v) for k, v in sorted(counts.items()) if v}
        log.info(
            "EDGAR companyfacts: %d facts of %d companies; %d revisions, %d value-changing; skipped %s",
            len(out), len(frames), int((out["revision"] > 0).sum()), int(out["value_changed"].sum()), self.skipped_by_reason,
        )
        return out

    def _snapshot_docs(self, snap: Path) -> Iterator[tuple[bytes, str, str, str]]:
        if self.ciks is None:
            paths = [p for p in find_snapshot_files(snap, SNAPSHOT_PATTERN) if CIK_FILE.match(p.name)]
            if not paths:
                raise SourceError(f"no file named CIK##########.json under {str(snap / 'edgar' / 'companyfacts')!r}; {self._hint()}")
        else:
            paths = []
            for cik in self.ciks:
                path = snap / "edgar" / "companyfacts" / f"CIK{cik:010d}.json"
                if not path.is_file():
                    raise SourceError(
                        f"EDGAR companyfacts for CIK {cik}: {str(path)!r} not found in the snapshot directory; "
                        f"drop the CIK or {self._hint()}"
                    )
                paths.append(path)
        for path in paths:
            yield path.read_bytes(), str(path), f"snapshot:{path}", sha256_file(path)

    def _live_docs(self, session: Any) -> Iterator[tuple[bytes, str, str, str]]:
        ua = sec_user_agent(self.user_agent)
        headers = {"User-Agent": ua, "Accept-Encoding": "gzip, deflate"}
        last = 0.0
        for cik in self.ciks if self.ciks is not None else list(DEFAULT_CIKS):
            url = COMPANYFACTS_URL.format(cik=cik)
            wait = self.min_interval - (time.monotonic() - last)
            if wait > 0:
                time.sleep(wait)
            last = time.monotonic()
            response = self._get(
                session, url, headers=headers, what=f"EDGAR companyfacts for CIK {cik}", timeout=self.timeout, allow_status=(403, 404)
            )
            if response.status_code == 404:
                raise SourceError(f"EDGAR has no companyfacts for CIK {cik} ({url} returned 404); check the CIK (config ciks).")
            if response.status_code == 403:
                raise SourceError(
                    f"SEC refused {url} (403): it requires a descriptive User-Agent with a contact e-mail "
                    f"({USER_AGENT_ENV}) and at most 10 requests per second. {self._hint()}"
                )
            yield response.content, url, url, sha256_bytes(response.content)


def fetch(
    *,
    snapshot_dir: str | os.PathLike[str] | None = None,
    session: Any = None,
    ciks: Iterable[int | str] | None = None,
    user_agent: str | None = None,
    min_interval: float = MIN_INTERVAL,
    derive_q4: bool = True,
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The ``fetch_edgar`` entry point: all facts with revision columns, and a manifest.

    Returns ``(facts, manifest)``; ``facts`` as in :mod:`anachron.sources.edgar`, ``manifest`` =
    ``{"sources": [...], "skipped_by_reason": {...}, "rows": n, "revisions": rows with
    revision > 0, "value_changing_revisions": rows with value_changed, "derived_q4": derived
    fourth-quarter rows, "companies": n, "fetched_at": ...}``. The User-Agent is never written to the manifest.

    Raises:
        SourceError: see :class:`CompanyFactsReader`.
    """
    reader = CompanyFactsReader(
        ciks, session=session, snapshot_dir=snapshot_dir, user_agent=user_agent, min_interval=min_interval, derive_q4=derive_q4
    )
    return reader.fetch()
