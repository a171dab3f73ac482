"""Calibration of the claim verifier against planted claims of known truth (issue 5; DESIGN §5-6).

The verifier is the measuring instrument of every leakage number, so it is
tested on claims whose truth we know: facts taken from the project's own
point-in-time data (closing prices, EDGAR filings, S&P 500 index changes,
contracts, Supreme Court decisions, ForecastBench resolutions), written in the
wording styles models use, and planted on real instances with their real cutoff.

Three kinds of planted claim (column ``kind``):

* ``post_cutoff`` -- a real fact first public after the instance's cutoff
  (a close on a later trading day, an EDGAR figure first filed later, a later
  index change, another player's later contract, a later decision, a later
  resolution). ``truth_leaked`` is True.
* ``pre_cutoff`` -- a real fact public on or before the cutoff, from the same
  families, including the tricky clean ones (a close on the cutoff day itself, a
  fiscal year already reported before the cutoff, the lower-court ruling in the
  case, the player's previous contract). ``truth_leaked`` is False.
* ``outcome`` -- a statement of the instance's own outcome (category A4 of the
  TimeSPEC taxonomy: leaked by definition): the realised return or end-of-window
  close (stock), the contract signed (salary), how the Supreme Court ruled
  (legal), how the question resolved (forecast). ``truth_leaked`` is True.

Each planted claim carries its truth in at least one place a verifier may
look: a date in the text, an honest declared ``source_date``, or the project's
grounding data (EDGAR, index changes, the instance's own label). A claim whose
only date is a falsely early declared one *and* whose family has no grounding
table is never planted: no verifier could catch it, and planting it would
measure nothing but the planting. Declared dates vary between honest (the true
date, ISO or coarse), missing, and falsely early (a pre-cutoff date on a
post-cutoff fact, as models often write).

``calibrate`` runs a verifier over the planted claims for several layer sets and
reports recall on leaks (``post_cutoff``, ``outcome``, and both together) and the
false-positive rate on ``pre_cutoff``, each with a Wilson 95% interval, per task
and per wording style. The acceptance bar of issue 5 is recall >= 0.95 and
false positives <= 1% per task with the grounded and rules layers.

Definitions: TimeSPEC (claim taxonomy, A4 outcome claims always leak); TEMPO
App. I.4 (date-plausibility rules); DESIGN §5 (verifier layers), §6 (control
runs give the false-positive floor; the paper reports a control OLR of 0.0-0.7%).
"""

from __future__ import annotations

import calendar
import datetime as dt
import json
import math
import re
import zlib
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from anachron.store.schema import CALIBRATION_COLUMNS, PLANTED_COLUMNS

KINDS = ("post_cutoff", "pre_cutoff", "outcome")
LEAK_KINDS = ("post_cutoff", "outcome")
#: Summary row kind that pools ``post_cutoff`` and ``outcome`` (the "planted leaks" of issue 5).
ALL_LEAKS = "all_leaks"
#: Acceptance bar of issue 5 (grounded + rules layers, per task).
RECALL_MIN = 0.95
FP_MAX = 0.01
#: Control-split OLR range the paper reports (DESIGN §6), as fractions.
PAPER_CONTROL_OLR = (0.0, 0.007)

VerifyFn = Callable[[pd.DataFrame, tuple[str, ...]], pd.DataFrame]

# ---------------------------------------------------------------------------
# wording helpers

_MONTH = [calendar.month_name[i] for i in range(13)]
_SUFFIX = re.compile(
    r"[,\s]+(inc\.?|corp\.?|corporation|co\.?|company|ltd\.?|plc|group|holdings|incorporated|& co\.?)$", re.I
)


def _d(value: Any) -> dt.date:
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    return pd.Timestamp(value).date()


def _long(d: dt.date) -> str:
    return f"{_MONTH[d.month]} {d.day}, {d.year}"


def _short_name(name: str) -> str:
    """'Exxon Mobil Corp.' -> 'Exxon Mobil'; 'Halliburton Co.' -> 'Halliburton'."""
    out = str(name).strip()
    for _ in range(3):
        new = _SUFFIX.sub("", out).strip().rstrip(",")
        if new == out or not new:
            break
        out = new
    return out


def _quarter_start(d: dt.date) -> dt.date:
    return dt.date(d.year, 3 * ((d.month - 1) // 3) + 1, 1)


def _money(v: float) -> str:
    """$260.2 billion / $8.5 million / $950,000."""
    a = abs(v)
    sign = "-" if v < 0 else ""
    if a >= 1e9:
        return f"{sign}${a / 1e9:.2f} billion".replace(".00 ", " ")
    if a >= 1e6:
        s = f"{a / 1e6:.2f}".rstrip("0").rstrip(".")
        return f"{sign}${s} million"
    return f"{sign}${a:,.0f}"


def _money_short(v: float) -> str:
    """$8.5M / $950K style."""
    if v >= 1e6:
        return "$" + f"{v / 1e6:.2f}".rstrip("0").rstrip(".") + "M"
    return "$" + f"{v / 1e3:.0f}K"


#: Date styles in the text; "none" leaves the date to the declared source_date or to grounding.
DATE_STYLES = ("on_day", "iso", "as_of", "month", "quarter", "none")


def _date_phrase(d: dt.date, style: str, cutoff: dt.date, kind: str) -> tuple[str, str] | None:
    """(prefix, suffix) placing ``d`` in the text in ``style``; None when the style cannot
    carry the truth (a month or quarter that starts on or before the cutoff, for a leak)."""
    if style == "on_day":
        return f"On {_long(d)}, ", ""
    if style == "iso":
        return "", f" on {d.isoformat()}"
    if style == "as_of":
        return f"As of {d.isoformat()}, ", ""
    if style == "month":
        if kind != "pre_cutoff" and dt.date(d.year, d.month, 1) <= cutoff:
            return None
        return "", f" in {_MONTH[d.month]} {d.year}"
    if style == "quarter":
        if kind != "pre_cutoff" and _quarter_start(d) <= cutoff:
            return None
        return "", f" in Q{(d.month - 1) // 3 + 1} {d.year}"
    return "", ""


_COMMON_FIRST = {"shares", "the", "it", "a", "an", "in", "full-year", "over", "by", "before"}


def _lower_first(text: str) -> str:
    """Lower-case the first word when it is a common word (not a name or ticker)."""
    first = text.split(" ", 1)[0]
    return text[0].lower() + text[1:] if first.lower() in _COMMON_FIRST else text


def _join(prefix: str, body: str, suffix: str) -> str:
    body = body.strip()
    if prefix:
        body = prefix + _lower_first(body)
    text = body + suffix
    return text if text.endswith(".") else text + "."


# ---------------------------------------------------------------------------
# instances


@dataclass
class _Inst:
    instance_id: str
    split: str
    cutoff: dt.date
    inputs: dict[str, Any]
    label: dict[str, Any]


def _instances(instances: pd.DataFrame) -> list[_Inst]:
    df = instances[instances["split"].isin(["eval", "control"])].sort_values("instance_id")
    out = []
    for r in df.itertuples(index=False):
        inputs = json.loads(r.inputs) if isinstance(r.inputs, str) else dict(r.inputs)
        label = json.loads(r.label) if isinstance(r.label, str) else dict(r.label)
        out.append(_Inst(r.instance_id, r.split, dt.date.fromisoformat(str(r.cutoff_date)[:10]), inputs, label))
    return out


# ---------------------------------------------------------------------------
# planting machinery


@dataclass
class _Plant:
    fact: str
    declared: str | None
    style: str
    truth_date: dt.date | None


class _Planter:
    """Base: ``families(kind)`` -> list of callables ``(inst, kind) -> _Plant | None``."""

    #: families whose facts a grounding table can date even with no date in the text
    grounded_families: set[str] = set()

    def __init__(self, insts: list[_Inst], data: Mapping[str, pd.DataFrame], rng: np.random.Generator, frames: list[str]):
        self.insts = insts
        self.data = data
        self.rng = rng
        self.frames = frames

    def families(self, kind: str) -> list[Callable[[_Inst, str], _Plant | None]]:
        raise NotImplementedError

    # -- shared choices ---------------------------------------------------------

    def pick(self, seq: Sequence[Any]) -> Any:
        return seq[int(self.rng.integers(len(seq)))]

    def declared(self, truth: dt.date | None, cutoff: dt.date, kind: str, *, text_dated: bool, family: str) -> tuple[str | None, str]:
        """(declared_raw, label): honest, honest coarse, missing, or falsely early."""
        if kind == "pre_cutoff":
            mode = self.pick(["honest", "honest", "month", "missing"])
        else:
            mode = self.pick(["honest", "missing", "false_early"])
            if not text_dated and family not in self.grounded_families and kind != "outcome":
                mode = "honest"  # the truth must live somewhere a verifier can look
        if mode == "honest" and truth is not None:
            return truth.isoformat(), "declared=honest"
        if mode == "month" and truth is not None:
            return f"{truth.year}-{truth.month:02d}", "declared=month"
        if mode == "false_early":
            early = cutoff - dt.timedelta(days=int(self.rng.integers(1, 120)))
            return early.isoformat(), "declared=false_early"
        return None, "declared=missing"

    def date_style(self, truth: dt.date, cutoff: dt.date, kind: str, allowed: Sequence[str] = DATE_STYLES) -> tuple[str, str, str]:
        """(style, prefix, suffix) for the date in the text; falls back to on_day."""
        style = self.pick(list(allowed))
        ph = _date_phrase(truth, style, cutoff, kind)
        if ph is None:
            style, ph = "on_day", _date_phrase(truth, "on_day", cutoff, kind)
        return style, ph[0], ph[1]

    def finish(self, family: str, wording: str, body: str, truth: dt.date | None, inst: _Inst, kind: str,
               *, allowed: Sequence[str] = DATE_STYLES, date_in_body: bool = False) -> _Plant:
        """Add a date phrase and a declared date to ``body`` and label the style."""
        if date_in_body or truth is None:
            dstyle, prefix, suffix = ("in_body" if date_in_body else "none"), "", ""
        else:
            dstyle, prefix, suffix = self.date_style(truth, inst.cutoff, kind, allowed)
        text_dated = dstyle != "none"
        declared, dlabel = self.declared(truth, inst.cutoff, kind, text_dated=text_dated, family=family)
        fact = _join(prefix, body, suffix)
        frame = ""
        if self.frames and not prefix and self.rng.random() < 0.2:
            opener = self.pick(self.frames)
            fact = f"{opener}, {_lower_first(fact)}"
            frame = ":frame"
        return _Plant(fact, declared, f"{family}:{wording}:{dstyle}:{dlabel}{frame}", truth)


# ---------------------------------------------------------------------------
# shared families: EDGAR figures, S&P 500 index changes

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
        company = _short_name(str(r.entity_name)).title() if str(r.entity_name).isupper() else _short_name(str(r.entity_name))
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
        value = _money(r.val)
    if r.period == "FY":
        if wording.startswith("fy_active"):
            return f"{who} reported fiscal {r.fy} {r.measure} of {value}"
        if wording.startswith("fy_passive"):
            return f"Full-year {r.fy} {r.measure} of {value} was reported by {who}"
        return f"{who}'s {r.measure} for FY{r.fy} came in at {value}"
    if wording.startswith("q_ended"):
        return f"{who} reported {r.measure} of {value} for the quarter ended {_long(r.end)}"
    if wording.startswith("q_fiscal"):
        return f"{who}'s fiscal Q{r.fq} {r.fy} {r.measure} was {value}"
    return f"In the {_ORDINAL[r.fq]} quarter of fiscal {r.fy}, {who} posted {r.measure} of {value}"


class _SharedFamilies(_Planter):
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
                    self._names[str(r.ticker)] = _short_name(r.name)

    def edgar(self, inst: _Inst, kind: str) -> _Plant | None:
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

    def index_change(self, inst: _Inst, kind: str) -> _Plant | None:
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


# ---------------------------------------------------------------------------
# stock


class _StockPlanter(_SharedFamilies):
    def __init__(self, *a: Any, **k: Any):
        super().__init__(*a, **k)
        p = self.data["prices"][["ticker", "date", "close"]].copy()
        p["date"] = pd.to_datetime(p["date"]).dt.date
        self._px = {str(t): g.sort_values("date").reset_index(drop=True) for t, g in p.groupby("ticker")}

    def families(self, kind):
        if kind == "outcome":
            return [self.outcome_return, self.outcome_price]
        fams = [self.price, self.price, self.index_change]
        if self._edgar is not None:
            fams.append(self.edgar)
        return fams

    def _company(self, inst: _Inst) -> tuple[str, str]:
        comps = [c for c in inst.inputs["companies"] if c["ticker"] in self._px]
        c = self.pick(comps)
        return c["ticker"], c["name"]

    def _who(self, ticker: str, name: str) -> tuple[str, str]:
        form = self.pick(["name", "short", "ticker"])
        return form, {"name": name, "short": _short_name(name), "ticker": ticker}[form]

    def price(self, inst: _Inst, kind: str) -> _Plant | None:
        ticker, name = self._company(inst)
        px = self._px[ticker]
        c = inst.cutoff
        if kind == "post_cutoff":
            pool = px[px["date"] > c]
        else:
            pool = px[px["date"] <= c]
        if len(pool) < 2:
            return None
        cutoff_day = kind == "pre_cutoff" and self.rng.random() < 0.3
        i = len(pool) - 1 if cutoff_day else int(self.rng.integers(1, len(pool)))
        row = pool.iloc[i]
        d, close = row["date"], float(row["close"])
        j = px.index[px["date"] == d][0]
        prev = float(px.loc[j - 1, "close"]) if j > 0 else None
        form, who = self._who(ticker, name)
        if cutoff_day:
            # tricky clean: the last close on or before the cutoff, dated by the cutoff day itself
            body = f"As of {_long(c)}, {who}'s most recent closing price was ${close:.2f}"
            declared = self.pick([c.isoformat(), None])
            return _Plant(_join("", body, ""), declared, f"price:cutoff_day_{form}:in_body:declared={'honest' if declared else 'missing'}", d)
        wording = self.pick(["close_active", "close_passive", "move_pct", "month_avg"])
        if wording == "move_pct" and prev:
            chg = 100.0 * (close / prev - 1.0)
            verb = "rose" if chg >= 0 else "fell"
            body = f"{who} shares {verb} {abs(chg):.1f}%"
            return self.finish("price", f"{wording}_{form}", body, d, inst, kind, allowed=("on_day", "iso", "on_day"))
        if wording == "month_avg":
            start = dt.date(d.year, d.month, 1)
            if kind == "post_cutoff" and start <= c:
                wording = "close_active"
            else:
                month = px[(px["date"] >= start) & (px["date"] <= d)]
                avg = float(month["close"].mean())
                body = f"{who} stock traded around ${avg:.0f} in {_MONTH[d.month]} {d.year}"
                return self.finish("price", f"{wording}_{form}", body, d, inst, kind, date_in_body=True)
        if wording == "close_passive":
            body = f"Shares of {who} were priced at ${close:.2f} at the close"
        else:
            body = f"{who} closed at ${close:.2f}"
        return self.finish("price", f"{wording}_{form}", body, d, inst, kind)

    def outcome_return(self, inst: _Inst, kind: str) -> _Plant | None:
        ticker, name = self._company(inst)
        r = float(inst.label["returns"][ticker])
        first, last = dt.date.fromisoformat(inst.label["first_day"]), dt.date.fromisoformat(inst.label["last_day"])
        form, who = self._who(ticker, name)
        wording = self.pick(["between_days", "signed_window", "over_months", "lost_gained"])
        if wording == "between_days":
            verb = "rose" if r >= 0 else "fell"
            body = f"{who} {verb} {abs(r) * 100:.1f}% between {_long(first)} and {_long(last)}"
        elif wording == "signed_window":
            body = f"{who} returned {r * 100:+.1f}% over the window"
        elif wording == "over_months":
            verb = "gained" if r >= 0 else "lost"
            body = f"Over the six months to {_MONTH[last.month]} {last.year}, {who} stock {verb} about {abs(r) * 100:.0f}%"
        else:
            verb = "increase" if r >= 0 else "decline"
            body = f"A {abs(r) * 100:.1f}% {verb} was recorded for {who} from {first.isoformat()} to {last.isoformat()}"
        return self.finish("return", f"{wording}_{form}", body, last, inst, kind, date_in_body=True)

    def outcome_price(self, inst: _Inst, kind: str) -> _Plant | None:
        ticker, name = self._company(inst)
        last = dt.date.fromisoformat(inst.label["last_day"])
        px = self._px[ticker]
        hit = px[px["date"] == last]
        if hit.empty:
            return None
        close = float(hit["close"].iloc[0])
        form, who = self._who(ticker, name)
        wording = self.pick(["end_close", "ended_window", "had_dropped"])
        if wording == "end_close":
            body = f"{who} closed at ${close:.2f}"
            return self.finish("end_price", f"{wording}_{form}", body, last, inst, kind, allowed=("on_day", "iso", "none"))
        if wording == "ended_window":
            body = f"{who} ended the period at ${close:.2f} a share"
            return self.finish("end_price", f"{wording}_{form}", body, last, inst, kind, date_in_body=True)
        body = f"By {_long(last)}, {who} stock was trading at ${close:.2f}"
        return self.finish("end_price", f"{wording}_{form}", body, last, inst, kind, date_in_body=True)


# ---------------------------------------------------------------------------
# salary


def _contracts_table(data: Mapping[str, pd.DataFrame], insts_all: pd.DataFrame | None) -> pd.DataFrame:
    cols = ["league", "player", "team", "signing_date", "aav", "total_value", "years"]
    if "contracts" in data:
        df = data["contracts"][cols].copy()
    else:
        rows = []
        for r in (insts_all if insts_all is not None else pd.DataFrame()).itertuples(index=False):
            inp, lab = json.loads(r.inputs), json.loads(r.label)
            rows.append((inp["league"], inp["player"], lab.get("team"), lab["signing_date"], lab["aav"], lab.get("total_value"), lab.get("years")))
        df = pd.DataFrame(rows, columns=cols)
    df = df.dropna(subset=["player", "signing_date", "aav"]).copy()
    df["signing_date"] = pd.to_datetime(df["signing_date"]).dt.date
    df = df[df["aav"] > 0]
    return df.sort_values(["signing_date", "player"]).reset_index(drop=True)


def _years(y: Any) -> int | None:
    try:
        v = int(y)
        return v if v > 0 else None
    except (TypeError, ValueError):
        return None


def _contract_body(player: str, team: str | None, years: int | None, aav: float, total: float | None, wording: str) -> str:
    yrs = f"{years}-year" if years else "multi-year"
    tot = total if total and total > 0 else aav * (years or 1)
    team_s = f"the {team}" if team else "a new team"
    if wording == "signed_total":
        return f"{player} signed a {yrs}, {_money(tot)} contract with {team_s}"
    if wording == "team_signed_aav":
        return f"{team_s[0].upper() + team_s[1:]} signed {player} to a {yrs} deal worth {_money_short(aav)} per year"
    if wording == "agreed_dollars":
        return f"{player} agreed to a {yrs} deal worth ${tot:,.0f} in total"
    return f"It was reported that {player} inked a contract carrying an AAV of {_money_short(aav)}"


class _SalaryPlanter(_Planter):
    CONTRACT_WORDINGS = ["signed_total", "team_signed_aav", "agreed_dollars", "reported_aav"]

    def __init__(self, insts, data, rng, frames, all_instances=None):
        super().__init__(insts, data, rng, frames)
        self._c = _contracts_table(data, all_instances)

    def families(self, kind):
        if kind == "outcome":
            return [self.outcome]
        if kind == "pre_cutoff":
            return [self.other_contract, self.previous_contract]
        return [self.other_contract]

    def other_contract(self, inst: _Inst, kind: str) -> _Plant | None:
        c, league, player = inst.cutoff, inst.inputs.get("league"), inst.inputs["player"]
        df = self._c[(self._c["league"] == league) & (self._c["player"] != player)]
        if kind == "post_cutoff":
            pool = df[(df["signing_date"] > c) & (df["signing_date"] <= c + dt.timedelta(days=365))]
        else:
            pool = df[(df["signing_date"] <= c) & (df["signing_date"] >= c - dt.timedelta(days=730))]
        if pool.empty:
            return None
        r = pool.iloc[int(self.rng.integers(len(pool)))]
        wording = self.pick(self.CONTRACT_WORDINGS)
        body = _contract_body(r["player"], r["team"], _years(r["years"]), float(r["aav"]), r["total_value"], wording)
        return self.finish("contract", wording, body, r["signing_date"], inst, kind)

    def previous_contract(self, inst: _Inst, kind: str) -> _Plant | None:
        c, player = inst.cutoff, inst.inputs["player"]
        df = self._c[(self._c["player"] == player) & (self._c["signing_date"] <= c)]
        if df.empty:
            return None
        r = df.iloc[-1]
        wording = self.pick(self.CONTRACT_WORDINGS)
        body = _contract_body(player, r["team"], _years(r["years"]), float(r["aav"]), r["total_value"], wording)
        return self.finish("previous_contract", wording, body, r["signing_date"], inst, kind)

    def outcome(self, inst: _Inst, kind: str) -> _Plant | None:
        lab, player = inst.label, inst.inputs["player"]
        day = dt.date.fromisoformat(lab["signing_date"])
        form = self.pick(["full", "full", "surname"])
        names = [w for w in player.split() if w.rstrip(".").lower() not in {"jr", "sr", "ii", "iii", "iv", "v"}]
        who = player if form == "full" or not names else names[-1]
        wording = self.pick(self.CONTRACT_WORDINGS)
        body = _contract_body(who, lab.get("team"), _years(lab.get("years")), float(lab["aav"]), lab.get("total_value"), wording)
        return self.finish("own_contract", f"{wording}_{form}", body, day, inst, kind)


# ---------------------------------------------------------------------------
# legal


class _LegalPlanter(_Planter):
    def __init__(self, insts, data, rng, frames, all_instances=None):
        super().__init__(insts, data, rng, frames)
        rows = []
        src = all_instances if all_instances is not None else pd.DataFrame()
        for r in src.itertuples(index=False):
            inp, lab = json.loads(r.inputs), json.loads(r.label)
            rows.append(dict(case_name=inp["case_name"], petitioner=inp.get("petitioner"), respondent=inp.get("respondent"),
                             lower_court=inp.get("lower_court"), decision_date=dt.date.fromisoformat(lab["decision_date"]),
                             petitioner_wins=int(lab["petitioner_wins"])))
        self._cases = pd.DataFrame(rows).drop_duplicates("case_name") if rows else pd.DataFrame(
            columns=["case_name", "petitioner", "respondent", "lower_court", "decision_date", "petitioner_wins"])

    def families(self, kind):
        if kind == "outcome":
            return [self.outcome]
        if kind == "pre_cutoff":
            return [self.other_decision, self.lower_court]
        return [self.other_decision]

    @staticmethod
    def _lower(lower: str | None) -> str:
        s = str(lower or "the court of appeals")
        m = re.search(r"(\w+) Circuit", s)
        if m:
            return f"the {m[1]} Circuit"
        return s if s.lower().startswith("the ") else f"the {s}"

    def _decision_body(self, case: Mapping[str, Any], wording: str, *, own: bool) -> str:
        wins = bool(case["petitioner_wins"])
        winner = case["petitioner"] if wins else case["respondent"]
        verb = self.pick(["reversed", "vacated"]) if wins else "affirmed"
        name = case["case_name"]
        if wording == "court_verb":
            return f"The Supreme Court {verb} the judgment of {self._lower(case['lower_court'])} in {name}"
        if wording == "ruled_for":
            return f"In {name}, the Court ruled in favor of {winner}"
        if wording == "passive":
            return f"{name} was decided in favor of {winner} by the U.S. Supreme Court"
        # party-only mention, the Supreme Court named
        return f"The Justices sided with {winner} in a Supreme Court ruling"

    def other_decision(self, inst: _Inst, kind: str) -> _Plant | None:
        c = inst.cutoff
        df = self._cases[self._cases["case_name"] != inst.inputs["case_name"]]
        if kind == "post_cutoff":
            pool = df[(df["decision_date"] > c) & (df["decision_date"] <= c + dt.timedelta(days=365))]
        else:
            pool = df[(df["decision_date"] <= c) & (df["decision_date"] >= c - dt.timedelta(days=730))]
        if pool.empty:
            return None
        case = pool.iloc[int(self.rng.integers(len(pool)))]
        wording = self.pick(["court_verb", "ruled_for", "passive"])
        body = self._decision_body(case, wording, own=False)
        return self.finish("decision", wording, body, case["decision_date"], inst, kind)

    def lower_court(self, inst: _Inst, kind: str) -> _Plant | None:
        inp = inst.inputs
        lower = self._lower(inp.get("lower_court"))
        pet, name = inp.get("petitioner") or "the petitioner", inp["case_name"]
        wording = self.pick(["ruled_against", "before_scotus", "held"])
        if wording == "ruled_against":
            body = f"In {name}, {lower} ruled against {pet}"
        elif wording == "before_scotus":
            body = f"Before the case reached the Supreme Court, {lower} had ruled against {pet} in {name}"
        else:
            body = f"{lower[0].upper() + lower[1:]} held for {inp.get('respondent') or 'the respondent'} in {name}"
        # the lower court ruled before the petition was granted: its exact date is not in the data,
        # only that it precedes the cutoff (truth_date None); no date is written.
        declared = self.pick([None, f"{int(inp.get('term') or inst.cutoff.year)}"]) if inp.get("term") else None
        if declared and int(declared) > inst.cutoff.year:
            declared = None
        return _Plant(_join("", body, ""), declared, f"lower_court:{wording}:none:declared={'year' if declared else 'missing'}", None)

    def outcome(self, inst: _Inst, kind: str) -> _Plant | None:
        case = dict(case_name=inst.inputs["case_name"], petitioner=inst.inputs.get("petitioner"),
                    respondent=inst.inputs.get("respondent"), lower_court=inst.inputs.get("lower_court"),
                    petitioner_wins=int(inst.label["petitioner_wins"]))
        wording = self.pick(["court_verb", "ruled_for", "passive", "party_scotus"])
        body = self._decision_body(case, wording, own=True)
        day = dt.date.fromisoformat(inst.label["decision_date"])
        return self.finish("own_decision", wording, body, day, inst, kind, allowed=("on_day", "iso", "month", "none", "none"))


# ---------------------------------------------------------------------------
# forecast


def _question_short(q: str, limit: int = 140) -> str:
    first = re.split(r"\n", q.strip())[0]
    return first if len(first) <= limit else first[: limit - 3].rstrip() + "..."


class _ForecastPlanter(_SharedFamilies):
    def __init__(self, insts, data, rng, frames, all_instances=None):
        super().__init__(insts, data, rng, frames)
        self._res = [(i.inputs, i.label, i.instance_id) for i in insts]

    def families(self, kind):
        if kind == "outcome":
            return [self.outcome]
        fams = [self.index_change]
        if self._edgar is not None:
            fams.append(self.edgar)
        if kind == "pre_cutoff":
            fams.append(self.freeze_value)
        else:
            fams.append(self.other_resolution)
        return fams

    @staticmethod
    def _wording(inputs: Mapping[str, Any], wording: str) -> str:
        """"natural" exists only for the yfinance close-vs-close questions; else "answer"."""
        if wording == "natural" and not re.match(r"Will \S+'s market close price on", inputs["question"]):
            return "answer"
        return wording

    @staticmethod
    def _resolution_body(inputs: Mapping[str, Any], label: Mapping[str, Any], wording: str) -> str:
        yes = bool(int(label["resolved_to"]))
        q = _question_short(inputs["question"])
        m = re.match(r"Will (\S+)'s market close price on (\d{4}-\d{2}-\d{2}) be higher than its market close price on (\d{4}-\d{2}-\d{2})", q)
        if m and wording == "natural":
            return f"{m[1]}'s close on {m[2]} was {'higher' if yes else 'not higher'} than its close on {m[3]}"
        if wording == "resolved_quote":
            return f"The question \"{q}\" resolved {'YES' if yes else 'NO'}"
        return f"The answer to \"{q}\" turned out to be {'yes' if yes else 'no'}"

    def other_resolution(self, inst: _Inst, kind: str) -> _Plant | None:
        c = inst.cutoff
        pool = [(inp, lab) for inp, lab, iid in self._res if iid != inst.instance_id
                and c < dt.date.fromisoformat(lab["resolution_date"]) <= c + dt.timedelta(days=365)
                and inp["question"] != inst.inputs["question"]]
        if not pool:
            return None
        inp, lab = pool[int(self.rng.integers(len(pool)))]
        wording = self._wording(inp, self.pick(["natural", "resolved_quote", "answer"]))
        body = self._resolution_body(inp, lab, wording)
        day = dt.date.fromisoformat(lab["resolution_date"])
        return self.finish("resolution", wording, body, day, inst, kind, allowed=("on_day", "iso", "as_of"))

    def freeze_value(self, inst: _Inst, kind: str) -> _Plant | None:
        inp = inst.inputs
        val, expl, fd = inp.get("freeze_value"), inp.get("freeze_value_explanation"), inp.get("freeze_date")
        if val in (None, "", "nan") or not expl or not fd:
            return None
        day = dt.date.fromisoformat(str(fd)[:10])
        if day > inst.cutoff:
            return None
        expl = str(expl).strip().rstrip(".")
        body = f"As of {_long(day)}, {expl[0].lower() + expl[1:]} stood at {val}"
        declared = self.pick([day.isoformat(), None])
        return _Plant(_join("", body, ""), declared, f"freeze_value:as_of:in_body:declared={'honest' if declared else 'missing'}", day)

    def outcome(self, inst: _Inst, kind: str) -> _Plant | None:
        wording = self._wording(inst.inputs, self.pick(["natural", "resolved_quote", "answer"]))
        body = self._resolution_body(inst.inputs, inst.label, wording)
        day = dt.date.fromisoformat(inst.label["resolution_date"])
        return self.finish("own_resolution", wording, body, day, inst, kind, allowed=("on_day", "iso", "none"))


_PLANTERS: dict[str, type[_Planter]] = {
    "stock": _StockPlanter,
    "salary": _SalaryPlanter,
    "legal": _LegalPlanter,
    "forecast": _ForecastPlanter,
}

_OPENER = re.compile(r"^((?:According to|Per|As reported by|Reports from|Data from)\s[^,.;:\d]{2,40}),\s")


def completion_frames(completions: pd.DataFrame | None) -> list[str]:
    """Sentence openers ("According to Reuters") that real evidence facts start with.

    Args:
        completions: a run table with an ``evidence`` JSON column (list of
            ``{"id","fact","source_date"}``), or None.

    Returns:
        Distinct openers, sorted (empty when there are none).
    """
    if completions is None or "evidence" not in completions:
        return []
    out: set[str] = set()
    for ev in completions["evidence"].dropna():
        try:
            items = json.loads(ev) if isinstance(ev, str) else list(ev)
        except (TypeError, ValueError):
            continue
        for item in items:
            m = _OPENER.match(str(item.get("fact", "")) if isinstance(item, dict) else "")
            if m:
                out.add(m[1])
    return sorted(out)


def plant_claims(
    task: str,
    instances: pd.DataFrame,
    data: Mapping[str, pd.DataFrame],
    *,
    n_per_kind: int,
    seed: int,
    completions: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Plant claims of known truth on ``task``'s eval and control instances.

    Args:
        task: ``stock``, ``salary``, ``legal`` or ``forecast``.
        instances: the task's dataset (columns instance_id, task, split, cutoff_date,
            inputs JSON, label JSON, provenance JSON). Only eval and control rows get
            claims; all rows serve as the pool of other contracts / decisions.
        data: point-in-time tables, whichever exist: ``prices`` (ticker, date, close;
            required for stock), ``edgar`` (EDGAR companyfacts rows with ``filed``),
            ``sp500_changes`` (date, add, remove), ``sp500_sectors`` (as_of, ticker, name),
            ``contracts`` (salary: league, player, team, signing_date, aav, total_value,
            years; default: the dataset's own labels).
        n_per_kind: claims per kind (``post_cutoff``, ``pre_cutoff``, ``outcome``) for this
            task; instances are drawn at random and families in turn, so a family with no
            candidate for an instance is skipped for that draw.
        seed: seed; planting is a deterministic function of (task, instances, data, seed).
        completions: optional run table; openers of its real evidence facts
            ("According to ...") are reused on about a fifth of the claims.

    Returns:
        DataFrame with :data:`PLANTED_COLUMNS`; ``style`` is
        ``family:wording:date_style:declared=...`` (``:frame`` appended when a real
        opener was used). ``truth_date`` is the ISO date the fact became public (None
        where only "on or before the cutoff" is known: lower-court rulings).

    Raises:
        ValueError: unknown task, or no eval/control instance.
        KeyError: ``data`` lacks ``prices`` for stock.
    """
    if task not in _PLANTERS:
        raise ValueError(f"no planter for task {task!r}; known: {sorted(_PLANTERS)}")
    insts = _instances(instances)
    if not insts:
        raise ValueError(f"{task}: no eval or control instances to plant on")
    rng = np.random.default_rng([int(seed), zlib.crc32(task.encode())])
    frames = completion_frames(completions)
    cls = _PLANTERS[task]
    planter = cls(insts, data, rng, frames) if cls is _StockPlanter else cls(insts, data, rng, frames, all_instances=instances)
    rows: list[dict[str, Any]] = []
    for kind in KINDS:
        fams = planter.families(kind)
        made, tries = 0, 0
        while made < n_per_kind and tries < 50 * n_per_kind + 100:
            fam = fams[tries % len(fams)] if tries < n_per_kind * 2 else planter.pick(fams)
            tries += 1
            inst = planter.pick(insts)
            p = fam(inst, kind)
            if p is None:
                continue
            rows.append(
                dict(task=task, instance_id=inst.instance_id, cutoff_date=inst.cutoff.isoformat(), fact=p.fact,
                     declared_date_raw=p.declared, kind=kind, style=p.style, truth_leaked=kind in LEAK_KINDS,
                     truth_date=p.truth_date.isoformat() if p.truth_date else None)
            )
            made += 1
    return pd.DataFrame(rows, columns=PLANTED_COLUMNS)


# ---------------------------------------------------------------------------
# verification and calibration


def layers_name(layers: Iterable[str]) -> str:
    """("grounded", "rules") -> "grounded+rules"."""
    return "+".join(layers)


def default_verify_fn(groundings: Mapping[str, Any], contexts: Mapping[str, Mapping[str, Any]], *, leak_on_same_day: bool = False) -> VerifyFn:
    """A ``verify_fn`` built on :func:`anachron.verify.pipeline.verify_claim`.

    Args:
        groundings: task -> grounding object (``check(fact, instance)``) or None.
        contexts: instance_id -> the task's grounding context (``Task.grounding_context``).
        leak_on_same_day: passed to ``verify_claim``.

    Returns:
        ``fn(planted, layers) -> DataFrame`` aligned to ``planted``'s rows with columns
        leaked, verdict (leaked / clean / undated), layer, reason, effective_date.
        Undated claims are not flagged (``leaked`` False); :func:`calibrate` counts them.
    """
    from anachron.verify.pipeline import verify_table

    def fn(planted: pd.DataFrame, layers: tuple[str, ...]) -> pd.DataFrame:
        return verify_table(planted, dict(contexts), dict(groundings), tuple(layers), leak_on_same_day=leak_on_same_day)

    return fn


def grounding_contexts(task: str, instances: pd.DataFrame) -> dict[str, dict[str, Any]]:
    """instance_id -> ``Task.grounding_context(row)`` for every row of ``instances``."""
    from anachron.tasks.registry import get_task

    t = get_task(task)
    return {r["instance_id"]: t.grounding_context(r) for r in instances.to_dict("records")}


def verify_planted(planted: pd.DataFrame, verify_fn: VerifyFn, layer_sets: Iterable[Sequence[str]]) -> pd.DataFrame:
    """Planted claims with the verifier's answer, one block of rows per layer set.

    Returns:
        ``planted`` columns + layers (name), leaked, verdict, layer, reason (and whatever
        else ``verify_fn`` returns), ``flagged`` (= leaked, bool), ``correct``.

    Raises:
        ValueError: ``verify_fn`` returned a frame of the wrong length or without ``leaked``.
    """
    blocks = []
    planted = planted.reset_index(drop=True)
    for layers in layer_sets:
        layers = tuple(layers)
        res = verify_fn(planted, layers)
        if len(res) != len(planted) or "leaked" not in res:
            raise ValueError(f"verify_fn returned {len(res)} rows (need {len(planted)}) or no 'leaked' column")
        res = res.reset_index(drop=True)
        block = planted.copy()
        block["layers"] = layers_name(layers)
        for col in res.columns:
            block[col] = res[col].to_numpy()
        if "verdict" not in block:
            block["verdict"] = np.where(block["leaked"], "leaked", "clean")
        block["flagged"] = block["leaked"].fillna(False).astype(bool)
        block["correct"] = block["flagged"] == block["truth_leaked"].astype(bool)
        blocks.append(block)
    return pd.concat(blocks, ignore_index=True) if blocks else planted.assign(layers=pd.Series(dtype=str))


def wilson_ci(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval for a proportion k/n (nan, nan when n == 0)."""
    if n <= 0:
        return float("nan"), float("nan")
    p = k / n
    den = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return max(0.0, centre - half), min(1.0, centre + half)


def _summary_row(task: str, layers: str, kind: str, style: str, sub: pd.DataFrame) -> dict[str, Any]:
    n = len(sub)
    k = int(sub["flagged"].sum())
    lo, hi = wilson_ci(k, n)
    return dict(task=task, layers=layers, kind=kind, style=style,
                metric="fp_rate" if kind == "pre_cutoff" else "recall", n=n, n_flagged=k,
                n_undated=int((sub["verdict"] == "undated").sum()), rate=k / n if n else float("nan"),
                ci_low=lo, ci_high=hi)


def summarize_calibration(verified: pd.DataFrame) -> pd.DataFrame:
    """Rates from :func:`verify_planted` output.

    Rows per (task, layers, kind) with ``style == "all"``, a pooled ``all_leaks`` row
    (post_cutoff + outcome), rows per facet of the style (``family=price``,
    ``wording=price:close_active_name``, ``date=on_day``, ``declared=missing``) and rows per
    full style (``family:wording:date:declared=...``). ``rate`` is the
    share flagged: recall for leak kinds, the false-positive rate for ``pre_cutoff``;
    Wilson 95% interval; ``n_undated`` claims got no date (counted as not flagged).
    """
    rows = []
    for (task, layers), g in verified.groupby(["task", "layers"], sort=True):
        for kind in KINDS:
            sub = g[g["kind"] == kind]
            if len(sub):
                rows.append(_summary_row(task, layers, kind, "all", sub))
        leaks = g[g["kind"].isin(LEAK_KINDS)]
        if len(leaks):
            rows.append(_summary_row(task, layers, ALL_LEAKS, "all", leaks))
        parts = g["style"].str.split(":")
        facets = {
            "family": parts.str[0],
            "wording": parts.str[0] + ":" + parts.str[1],
            "date": parts.str[2],
            "declared": parts.str[3].str.replace("declared=", "", regex=False),
        }
        for facet, values in facets.items():
            for (kind, value), sub in g.assign(_v=values.to_numpy()).groupby(["kind", "_v"], sort=True):
                rows.append(_summary_row(task, layers, kind, f"{facet}={value}", sub))
        for (kind, style), sub in g.groupby(["kind", "style"], sort=True):
            rows.append(_summary_row(task, layers, kind, style, sub))
    return pd.DataFrame(rows, columns=CALIBRATION_COLUMNS)


def calibrate(planted: pd.DataFrame, verify_fn: VerifyFn, layer_sets: Iterable[Sequence[str]]) -> pd.DataFrame:
    """Recall on planted leaks and false-positive rate on planted clean claims.

    Args:
        planted: :func:`plant_claims` output (several tasks may be concatenated).
        verify_fn: ``fn(planted, layers) -> DataFrame`` aligned to ``planted`` with at
            least ``leaked`` (and ``verdict``, ``layer``); see :func:`default_verify_fn`.
        layer_sets: e.g. ``[("grounded", "rules"), ("rules",)]``.

    Returns:
        DataFrame with :data:`CALIBRATION_COLUMNS` (see :func:`summarize_calibration`).
    """
    return summarize_calibration(verify_planted(planted, verify_fn, layer_sets))

