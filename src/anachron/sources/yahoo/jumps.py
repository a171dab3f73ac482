"""Probable changes of the company behind a symbol: day-over-day jumps of the adjusted close."""

from __future__ import annotations

import numpy as np
import pandas as pd

#: Factor of a day-over-day move of the adjusted close beyond which (up: ratio > factor;
#: down: ratio < 1 / factor) the move is flagged as a probable change of company behind the
#: symbol. The adjusted close already absorbs splits and dividends, so a move this large is
#: not explained by them. 3 (+200 % / -67 %) is above every daily move of the S&P 500
#: members 2018-2024 in the project's snapshot (largest: -61 % and +92 %).
JUMP_FACTOR = 3.0
#: Columns of :func:`flag_price_jumps`.
JUMP_COLUMNS = ["ticker", "date", "prev_date", "adj_ratio", "close_ratio", "detail"]


def flag_price_jumps(prices: pd.DataFrame, factor: float = JUMP_FACTOR) -> pd.DataFrame:
    """Days on which a ticker's adjusted close moves by more than ``factor`` from its previous row.

    ``prices``: long frame ``ticker, date, adj_close`` (``close`` optional). Splits and
    dividends are already in the adjusted close, so such a move is not explained by them and
    most likely means another company now trades under the symbol (a reused ticker), or a bad
    adjustment. The raw close tells which: if it moves as much, no corporate action explains
    the move; if it does not, the adjustment factor changed by itself (a split recorded
    without a price change). Rows without a positive adjusted close are skipped.

    Returns one row per flagged day, columns :data:`JUMP_COLUMNS`: ``ticker``, ``date`` (the
    day after the jump), ``prev_date`` (the row before it), ``adj_ratio`` and
    ``close_ratio`` (today / previous, unitless; NaN without ``close``), ``detail`` (text).
    """
    if not factor > 1:
        raise ValueError(f"factor must be > 1, got {factor}")
    cols = ["ticker", "date", "adj_close"] + (["close"] if "close" in prices.columns else [])
    px = prices.loc[prices["adj_close"] > 0, cols].copy()
    px["date"] = pd.to_datetime(px["date"])
    px = px.sort_values(["ticker", "date"], kind="mergesort")
    g = px.groupby("ticker", sort=False)
    px["prev_date"] = g["date"].shift()
    px["adj_ratio"] = px["adj_close"] / g["adj_close"].shift()
    px["close_ratio"] = px["close"] / g["close"].shift() if "close" in px.columns else np.nan
    hit = px[(px["adj_ratio"] > factor) | (px["adj_ratio"] < 1.0 / factor)].copy()

    def detail(r: pd.Series) -> str:
        move = f"adjusted close x{r['adj_ratio']:.3g} from {r['prev_date'].date()} to {r['date'].date()}"
        rc = r["close_ratio"]
        if pd.isna(rc) or rc > factor or rc < 1.0 / factor:
            return f"{move} (raw close x{rc:.3g}); no split or dividend explains it: another company behind the symbol?"
        return f"{move} while the raw close moves x{rc:.3g}: an adjustment without a matching price change"

    hit["detail"] = [detail(r) for _, r in hit.iterrows()] if len(hit) else pd.Series(dtype="str")
    return hit[JUMP_COLUMNS].reset_index(drop=True)
