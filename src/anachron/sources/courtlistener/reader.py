"""The ``courtlistener`` reader: appellate opinions with a disposition (live), or listings (snapshot)."""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path
from typing import Any, Callable, Iterable

import pandas as pd

from anachron.sources.base import SourceReader, find_snapshot_files, make_session, read_csv_checked
from anachron.sources.courtlistener.client import CourtListenerClient
from anachron.sources.courtlistener.layout import API_BASE, DEFAULT_COURTS, LISTING_COLUMNS, SNAPSHOT_PATTERN, TOKEN_ENV
from anachron.sources.courtlistener.listings import listing_rows
from anachron.sources.courtlistener.opinions import read_opinions
from anachron.sources.courtlistener.precedential import normalize_precedential_status
from anachron.sources.courtlistener.table import empty_table, finish_table
from anachron.sources.pdf import MAX_CHARS, MAX_PDF_PAGES, PAGE_TIMEOUT

log = logging.getLogger(__name__)

#: Note in the manifest when no token is configured.
NO_TOKEN_NOTE = "no token configured"


class CourtListenerReader(SourceReader):
    """Federal appellate opinions with a disposition label (live) or listings (snapshot).

    Parameters
    ----------
    session, snapshot_dir:
        As for every reader (:class:`~anachron.sources.base.SourceReader`). Without an
        injected session, :func:`~anachron.sources.base.make_session` with no adapter
        retries: :class:`~anachron.sources.courtlistener.client.CourtListenerClient` retries
        itself, recording its waits.
    token_env:
        Environment variable holding the API token, read when :meth:`read` runs live;
        without a token the table is empty and the manifest says ``"no token configured"``.
    courts:
        Court ids (lower-cased; at least one, else ``ValueError``).
    filed_after, filed_before:
        ISO dates bounding ``date_filed`` (inclusive; None = open).
    max_cases, order_by:
        Live: the first ``max_cases`` search hits in this order.
    max_pdf_pages, max_chars, pdf_page_timeout:
        Live: how much of each opinion PDF is read, and the seconds one page may take
        (:func:`anachron.sources.pdf.read_pdf_pages`; None = no limit). The PDF is read only
        when the opinion carries no text
        (:data:`~anachron.sources.courtlistener.opinion_text.TEXT_SOURCES`).
    max_retries, timeout, base_url, sleep:
        Passed to :class:`~anachron.sources.courtlistener.client.CourtListenerClient`.

    After :meth:`read`: :attr:`manifest` and :attr:`skipped_by_reason`; the manifest of
    :meth:`fetch` adds ``filtered_out`` (snapshot), ``stats`` and ``dispositions`` (live) or
    ``note`` (no token), and, when there are any, ``unknown_precedential_status`` (raw value
    -> rows; those rows have ``precedential_status`` null) and ``pdf_page_flags`` (flag ->
    pages: blank, timeout, error).
    """

    source = "courtlistener"
    snapshot_layout = SNAPSHOT_PATTERN

    def __init__(
        self,
        *,
        session: Any = None,
        snapshot_dir: str | os.PathLike[str] | None = None,
        token_env: str = TOKEN_ENV,
        courts: Iterable[str] = DEFAULT_COURTS,
        filed_after: str | None = "2017-01-01",
        filed_before: str | None = "2024-12-31",
        max_cases: int = 100,
        order_by: str = "citeCount desc",
        max_pdf_pages: int = MAX_PDF_PAGES,
        max_chars: int = MAX_CHARS,
        max_retries: int = 5,
        timeout: float = 60.0,
        base_url: str = API_BASE,
        sleep: Callable[[float], None] = time.sleep,
        pdf_page_timeout: float | None = PAGE_TIMEOUT,
    ) -> None:
        self.courts = [str(c).strip().lower() for c in courts]
        if not self.courts:
            raise ValueError("courtlistener.fetch needs at least one court")
        super().__init__(session=session, snapshot_dir=snapshot_dir)
        self.token_env = token_env
        self.filed_after = filed_after
        self.filed_before = filed_before
        self.max_cases = max_cases
        self.order_by = order_by
        self.max_pdf_pages = max_pdf_pages
        self.max_chars = max_chars
        self.max_retries = max_retries
        self.timeout = timeout
        self.base_url = base_url
        self.sleep = sleep
        self.pdf_page_timeout = pdf_page_timeout
        self._extra: dict[str, Any] = {}
        self._unknown_status: dict[str, int] = {}
        self._pdf_flags: dict[str, int] = {}

    def _status(self, raw: Any) -> str | None:
        """:func:`~anachron.sources.courtlistener.precedential.normalize_precedential_status`; an
        unrecognised value is logged (once) and counted."""
        status, recognised = normalize_precedential_status(raw)
        if not recognised:
            value = str(raw).strip()
            if value not in self._unknown_status:
                log.warning("CourtListener: unrecognised precedential status %r (kept as null)", value)
            self._unknown_status[value] = self._unknown_status.get(value, 0) + 1
        return status

    def _live_session(self) -> Any:
        """The injected session, else :func:`make_session` with no adapter retries (the
        client's own back-off is the only retry layer)."""
        return self.session if self.session is not None else make_session(retries=0)

    def _manifest_extra(self, table: pd.DataFrame) -> dict[str, Any]:
        extra = dict(self._extra)
        if self._unknown_status:
            extra["unknown_precedential_status"] = dict(sorted(self._unknown_status.items()))
        if self._pdf_flags:
            extra["pdf_page_flags"] = dict(sorted(self._pdf_flags.items()))
        return extra

    def _read_snapshot(self, snap: Path) -> pd.DataFrame:
        self._unknown_status, self._pdf_flags = {}, {}
        courts, lo, hi = set(self.courts), self.filed_after, self.filed_before
        path = find_snapshot_files(snap, SNAPSHOT_PATTERN)[-1]
        raw = read_csv_checked(path, LISTING_COLUMNS, dtype="str", keep_default_na=False)
        rows, skipped, filtered = listing_rows(raw.to_dict("records"), courts=courts, lo=lo, hi=hi, status=self._status)
        df = finish_table(rows, skipped)
        self._record_file(
            path,
            len(df),
            courts=sorted(courts),
            filed_after=lo,
            filed_before=hi,
            skipped_by_reason=skipped,
            filtered_out=filtered,
            note="listings without opinion text or disposition (rows have disposition null)",
        )
        self.skipped_by_reason = skipped
        self._extra = {"filtered_out": filtered}
        return df

    def _read_live(self, session: Any) -> pd.DataFrame:
        self._unknown_status, self._pdf_flags = {}, {}
        token = os.environ.get(self.token_env, "").strip()
        if not token:
            log.info(
                "CourtListener: %s; set the environment variable %s to fetch appellate opinions", NO_TOKEN_NOTE, self.token_env
            )
            self.skipped_by_reason = {}
            self._extra = {"note": f"{NO_TOKEN_NOTE} (environment variable {self.token_env} is unset or empty)"}
            return empty_table()
        client = CourtListenerClient(
            token, session=session, base_url=self.base_url, sleep=self.sleep, max_retries=self.max_retries, timeout=self.timeout
        )
        df, skipped, sha = read_opinions(
            client,
            courts=self.courts,
            filed_after=self.filed_after,
            filed_before=self.filed_before,
            max_cases=self.max_cases,
            order_by=self.order_by,
            max_pdf_pages=self.max_pdf_pages,
            max_chars=self.max_chars,
            pdf_page_timeout=self.pdf_page_timeout,
            status=self._status,
            pdf_flags=self._pdf_flags,
        )
        dispositions = {str(k): int(v) for k, v in df["disposition"].fillna("none").value_counts().items()}
        origin = f"{client.base_url}/search/?type=o&court={' '.join(self.courts)}&order_by={self.order_by}"
        self._record(
            origin,
            sha,
            len(df),
            courts=self.courts,
            filed_after=self.filed_after,
            filed_before=self.filed_before,
            max_cases=self.max_cases,
            max_pdf_pages=self.max_pdf_pages,
            max_chars=self.max_chars,
            stats=dict(client.stats),
            dispositions=dispositions,
            skipped_by_reason=skipped,
            sha256_of="table without the text column as CSV, then sorted '<pdf url> <sha256>' lines",
        )
        self.skipped_by_reason = skipped
        self._extra = {"stats": dict(client.stats), "dispositions": dispositions}
        return df


def fetch(
    *, snapshot_dir: str | os.PathLike[str] | None = None, session: Any = None, **params: Any
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Appellate opinions with dispositions (live) or listings (snapshot), and a manifest.

    ``params`` are :class:`CourtListenerReader` keyword arguments (``token_env``,
    ``courts``, ``filed_after``, ``filed_before``, ``max_cases``, ``order_by``,
    ``max_pdf_pages``, ``max_chars``, ``max_retries``, ``timeout``, ``base_url``, ``sleep``).

    Snapshot (``snapshot_dir`` or ``$ANACHRON_SNAPSHOT_DIR``): the listings CSV filtered to
    ``courts`` and ``[filed_after, filed_before]``, disposition null. Live: needs a token
    in ``$<token_env>``; without one returns
    :func:`~anachron.sources.courtlistener.table.empty_table` and a manifest with
    ``"note": "no token configured"`` (no error). See :mod:`anachron.sources.courtlistener`
    for columns.

    Returns ``(table, {"sources": [...], "skipped_by_reason": {...}, ...})``; the live
    manifest adds ``stats`` (requests, pages, 429 retries, seconds waited) and
    ``dispositions`` (counts). Raises :class:`~anachron.sources.base.SourceError` on HTTP
    failures after retries, a rejected token, or a snapshot file with a missing column
    (naming file and column); ``ValueError`` for an empty ``courts``; ``TypeError`` for an
    unknown parameter.
    """
    return CourtListenerReader(session=session, snapshot_dir=snapshot_dir, **params).fetch()
