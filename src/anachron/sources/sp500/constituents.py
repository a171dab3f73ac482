"""Constituents tables (snapshots and Wikipedia revisions): their column variants, mapped onto
``as_of, ticker, name, sector``."""

from __future__ import annotations

from typing import Any, Iterable

import numpy as np
import pandas as pd

from anachron.sources.base import SourceError, normalize_ticker
from anachron.sources.index_membership import to_day

#: Column-name variants of constituents tables (snapshots and Wikipedia revisions).
TICKER_COLUMNS = ("Symbol", "Ticker symbol", "Ticker", "Ticker Symbol")
NAME_COLUMNS = ("Security", "Name", "Company", "Company name")
SECTOR_COLUMNS = ("GICS Sector", "Sector", "GICS sector")


def normalize_constituents(df: pd.DataFrame, as_of: Any, where: str) -> pd.DataFrame:
    """Map a constituents table's column variants onto ``as_of, ticker, name, sector``.

    Recognised headers: ticker in :data:`TICKER_COLUMNS`, name in :data:`NAME_COLUMNS`,
    sector in :data:`SECTOR_COLUMNS` (older files: ``Symbol,Name,Sector``; newer and
    Wikipedia: ``Symbol,Security,GICS Sector,...``). Raises :class:`SourceError` naming
    ``where`` and the missing column when no variant of ticker or sector is present.
    ``name`` is optional (NaN when absent).
    """
    cols = {str(c).strip(): c for c in df.columns}

    def pick(options: Iterable[str]) -> Any:
        for o in options:
            if o in cols:
                return cols[o]
        return None

    tcol, ncol, scol = pick(TICKER_COLUMNS), pick(NAME_COLUMNS), pick(SECTOR_COLUMNS)
    missing = []
    if tcol is None:
        missing.append("Symbol (or " + "/".join(TICKER_COLUMNS[1:]) + ")")
    if scol is None:
        missing.append("GICS Sector (or " + "/".join(SECTOR_COLUMNS[1:]) + ")")
    if missing:
        raise SourceError(
            f"{where}: missing required column(s) {'; '.join(missing)} "
            f"(found: {', '.join(map(str, df.columns))}); replace the file with a constituents table."
        )
    out = pd.DataFrame(
        {
            "as_of": to_day(as_of),
            "ticker": df[tcol].astype("str").map(normalize_ticker),
            "name": df[ncol].astype("str").str.strip() if ncol is not None else np.nan,
            "sector": df[scol].astype("str").str.strip(),
        }
    )
    out = out[(out["ticker"] != "") & (out["ticker"] != "NAN")]
    out["as_of"] = out["as_of"].astype("datetime64[ns]")
    return out.drop_duplicates(["as_of", "ticker"], keep="first").reset_index(drop=True)


def sort_sectors(df: pd.DataFrame) -> pd.DataFrame:
    """The sector table's columns ``as_of, ticker, name, sector`` (``as_of`` datetime64[ns]),
    sorted by as_of, ticker, with a fresh index."""
    df = df[["as_of", "ticker", "name", "sector"]].copy()
    df["as_of"] = df["as_of"].astype("datetime64[ns]")
    return df.sort_values(["as_of", "ticker"], kind="mergesort").reset_index(drop=True)
