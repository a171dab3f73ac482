"""The ``fja05680/sp500`` CSVs: membership spells (``ticker,start_date,end_date``) and dated
index changes (``date,add,remove``)."""

from __future__ import annotations

import io
import os

import numpy as np
import pandas as pd

from anachron.sources.base import SourceError, normalize_ticker, read_csv_checked


def _parse_dates(series: pd.Series, where: str, column: str) -> pd.Series:
    try:
        out = pd.to_datetime(series.replace("", np.nan), format="%Y-%m-%d")
    except (ValueError, TypeError) as exc:
        raise SourceError(f"{where}: column {column} has values that are not ISO YYYY-MM-DD dates ({exc}).") from exc
    return out.astype("datetime64[ns]")


def parse_membership(buf: io.IOBase | str | os.PathLike[str], name: str) -> pd.DataFrame:
    """Parse ``ticker,start_date,end_date`` CSV into typed spells (see
    :class:`~anachron.sources.sp500.reader.SP500MembershipReader`)."""
    df = read_csv_checked(buf, ["ticker", "start_date", "end_date"], name=name, dtype="str", keep_default_na=False)
    out = pd.DataFrame(
        {
            "ticker": df["ticker"].map(normalize_ticker).astype("str"),
            "start_date": _parse_dates(df["start_date"], name, "start_date"),
            "end_date": _parse_dates(df["end_date"], name, "end_date"),
        }
    )
    if out["start_date"].isna().any():
        bad = out.loc[out["start_date"].isna(), "ticker"].tolist()[:5]
        raise SourceError(f"{name}: empty start_date for ticker(s) {', '.join(bad)}; every spell needs a start.")
    return out.sort_values(["ticker", "start_date"], kind="mergesort").reset_index(drop=True)


def parse_changes(buf: io.IOBase | str | os.PathLike[str], name: str) -> pd.DataFrame:
    """Parse a ``date,add,remove`` CSV of index changes (``add``/``remove``: comma-separated tickers).

    Returns columns ``date`` (datetime64[ns]), ``add`` and ``remove`` (str, comma-separated
    tickers in S&P spelling, ``""`` when none), sorted by date. ``name`` labels the file in
    errors. Raises :class:`SourceError` naming the file for a missing column or a date that
    is not ISO YYYY-MM-DD.
    """
    raw = read_csv_checked(buf, ["date", "add", "remove"], name=name, dtype="str", keep_default_na=False)

    def norm_list(cell: str) -> str:
        return ",".join(normalize_ticker(t) for t in str(cell).split(",") if t.strip())

    return pd.DataFrame(
        {
            "date": _parse_dates(raw["date"], name, "date"),
            "add": raw["add"].map(norm_list).astype("str"),
            "remove": raw["remove"].map(norm_list).astype("str"),
        }
    ).sort_values("date", kind="mergesort").reset_index(drop=True)


def changes_long(changes: pd.DataFrame) -> pd.DataFrame:
    """One row per (date, ticker, action) from :func:`parse_changes` output
    (:class:`~anachron.sources.sp500.reader.SP500ChangesReader`).

    Columns ``date`` (datetime64), ``ticker`` (str), ``action`` ("add" | "remove").
    """
    rows = []
    for date, add, remove in changes[["date", "add", "remove"]].itertuples(index=False):
        for action, cell in (("add", add), ("remove", remove)):
            for t in str(cell).split(","):
                if t.strip():
                    rows.append((date, t.strip(), action))
    return pd.DataFrame(rows, columns=["date", "ticker", "action"]).astype({"ticker": "str", "action": "str"})
