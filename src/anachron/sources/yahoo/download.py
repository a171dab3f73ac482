"""The live download: one ``yfinance.download`` call, its per-ticker errors collected from its log."""

from __future__ import annotations

import logging
import warnings
from typing import Any

import pandas as pd

from anachron.sources.base import SourceError


class _LogCollector(logging.Handler):
    """Collects yfinance's ERROR log records (it logs per-ticker failures instead of raising)."""

    def __init__(self) -> None:
        super().__init__(level=logging.ERROR)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:  # pragma: no cover - trivial
        try:
            self.messages.append(record.getMessage())
        except Exception:
            pass


def yfinance_download(
    symbols: list[str], start: pd.Timestamp, end: pd.Timestamp, *, session: Any, timeout: float, hint: str
) -> tuple[pd.DataFrame, list[str], str]:
    """Daily bars of Yahoo ``symbols`` over ``[start, end)`` through ``yfinance.download``.

    Called with ``auto_adjust=False`` (raw ``Close`` and ``Adj Close`` both kept), no
    actions, no threads, ``multi_level_index=True``; ``session`` is handed to yfinance
    (``None``: it builds its own). ``hint`` ends the error message (the snapshot fix).

    Returns ``(data, messages, yfinance version)``: yfinance's wide frame, the ERROR messages
    it logged meanwhile (it logs per-ticker failures instead of raising) and its
    ``__version__`` (``"unknown"`` when it has none).

    Raises :class:`SourceError` when the call raises (rate limit, bad session, ...);
    ``ImportError`` when yfinance is not installed.
    """
    import yfinance as yf

    yf_logger = logging.getLogger("yfinance")
    collector = _LogCollector()
    yf_logger.addHandler(collector)
    try:
        with warnings.catch_warnings():
            # yfinance 1.7 trips pandas 3 deprecations (inplace=...); not actionable here.
            warnings.filterwarnings("ignore", module=r"yfinance(\..*)?$")
            data = yf.download(
                list(symbols),
                start=start.date().isoformat(),
                end=end.date().isoformat(),
                auto_adjust=False,
                actions=False,
                progress=False,
                session=session,
                threads=False,
                multi_level_index=True,
                timeout=timeout,
            )
    except Exception as exc:  # yfinance raises its own types (rate limit, bad session, ...)
        raise SourceError(
            f"Yahoo Finance download of {len(symbols)} tickers for "
            f"[{start.date()}, {end.date()}) failed: {type(exc).__name__}: {exc}. "
            + hint
        ) from exc
    finally:
        yf_logger.removeHandler(collector)
    try:
        yf_version = yf.__version__
    except AttributeError:  # pragma: no cover
        yf_version = "unknown"
    return data, collector.messages, yf_version
