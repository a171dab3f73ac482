"""The ``nba`` reader: NBA free-agent signings, live or from a snapshot (:mod:`anachron.sources.prosports`)."""

from __future__ import annotations

import datetime as dt
import logging
import os
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pandas as pd

from anachron.sources.base import SourceError, SourceReader, find_snapshot_files
from anachron.sources.prosports.contract_lists import merge_contract_lists, read_contract_list
from anachron.sources.prosports.contracts import contracts_from_transactions, dedup_player_year, read_transactions
from anachron.sources.prosports.layout import (
    CONTRACTS_PATTERN,
    PAGE_SIZE,
    SEARCH_URL,
    SEASONS_FILE,
    SNAPSHOT_LAYOUT,
    SOURCE,
    TRANSACTIONS_PATTERN,
)
from anachron.sources.prosports.pages import parse_search_page
from anachron.sources.prosports.rosters import SeasonTeams, infer_sign_and_trades, read_season_rosters
from anachron.sources.prosports.skips import DUP_PLAYER_YEAR, DUP_ROW
from anachron.sources.signings import finish_signings

log = logging.getLogger(__name__)


class NBASigningsReader(SourceReader):
    """NBA free-agent signings (one ``signings`` table), live or from a snapshot.

    Parameters:
        start, end: ISO dates of the transactions to fetch live (inclusive). The default
            start, 2016-07-01, gives three offseasons of history before the 2019 signings
            (previous teams); the default end is today. Snapshot mode reads whole files.
        session: HTTP session (tests pass one replaying recorded pages); None builds one
            with retries.
        snapshot_dir: directory with :data:`~anachron.sources.prosports.layout.SNAPSHOT_LAYOUT`; None falls back to
            ``$ANACHRON_SNAPSHOT_DIR`` and then to live fetching.
        sign_and_trade_days, status_lookback_days: see
            :func:`~anachron.sources.prosports.contracts.contracts_from_transactions`.
        use_contract_lists: merge ``nba/actual_contracts_*.csv`` (snapshot mode).
        use_season_rosters: use ``nba/bbref_player_season_info.csv`` (snapshot mode) for
            the teams of contract-list signings and to infer sign-and-trades
            (:func:`~anachron.sources.prosports.rosters.infer_sign_and_trades`).
        pause_s: seconds to wait between live pages.

    After :meth:`read`: :attr:`manifest` (provenance records), :attr:`skipped_by_reason`
    (Counter of skipped notes and rows, duplicates included) and :attr:`duplicates`
    (``{"duplicate_row": n, "duplicate_player_year": n, "merged_contract_list": n}``).
    """

    source = SOURCE
    snapshot_layout = SNAPSHOT_LAYOUT

    def __init__(
        self,
        start: str = "2016-07-01",
        end: str | None = None,
        *,
        session: Any = None,
        snapshot_dir: str | os.PathLike[str] | None = None,
        sign_and_trade_days: int = 90,
        status_lookback_days: int = 183,
        use_contract_lists: bool = True,
        use_season_rosters: bool = True,
        base_url: str = SEARCH_URL,
        max_pages: int = 5000,
        pause_s: float = 0.0,
    ) -> None:
        super().__init__(session=session, snapshot_dir=snapshot_dir)
        self.start = pd.Timestamp(start).date().isoformat()
        self.end = pd.Timestamp(end).date().isoformat() if end else dt.date.today().isoformat()
        if self.end < self.start:
            raise ValueError(f"end {self.end} is before start {self.start}")
        self.sign_and_trade_days = int(sign_and_trade_days)
        self.status_lookback_days = int(status_lookback_days)
        self.use_contract_lists = bool(use_contract_lists)
        self.use_season_rosters = bool(use_season_rosters)
        self.base_url = base_url
        self.max_pages = int(max_pages)
        self.pause_s = float(pause_s)
        self.skipped_by_reason: Counter = Counter()
        self.duplicates: dict[str, int] = {}
        self.inferred_sign_and_trades = 0

    def _read_live(self, session: Any) -> pd.DataFrame:
        """All player-movement transactions dated ``start..end`` (inclusive) from the site.

        Pages are requested with ``start=0, 25, 50, ...`` until the stated page count is
        reached, or (no count stated) until a page without rows or without a "Next" link
        that is shorter than :data:`~anachron.sources.prosports.layout.PAGE_SIZE`; one
        manifest record per page (URL, sha256, rows). Raises :class:`SourceError` on HTTP
        failure, a page without the results table, or ``max_pages`` exceeded.
        """
        params = {
            "Player": "",
            "Team": "",
            "BeginDate": self.start,
            "EndDate": self.end,
            "PlayerMovementChkBx": "yes",
            "Submit": "Search",
        }
        frames = []
        for page in range(self.max_pages):
            params["start"] = str(page * PAGE_SIZE)
            what = f"prosportstransactions NBA search {self.start}..{self.end} (rows from {params['start']})"
            resp = self._get(session, self.base_url, params=params, what=what)
            url = resp.url or self.base_url
            rows, n_pages, next_url = parse_search_page(resp.content, url)
            self._record_bytes(url, resp.content, len(rows), page=page + 1)
            frames.append(rows)
            if n_pages is not None:
                if page + 1 >= n_pages:
                    break
            elif rows.empty or (next_url is None and len(rows) < PAGE_SIZE):
                break
            if self.pause_s:
                time.sleep(self.pause_s)
        else:
            raise SourceError(
                f"prosportstransactions: more than {self.max_pages} pages for {self.start}..{self.end}; "
                "narrow the dates or raise max_pages."
            )
        tx = (
            pd.concat(frames, ignore_index=True)
            if frames
            else pd.DataFrame(columns=["date", "team", "player", "notes", "origin"])
        )
        return self._signings(tx, pd.DataFrame(), SeasonTeams(None), Counter())

    def _signings(self, tx: pd.DataFrame, lists: pd.DataFrame, seasons: SeasonTeams, skipped: Counter) -> pd.DataFrame:
        """Parse, merge and de-duplicate (both modes); returns the ``signings`` table."""
        signings, tx_skipped = contracts_from_transactions(
            tx, sign_and_trade_days=self.sign_and_trade_days, status_lookback_days=self.status_lookback_days
        )
        skipped.update(tx_skipped)
        self.inferred_sign_and_trades = infer_sign_and_trades(signings, tx, seasons)
        signings, merged = merge_contract_lists(signings, lists, tx, seasons)
        signings, dups = dedup_player_year(signings)
        skipped[DUP_PLAYER_YEAR] += dups + merged
        self.duplicates = {
            DUP_ROW: int(skipped[DUP_ROW]),
            DUP_PLAYER_YEAR: int(dups),
            "merged_contract_list": int(merged),
        }
        self.skipped_by_reason = Counter({k: int(v) for k, v in sorted(skipped.items()) if v})
        out = finish_signings(signings)
        log.info("NBA signings: %d (skipped %s)", len(out), dict(self.skipped_by_reason))
        return out

    def _manifest_extra(self, table: pd.DataFrame) -> dict[str, Any]:
        return {
            "duplicates": self.duplicates,
            "sign_and_trades": {
                "flagged": int(table["sign_and_trade"].sum()),
                "inferred_from_rosters": self.inferred_sign_and_trades,
            },
            "rows": int(len(table)),
        }

    def _read_snapshot(self, snap: Path) -> pd.DataFrame:
        frames, skipped = [], Counter()
        for path in find_snapshot_files(snap, TRANSACTIONS_PATTERN):
            rows = read_transactions(path, path.relative_to(snap).as_posix())
            frames.append(rows)
            self._record_file(path, len(rows), kind="transactions")
        tx = pd.concat(frames, ignore_index=True)
        lists = pd.DataFrame()
        if self.use_contract_lists:
            parts = []
            for path in sorted(p for p in snap.glob(CONTRACTS_PATTERN) if p.is_file()):
                rel = path.relative_to(snap).as_posix()
                rows, sk = read_contract_list(path, rel)
                skipped.update(sk)
                parts.append(rows)
                self._record_file(path, len(rows), kind="contract_list")
            lists = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
        seasons = SeasonTeams(None)
        season_path = snap / SEASONS_FILE
        if self.use_season_rosters and season_path.is_file():
            table = read_season_rosters(season_path, pd.to_datetime(tx["date"], errors="coerce").min())
            seasons = SeasonTeams(table)
            self._record_file(season_path, len(table), kind="season_rosters")
        return self._signings(tx, lists, seasons, skipped)


def fetch(
    *, snapshot_dir: str | os.PathLike[str] | None = None, session: Any = None, **params: Any
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The ``nba`` source: NBA free-agent signings and their manifest.

    ``params`` are :class:`NBASigningsReader` keyword arguments (``start``, ``end``,
    ``sign_and_trade_days``, ``status_lookback_days``, ``use_contract_lists``,
    ``use_season_rosters``, ``base_url``, ``max_pages``, ``pause_s``).

    Returns:
        ``(signings, manifest)``: the table of :data:`~anachron.sources.signings.SIGNING_COLUMNS` and
        ``{"sources": [...], "skipped_by_reason": {...}, "duplicates": {...}, "rows": n}``.

    Raises:
        SourceError: when a page or file cannot be fetched or read (a missing column names
            the file and the column).
        TypeError: for an unknown parameter.
    """
    return NBASigningsReader(session=session, snapshot_dir=snapshot_dir, **params).fetch()
