"""The calibration's planted families shared by the tasks about listed companies (stock, forecast).

:class:`MarketFamilies` plants company figures first public in an EDGAR filing
(:func:`edgar_facts`) and S&P 500 index changes, the families the stock and forecast
planters extend. The grounded checks built from the same data are in
:mod:`anachron.verify.layers.market`. :class:`MarketFamilies` inherits the real-fact families
(news headlines, EDGAR figures as filed) of :mod:`anachron.verify.calibration.real`.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import numpy as np
import pandas as pd

from anachron.verify.calibration.planting import Plant, PlantInstance, display_name, long_date, money_text, short_name
from anachron.verify.calibration.real import RealFamilies


_EDGAR_CONCEPTS = {
    "Revenues": "revenue",
    "RevenueFromContractWithCustomerExcludingAssessedTax": "revenue",
    "SalesRevenueNet": "revenue",
    "NetIncomeLoss": "net income",
    "GrossProfit": "gross profit",
    "OperatingIncomeLoss": "operating income",
    "EarningsPerShareDiluted": "diluted EPS",
}
_EDGAR_KNOWN = {"apple": "AAPL", "nvidia": "NVDA", "alphabet": "GOOGL", "tesla": "TSLA", "microsoft": "MSFT", "amazon": "AMZN"}
_ORDINAL = {1: "first", 2: "second", 3: "third", 4: "fourth"}


def edgar_facts(edgar: pd.DataFrame) -> pd.DataFrame:
    """Distinct company figures with the date they were first public.

    One row per (company, concept, period, value) over the EDGAR companyfacts rows, with
    ``first_public`` = the earliest ``filed`` of any filing (8-K, 10-Q, 10-K, 10-K/A)
    that reported that value for that period; so a restated value dates to the
    amendment and the original value to the original filing. Only full fiscal years
    (340-380 days) and quarters (80-100 days) of the concepts in ``_EDGAR_CONCEPTS``.

    Returns:
        DataFrame: company, ticker, concept, measure, unit, start, end, val, first_public,
        period ("FY" or "Q"), fy (fiscal-year label), fq (fiscal quarter or 0),
        period_first_public (the first filing of any value for that company, concept and period).
    """
    df = edgar[edgar["concept"].isin(list(_EDGAR_CONCEPTS)) & edgar["start"].notna() & edgar["end"].notna()].copy()
    if df.empty:
        return pd.DataFrame(columns=["company", "ticker", "concept", "measure", "unit", "start", "end", "val",
                                     "first_public", "period", "fy", "fq", "period_first_public"])
    df["start"] = pd.to_datetime(df["start"]).dt.date
    df["end"] = pd.to_datetime(df["end"]).dt.date
    df["filed"] = pd.to_datetime(df["filed"]).dt.date
    days = (pd.to_datetime(df["end"]) - pd.to_datetime(df["start"])).dt.days
    df = df[((days >= 340) & (days <= 380)) | ((days >= 80) & (days <= 100))].copy()
    days = (pd.to_datetime(df["end"]) - pd.to_datetime(df["start"])).dt.days
    df["period"] = np.where(days >= 340, "FY", "Q")
    df["val_key"] = df["val"].round(4)
    # one measure may be tagged under several concepts over the years (NVIDIA's quarterly revenue:
    # Revenues in the 10-Q, RevenueFromContractWithCustomer... in the next 10-K): group by measure
    df["measure"] = df["concept"].map(_EDGAR_CONCEPTS)
    g = (
        df.sort_values("filed")
        .groupby(["entity_name", "measure", "unit", "start", "end", "period", "val_key"], as_index=False)
        .agg(val=("val", "first"), first_public=("filed", "min"), concept=("concept", "first"))
    )
    # fiscal year end month per company: the mode of FY period ends (an end in the first
    # week of a month belongs to the previous month: 52/53-week years)
    fy_rows = g[g["period"] == "FY"]
    fye: dict[str, int] = {}
    for name, sub in fy_rows.groupby("entity_name"):
        months = [(e - dt.timedelta(days=7)).month for e in sub["end"]]
        fye[name] = int(pd.Series(months).mode().iloc[0])
    out = []
    for r in g.itertuples(index=False):
        m = fye.get(r.entity_name, 12)
        end_m = (r.end - dt.timedelta(days=7)).month
        end_y = (r.end - dt.timedelta(days=7)).year
        fy_label = end_y if end_m <= m else end_y + 1
        fq = 0 if r.period == "FY" else ((end_m - m - 1) % 12) // 3 + 1
        company = display_name(r.entity_name)
        ticker = next((t for k, t in _EDGAR_KNOWN.items() if k in company.lower()), None)
        out.append(
            dict(company=company, ticker=ticker, concept=r.concept, measure=_EDGAR_CONCEPTS[r.concept], unit=r.unit,
                 start=r.start, end=r.end, val=float(r.val), first_public=r.first_public, period=r.period,
                 fy=int(fy_label), fq=int(fq))
        )
    res = pd.DataFrame(out)
    res["period_first_public"] = res.groupby(["company", "measure", "start", "end"])["first_public"].transform("min")
    # a figure first public the same day as its own period end is an artefact (dei/cover data)
    return res[res["first_public"] > res["end"]].sort_values(["company", "concept", "end", "first_public"]).reset_index(drop=True)


def _edgar_body(r: Any, wording: str) -> str:
    who = r.ticker if wording.endswith("ticker") and r.ticker else r.company
    if r.measure == "diluted EPS":
        value = f"${r.val:.2f} per share"
    else:
        value = money_text(r.val)
    if r.period == "FY":
        if wording.startswith("fy_active"):
            return f"{who} reported fiscal {r.fy} {r.measure} of {value}"
        if wording.startswith("fy_passive"):
            return f"Full-year {r.fy} {r.measure} of {value} was reported by {who}"
        return f"{who}'s {r.measure} for FY{r.fy} came in at {value}"
    if wording.startswith("q_ended"):
        return f"{who} reported {r.measure} of {value} for the quarter ended {long_date(r.end)}"
    if wording.startswith("q_fiscal"):
        return f"{who}'s fiscal Q{r.fq} {r.fy} {r.measure} was {value}"
    return f"In the {_ORDINAL[r.fq]} quarter of fiscal {r.fy}, {who} posted {r.measure} of {value}"


class MarketFamilies(RealFamilies):
    """Planter families shared by the tasks about listed companies (stock, forecast): company
    figures first public in an EDGAR filing (:meth:`edgar`) and S&P 500 index changes
    (:meth:`index_change`), both dated by grounding tables even without a date in the text;
    and the re-worded real facts of :class:`~anachron.verify.calibration.real.RealFamilies`
    (news headlines, EDGAR figures as filed).

    ``data``: ``edgar`` (EDGAR companyfacts rows), ``sp500_changes`` and ``sp500_sectors``
    (company names), ``news`` (the news snapshot), each optional.
    """

    grounded_families = {"edgar", "index"}

    def __init__(self, *a: Any, **k: Any):
        super().__init__(*a, **k)
        self._edgar = edgar_facts(self.data["edgar"]) if "edgar" in self.data else None
        ch = self.data.get("sp500_changes")
        if ch is not None:
            ch = ch.copy()
            ch["date"] = pd.to_datetime(ch["date"]).dt.date
            for c in ("add", "remove"):
                ch[c] = ch[c].fillna("").astype(str).str.strip()
            ch = ch.sort_values("date").reset_index(drop=True)
        self._changes = ch
        self._names: dict[str, str] = {}
        sec = self.data.get("sp500_sectors")
        if sec is not None:
            for r in sec.sort_values("as_of").itertuples(index=False):
                if isinstance(r.name, str) and r.name:
                    self._names[str(r.ticker)] = short_name(r.name)

    def edgar(self, inst: PlantInstance, kind: str) -> Plant | None:
        """A company figure: first filed after the cutoff (post_cutoff) or before it (pre_cutoff)."""
        ef = self._edgar
        if ef is None or ef.empty:
            return None
        c = inst.cutoff
        if kind == "post_cutoff":
            # a period first reported after the cutoff (not a restated or re-rounded old figure)
            pool = ef[(ef["period_first_public"] > c) & (ef["first_public"] <= c + dt.timedelta(days=540))]
        else:
            pool = ef[(ef["first_public"] <= c) & (ef["first_public"] >= c - dt.timedelta(days=730))]
            if not pool.empty and self.rng.random() < 0.4:
                # tricky clean: the latest fiscal year (or quarter) already reported before the cutoff
                last = pool[pool["first_public"] == pool.groupby("company")["first_public"].transform("max")]
                if not last.empty:
                    pool = last
        if pool.empty:
            return None
        r = pool.iloc[int(self.rng.integers(len(pool)))]
        wordings = ["fy_active", "fy_passive", "fy_possessive_ticker"] if r.period == "FY" else ["q_ended", "q_fiscal", "q_ordinal_ticker"]
        wording = self.pick(wordings)
        body = _edgar_body(r, wording)
        return self.finish("edgar", wording, body, r.first_public, inst, kind, allowed=("on_day", "iso", "as_of", "none", "none"))

    def _name(self, ticker: str) -> str:
        return self._names.get(ticker, ticker)

    def index_change(self, inst: PlantInstance, kind: str) -> Plant | None:
        """An S&P 500 addition or removal dated after (post_cutoff) or before (pre_cutoff) the cutoff."""
        ch = self._changes
        if ch is None or ch.empty:
            return None
        c = inst.cutoff
        if kind == "post_cutoff":
            pool = ch[(ch["date"] > c) & (ch["date"] <= c + dt.timedelta(days=540))]
        else:
            pool = ch[(ch["date"] <= c) & (ch["date"] >= c - dt.timedelta(days=730))]
        if pool.empty:
            return None
        r = pool.iloc[int(self.rng.integers(len(pool)))]
        # a change may list several tickers ("STE,ZBRA,LYV"); pair one addition with one removal
        adds = [t.strip() for t in r["add"].split(",") if t.strip()]
        rems = [t.strip() for t in r["remove"].split(",") if t.strip()]
        add = self.pick(adds) if adds else ""
        rem = rems[adds.index(add)] if add and len(rems) == len(adds) else (self.pick(rems) if rems else "")
        if add and rem and self._name(add) == self._name(rem):
            rem = ""  # a ticker change of one company (FI -> FISV) is not a replacement
        options = []
        if add:
            options += ["added_passive", "added_active", "joined"]
        if rem:
            options += ["removed_passive"]
        if not options:
            return None
        wording = self.pick(options)
        if wording == "added_passive":
            body = f"{self._name(add)} ({add}) was added to the S&P 500" + (f", replacing {self._name(rem)}" if rem else "")
        elif wording == "added_active":
            body = f"S&P Dow Jones Indices added {add} to the S&P 500 index"
        elif wording == "joined":
            body = f"{self._name(add)} joined the S&P 500"
        else:
            body = f"{self._name(rem)} ({rem}) was removed from the S&P 500"
        return self.finish("index", wording, body, r["date"], inst, kind)
