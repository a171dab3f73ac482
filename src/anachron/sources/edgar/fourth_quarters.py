"""Derived fourth quarters: the 10-K's fiscal-year value minus the nine months to date, for
monetary flow concepts (:mod:`anachron.sources.edgar`, "Derived fourth quarters")."""

from __future__ import annotations

import re

import pandas as pd

from anachron.sources.edgar.table import COLUMNS

#: Day counts of a fiscal year and of a nine-month year-to-date period (52/53-week calendars included).
YEAR_DAYS = (350, 380)
NINE_MONTH_DAYS = (260, 285)
_CURRENCY_UNIT = re.compile(r"^[A-Z]{3}$")


def derive_q4(facts: pd.DataFrame) -> pd.DataFrame:
    """Fourth-quarter rows computed as fiscal year minus nine months (:mod:`anachron.sources.edgar`).

    Args:
        facts: fact rows (:data:`COLUMNS` up to ``frame``, as
            :func:`~anachron.sources.edgar.companyfacts.parse_companyfacts` gives).

    Returns:
        New rows in the same columns plus ``derived`` (True): one per 10-K / 10-K/A report of
        a fiscal-year value of a monetary flow concept (``start`` set, unit a three-letter
        currency code) that is the filing's own fiscal year (its latest annual ``end``), when
        a nine-month period with the same ``start`` ending 80-100 days before the year end was
        reported on or before the 10-K's ``filed`` date (the latest such report is used) and
        no row reports the quarter (``start`` = nine-month end + 1 day, same ``end``) itself.
        ``val`` = annual - nine months; ``start`` = the day after the nine months end;
        ``fp`` = ``"Q4"``; ``frame`` None. Empty (same columns) when nothing can be derived.
    """
    cols = COLUMNS[:15]
    empty = pd.DataFrame({c: pd.Series(dtype=facts[c].dtype) for c in cols}).assign(derived=pd.Series(dtype=bool))
    df = facts.loc[facts["start"].notna() & facts["unit"].astype(str).str.match(_CURRENCY_UNIT), cols]
    if df.empty:
        return empty
    start = pd.to_datetime(df["start"])
    end = pd.to_datetime(df["end"])
    days = (end - start).dt.days
    is_10k = df["form"].astype(str).str.match(r"^10-K(?:/A)?$")
    annual = df.loc[is_10k & days.between(*YEAR_DAYS)].copy()
    if annual.empty:
        return empty
    # the filing's own fiscal year: the latest annual end in that accession
    annual = annual.loc[annual["end"] == annual.groupby("accn")["end"].transform("max")]
    nine = df.loc[days.between(*NINE_MONTH_DAYS)].copy()
    if nine.empty:
        return empty
    key = ["cik", "taxonomy", "concept", "unit", "start"]
    pairs = annual.merge(nine[key + ["end", "val", "filed", "accn"]], on=key, suffixes=("", "_9m"))
    gap = (pd.to_datetime(pairs["end"]) - pd.to_datetime(pairs["end_9m"])).dt.days
    pairs = pairs.loc[gap.between(80, 100) & (pairs["filed_9m"] <= pairs["filed"])]
    if pairs.empty:
        return empty
    # the nine months as known when the 10-K was filed: the latest report on or before it
    pairs = pairs.sort_values(["filed_9m", "accn_9m"], kind="mergesort")
    pairs = pairs.drop_duplicates(key + ["end", "accn", "val"], keep="last")
    out = pairs[cols].copy()
    out["start"] = (pd.to_datetime(pairs["end_9m"]) + pd.Timedelta(days=1)).dt.strftime("%Y-%m-%d").to_numpy()
    out["val"] = (pairs["val"] - pairs["val_9m"]).to_numpy(dtype="float64")
    out["fp"] = "Q4"
    out["frame"] = None
    reported = set(zip(df["cik"], df["taxonomy"], df["concept"], df["unit"], df["start"], df["end"]))
    keep = [k not in reported for k in zip(out["cik"], out["taxonomy"], out["concept"], out["unit"], out["start"], out["end"])]
    out = out.loc[keep].reset_index(drop=True)
    out["derived"] = True
    return out
