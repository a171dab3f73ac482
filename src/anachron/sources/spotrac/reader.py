"""The ``nhl`` reader: NHL free-agent signings from Spotrac, live or from a snapshot (:mod:`anachron.sources.spotrac`)."""

from __future__ import annotations

import datetime as dt
import logging
import os
import time
from collections import Counter
from pathlib import Path
from typing import Any, Iterable, Mapping

import pandas as pd

from anachron.sources.base import SourceReader, find_snapshot_files
from anachron.sources.spotrac.contracts import ROW_COLUMNS, signings_from_rows
from anachron.sources.spotrac.free_agent_csv import read_free_agent_csv
from anachron.sources.spotrac.layout import SNAPSHOT_PATTERN, SOURCE, URL_TEMPLATE
from anachron.sources.spotrac.pages import parse_free_agent_table

log = logging.getLogger(__name__)


class NHLSigningsReader(SourceReader):
    """NHL free-agent signings (one ``signings`` table), live from Spotrac or from a snapshot.

    Parameters:
        years: free-agency years to fetch live (default 2017 through last year); in
            snapshot mode, rows of other years are left out (None keeps all).
        session: HTTP session (tests replay recorded pages); None builds one with retries.
        snapshot_dir: directory with :data:`~anachron.sources.spotrac.layout.SNAPSHOT_PATTERN`;
            None falls back to ``$ANACHRON_SNAPSHOT_DIR`` and then to live fetching.
        implausible_aav: "recompute" (default) or "drop"
            (:func:`~anachron.sources.spotrac.aav.check_aav`).
        fa_opening_dates: ``{year: ISO date}`` overriding the July 1 fallback.
        url_template: the page URL with ``{year}``.
        pause_s: seconds to wait between live pages.

    After :meth:`read`: :attr:`manifest`, :attr:`skipped_by_reason`,
    :attr:`repaired_by_reason`.
    """

    source = SOURCE
    snapshot_layout = SNAPSHOT_PATTERN

    def __init__(
        self,
        years: Iterable[int] | None = None,
        *,
        session: Any = None,
        snapshot_dir: str | os.PathLike[str] | None = None,
        implausible_aav: str = "recompute",
        fa_opening_dates: Mapping[Any, str] | None = None,
        url_template: str = URL_TEMPLATE,
        pause_s: float = 0.0,
    ) -> None:
        super().__init__(session=session, snapshot_dir=snapshot_dir)
        self.years = None if years is None else sorted({int(y) for y in years})
        if implausible_aav not in ("recompute", "drop"):
            raise ValueError(f"implausible_aav must be 'recompute' or 'drop', got {implausible_aav!r}")
        self.implausible_aav = implausible_aav
        self.fa_opening_dates = dict(fa_opening_dates or {})
        self.url_template = url_template
        self.pause_s = float(pause_s)
        self.skipped_by_reason: Counter = Counter()
        self.repaired_by_reason: Counter = Counter()

    def _signings(self, rows: pd.DataFrame) -> pd.DataFrame:
        """Check and de-duplicate the rows of either mode; returns the ``signings`` table."""
        table, skipped, repaired = signings_from_rows(
            rows, implausible_aav=self.implausible_aav, fa_opening_dates=self.fa_opening_dates
        )
        self.skipped_by_reason = Counter({k: int(v) for k, v in sorted(skipped.items()) if v})
        self.repaired_by_reason = Counter({k: int(v) for k, v in sorted(repaired.items()) if v})
        log.info("NHL signings: %d (skipped %s, repaired %s)", len(table), dict(skipped), dict(repaired))
        return table

    def _manifest_extra(self, table: pd.DataFrame) -> dict[str, Any]:
        return {
            "repaired_by_reason": dict(self.repaired_by_reason),
            "implausible_aav": self.implausible_aav,
            "date_rules": {k: int(v) for k, v in table["date_rule"].value_counts().items()},
            "rows": int(len(table)),
        }

    def _read_live(self, session: Any) -> pd.DataFrame:
        years = self.years or list(range(2017, dt.date.today().year))
        frames = []
        for i, year in enumerate(years):
            url = self.url_template.format(year=year)
            resp = self._get(session, url, what=f"Spotrac NHL free agents {year}")
            rows = parse_free_agent_table(resp.content, year, url)
            frames.append(rows)
            self._record_bytes(url, resp.content, len(rows), year=year)
            if self.pause_s and i + 1 < len(years):
                time.sleep(self.pause_s)
        return self._signings(pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=ROW_COLUMNS))

    def _read_snapshot(self, snap: Path) -> pd.DataFrame:
        frames = []
        for path in find_snapshot_files(snap, SNAPSHOT_PATTERN):
            rows = read_free_agent_csv(path, path.relative_to(snap).as_posix(), self.years)
            frames.append(rows)
            self._record_file(path, len(rows))
        return self._signings(pd.concat(frames, ignore_index=True))


def fetch(
    *, snapshot_dir: str | os.PathLike[str] | None = None, session: Any = None, **params: Any
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The ``nhl`` source: NHL free-agent signings and their manifest.

    ``params`` are :class:`NHLSigningsReader` keyword arguments (``years``,
    ``implausible_aav``, ``fa_opening_dates``, ``url_template``, ``pause_s``).

    Returns:
        ``(signings, manifest)``: the table of
        :data:`~anachron.sources.signings.SIGNING_COLUMNS` and ``{"sources": [...],
        "skipped_by_reason": {...}, "repaired_by_reason": {...}, "implausible_aav": mode,
        "date_rule": ..., "rows": n}``.

    Raises:
        SourceError: when a page or file cannot be fetched or read (a missing column names
            the file and the column).
        ValueError: for a bad ``implausible_aav``; TypeError for an unknown parameter.
    """
    return NHLSigningsReader(session=session, snapshot_dir=snapshot_dir, **params).fetch()
