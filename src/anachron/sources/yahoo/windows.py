"""The prices the stock windows need: every S&P 500 member of any window's universe, over all windows."""

from __future__ import annotations

import os
from typing import Any

import pandas as pd

from anachron.sources.yahoo.reader import YahooPriceReader


def fetch_window_prices(
    membership: pd.DataFrame,
    windows: list[dict[str, Any]],
    *,
    snapshot_dir: str | os.PathLike[str] | None = None,
    session: Any = None,
    margin_days: int = 10,
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Daily prices of every S&P 500 member of any window's universe (as of its cutoff).

    The date range spans all windows plus ``margin_days`` on each side: the first wanted
    day is the earliest start - ``margin_days``, the last wanted day the latest end +
    ``margin_days``, and the reader's exclusive ``end`` is that last day + 1 (so with
    ``margin_days=0`` the last window's end day is still read).

    Returns:
        (long price frame as :meth:`YahooPriceReader.read`, the manifest of
        :meth:`~anachron.sources.base.SourceReader.fetch`: ``sources``,
        ``skipped_by_reason``, ``price_jumps``).

    Raises:
        SourceError: when no prices can be fetched or read.
    """
    from anachron.sources.index_membership import members_as_of

    tickers: set[str] = set()
    for w in windows:
        cutoff = pd.Timestamp(w["start"]) - pd.Timedelta(days=1)
        tickers.update(members_as_of(membership, cutoff))
    if margin_days < 0:
        raise ValueError(f"margin_days must be >= 0, got {margin_days}")
    start = min(pd.Timestamp(w["start"]) for w in windows) - pd.Timedelta(days=margin_days)
    last_day = max(pd.Timestamp(w["end"]) for w in windows) + pd.Timedelta(days=margin_days)
    reader = YahooPriceReader(sorted(tickers), start, last_day + pd.Timedelta(days=1), session=session, snapshot_dir=snapshot_dir)
    return reader.fetch()
