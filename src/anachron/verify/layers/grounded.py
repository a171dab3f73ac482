"""Layer 1: grounded checks against point-in-time data the project holds (docs/verification.md#grounded).

A grounded check dates a claim from data, not from the model's word:

* a closing price "on D" is public on trading day D; the trading calendar and
  the closes come from the price table (a non-trading day is mapped to the last
  trading day on or before it, and the stated price is compared with the close);
* a statement of the instance's own outcome (category A4: the realised return of
  one of the companies over the window, or its price at the end of the window)
  is leaked by definition, dated at the end of the window;
* an S&P 500 addition or removal is dated at the recorded change date
  (:class:`IndexChangeGrounding`, category A1);
* company financial figures are dated by their EDGAR filing in
  :mod:`anachron.verify.layers.edgar`; :class:`CompositeGrounding` chains checks.

These are the market checks (built by :mod:`anachron.verify.layers.market`). A statement of the
contract, decision or forecast resolution being predicted is the instance's own outcome (A4,
leaked): those checks live with their task (``anachron.tasks.<name>.grounding``), each a
:meth:`~anachron.tasks.base.Task.make_grounding`.

Each check returns a :class:`GroundedVerdict` or None when it does not apply; a task's
checks together are a :class:`Grounding`.
"""

from __future__ import annotations

import bisect
import datetime as dt
import re
from dataclasses import dataclass
from typing import Any, Mapping, Protocol

import numpy as np
import pandas as pd

from anachron.names import company_mention, mentioned_tickers
from anachron.verify.dates import find_periods, unquoted

_PRICE_WORDS = re.compile(r"\b(clos(?:e|ed|ing)|price[sd]?|traded|trading at|share price|stock price|opened|priced)\b", re.I)
_RETURN_WORDS = re.compile(
    r"\b(returns?|returned|gain(?:ed|s)?|rose|rise|risen|fell|fall(?:en)?|drop(?:ped)?|declin(?:e|ed)|"
    r"surg(?:e|ed)|plung(?:e|ed)|los[st]|outperform(?:ed)?|underperform(?:ed)?|up|down|increase[ds]?|decrease[ds]?)\b",
    re.I,
)
_PERCENT = re.compile(r"(-?\d+(?:\.\d+)?)\s?%")
# the number is taken whole ((?![\d,]|\.\d): no backtracking from "$260.2B" to "$260")
_DOLLARS = re.compile(
    r"\$\s?(\d{1,3}(?:,\d{3})*(?:\.\d+)?|\d+(?:\.\d+)?)(?![\d,]|\.\d)(?!\s*(?:million|billion|bn|m\b|b\b|k\b|trillion))",
    re.I,
)

#: Tolerances of the outcome checks.
RETURN_TOL_PP = 1.0
PRICE_REL_TOL = 0.005


@dataclass(frozen=True)
class GroundedVerdict:
    """Outcome of a grounded check: the effective date, whether it states the outcome, why."""

    effective_date: dt.date
    reason: str
    outcome: bool = False
    category: str | None = None


class Grounding(Protocol):
    """A task's grounded checks: ``check(fact, instance) -> GroundedVerdict | None``."""

    def check(self, fact: str, instance: dict[str, Any]) -> GroundedVerdict | None: ...


class PriceGrounding:
    """Grounded checks on closing prices (stock, forecast), backed by a daily price table.

    Args:
        prices: long frame with columns ``ticker, date, close, adj_close`` (dates as
            datetime64 or ``datetime.date``). The union of its dates is the trading
            calendar.
    """

    def __init__(self, prices: pd.DataFrame):
        df = prices[["ticker", "date", "close", "adj_close"]].copy()
        df["date"] = pd.to_datetime(df["date"]).dt.date
        self._closes: dict[str, tuple[list[dt.date], np.ndarray]] = {}
        for ticker, g in df.sort_values("date").groupby("ticker", sort=False):
            self._closes[str(ticker)] = (list(g["date"]), g["close"].to_numpy(dtype=float))
        self.calendar: list[dt.date] = sorted(set(df["date"]))

    def is_trading_day(self, day: dt.date) -> bool:
        """True if ``day`` has prices in the table."""
        i = bisect.bisect_left(self.calendar, day)
        return i < len(self.calendar) and self.calendar[i] == day

    def last_trading_day(self, day: dt.date) -> dt.date | None:
        """The last trading day on or before ``day`` (None before the table starts)."""
        i = bisect.bisect_right(self.calendar, day)
        return self.calendar[i - 1] if i else None

    def close_on(self, ticker: str, day: dt.date) -> float | None:
        """Raw close of ``ticker`` on ``day``, or None."""
        dates, closes = self._closes.get(ticker, ([], np.array([])))
        i = bisect.bisect_left(dates, day)
        return float(closes[i]) if i < len(dates) and dates[i] == day else None

    def closes_between(self, ticker: str, start: dt.date, end: dt.date) -> np.ndarray:
        """Raw closes of ``ticker`` with start <= date <= end."""
        dates, closes = self._closes.get(ticker, ([], np.array([])))
        return closes[bisect.bisect_left(dates, start) : bisect.bisect_right(dates, end)]

    def in_range(self, day: dt.date) -> bool:
        """True if ``day`` lies within the price table's date range."""
        return bool(self.calendar) and self.calendar[0] <= day <= self.calendar[-1]

    # -- checks ---------------------------------------------------------------

    def check(self, fact: str, instance: dict[str, Any]) -> GroundedVerdict | None:
        """Apply the stock checks to one fact.

        Args:
            fact: the claim text.
            instance: ``{"tickers", "names", "cutoff_date", "label"}`` where ``label`` is the
                stock label (``returns``, ``first_day``, ``last_day``). Without ``label``
                (other tasks) only the price-on-a-day check runs; without ``tickers`` no
                stated price is compared.
        """
        tickers = mentioned_tickers(fact, instance.get("tickers") or [], instance.get("names") or [])
        if instance.get("label"):
            outcome = self._outcome(fact, tickers, instance)
            if outcome is not None:
                return outcome
        return self._price_on_day(fact, tickers)

    def _outcome(self, fact: str, tickers: list[str], instance: dict[str, Any]) -> GroundedVerdict | None:
        label = instance["label"]
        last_day = dt.date.fromisoformat(label["last_day"])
        cutoff = dt.date.fromisoformat(instance["cutoff_date"])
        if not tickers:
            return None
        if _RETURN_WORDS.search(fact):
            for m in _PERCENT.finditer(fact):
                stated = abs(float(m[1]))
                for t in tickers:
                    realised = 100.0 * float(label["returns"][t])
                    if abs(stated - abs(realised)) <= RETURN_TOL_PP:
                        return GroundedVerdict(
                            last_day,
                            f"states the realised outcome: {t} returned {realised:+.1f}% over the window",
                            outcome=True,
                            category="A4",
                        )
        for m in _DOLLARS.finditer(fact):
            stated = float(m[1].replace(",", ""))
            for t in tickers:
                end_close = self.close_on(t, last_day)
                if end_close is None or abs(stated - end_close) > PRICE_REL_TOL * end_close:
                    continue
                prior = self.closes_between(t, cutoff - dt.timedelta(days=365), cutoff)
                if prior.size and np.any(np.abs(prior - stated) <= PRICE_REL_TOL * stated):
                    continue
                return GroundedVerdict(
                    last_day,
                    f"states {t}'s close at the end of the window (${end_close:.2f} on {last_day}), "
                    "a level not seen in the year before the cutoff",
                    outcome=True,
                    category="A4",
                )
        return None

    def _price_on_day(self, fact: str, tickers: list[str]) -> GroundedVerdict | None:
        if not _PRICE_WORDS.search(fact):
            return None
        days = [p.start for p in find_periods(fact) if p.kind == "day"]
        if not days:
            return None
        day = max(days)
        if not self.in_range(day):
            return None
        trading = self.last_trading_day(day)
        if trading is None:
            return None
        stated = [float(m[1].replace(",", "")) for m in _DOLLARS.finditer(fact)]
        note = ""
        for t in tickers:
            close = self.close_on(t, trading)
            if close is not None:
                match = any(abs(s - close) <= PRICE_REL_TOL * close for s in stated)
                note = f"; {t} closed at ${close:.2f}" + (" (stated price matches)" if match else "")
                break
        if trading == day:
            return GroundedVerdict(day, f"price on trading day {day}{note}", category="A2")
        return GroundedVerdict(
            trading, f"{day} is not a trading day; last close on {trading}{note}", category="A2"
        )


# ---------------------------------------------------------------------------
# Composite
# ---------------------------------------------------------------------------


class CompositeGrounding:
    """Several grounded checks in order; the first that applies decides.

    Args:
        checks: objects with ``check(fact, instance) -> GroundedVerdict | None``.
    """

    def __init__(self, checks: list[Any]):
        self.checks = [c for c in checks if c is not None]

    def check(self, fact: str, instance: dict[str, Any]) -> GroundedVerdict | None:
        """The first non-None verdict of :attr:`checks`, or None."""
        for c in self.checks:
            v = c.check(fact, instance)
            if v is not None:
                return v
        return None


# ---------------------------------------------------------------------------
# S&P 500 index changes
# ---------------------------------------------------------------------------

_SP500 = r"(?:S\s?&\s?P\s?500|S&P\s+500\s+index|SP500|Standard\s+(?:&|and)\s+Poor['’]?s\s+500)"
_ADD_VERBS = r"(?:added|adds|adding|addition|joined|joins|joining|inclusion|included|includes|entered|enters|entry|admitted|promoted|became\s+(?:a\s+)?(?:member|constituent|part)\s+of)"
_REMOVE_VERBS = r"(?:removed|removes|removal|dropped|drops|deleted|deletion|left|leaves|exited|exits|excluded|kicked\s+out|demoted|replaced|ceased\s+to\s+be\s+(?:a\s+)?(?:member|constituent)\s+of)"
#: "<company> was added to the S&P 500", "its removal from the S&P 500", "joined the S&P 500"
_INDEX_PASSIVE = re.compile(
    rf"\b(?P<verb>{_ADD_VERBS}|{_REMOVE_VERBS})\b(?:\s+(?:to|into|in|from|out\s+of|of))?(?:\s+the)?\s+{_SP500}", re.I
)
#: "the S&P 500 added <company>", "S&P 500 index dropped <company>"
_INDEX_ACTIVE = re.compile(rf"{_SP500}(?:\s+index)?\s+(?P<verb>{_ADD_VERBS}|{_REMOVE_VERBS})\b(?P<obj>.{{0,60}})", re.I)
#: "S&P Dow Jones Indices added <company> to the S&P 500", "the index committee dropped <company>
#: from the S&P 500": the index provider as subject, the company between verb and index.
_INDEX_PROVIDER = re.compile(
    rf"\b(?:S\s?&\s?P(?:\s+Dow\s+Jones(?:\s+Indices)?|\s+DJI|\s+Global)?|(?:the\s+)?index\s+committee|Standard\s+(?:&|and)\s+Poor['’]?s)\s+"
    rf"(?P<verb>{_ADD_VERBS}|{_REMOVE_VERBS})\s+(?P<obj>.{{1,60}}?)\s+(?:to|into|in|from|out\s+of)\s+(?:the\s+|its\s+)?{_SP500}",
    re.I,
)
#: "<company> replaced <company> in the S&P 500": both sides of one change
_INDEX_REPLACE = re.compile(rf"\breplac(?:ed|es|ing)\b.{{0,80}}?\b(?:in|on)\s+the\s+{_SP500}", re.I)
_INDEX_FORWARD = re.compile(
    r"(?-i:\bwill\b|\bWill(?=\s+[a-z]))|\b(?:would|to\s+be\s+(?:added|removed|included|dropped)|to\s+join|to\s+leave|set\s+to|expected|scheduled|"
    r"poised|candidate|could|might|likely|speculat\w*|eligible|rumou?red|plans?\s+to)\b"
    r"|(?-i:\bmay\b)(?!\s+\d)",  # lower-case modal "may", not the month ("May 10, 2021")
    re.I,
)
class IndexChangeGrounding:
    """S&P 500 additions and removals: a claim that a company joined or left the index is
    dated at the recorded change date (category A1).

    Args:
        changes: the S&P 500 changes table (``date``, ``add``, ``remove``; comma-separated
            tickers; :mod:`anachron.sources.sp500`).
        names: ticker -> company name(s) (e.g. from the dated GICS tables ``sectors.parquet``),
            or a frame with ``ticker`` and ``name`` columns. Instance ``tickers``/``names`` are
            added per check.

    A claim applies only when it names a ticker or company of a recorded change with the
    matching action (joined / was added -> an addition; left / was removed / dropped ->
    a removal) next to "S&P 500". Forward-looking statements ("will join", "is set to be
    added") are not dated here: announcements precede the change date.
    """

    def __init__(self, changes: pd.DataFrame, names: Mapping[str, Any] | pd.DataFrame | None = None):
        events: list[tuple[dt.date, str, str]] = []
        for day, add, remove in changes[["date", "add", "remove"]].itertuples(index=False):
            d = pd.Timestamp(day).date()
            for action, cell in (("add", add), ("remove", remove)):
                for t in str(cell or "").split(","):
                    t = t.strip().upper()
                    if t and t != "NAN":
                        events.append((d, t, action))
        self.events = sorted(events)
        self._tickers = sorted({t for _, t, _ in self.events})
        self._names: dict[str, set[str]] = {}
        if isinstance(names, pd.DataFrame):
            for t, n in names[["ticker", "name"]].itertuples(index=False):
                self._add_name(str(t), n)
        elif names:
            for t, n in names.items():
                for x in [n] if isinstance(n, str) else list(n):
                    self._add_name(str(t), x)

    def _add_name(self, ticker: str, name: Any) -> None:
        if isinstance(name, str) and name.strip():
            self._names.setdefault(ticker.upper(), set()).add(name.strip())

    def check(self, fact: str, instance: dict[str, Any] | None = None) -> GroundedVerdict | None:
        """Date a statement of an S&P 500 addition or removal, or None."""
        if _INDEX_FORWARD.search(unquoted(fact)):
            return None
        wanted: list[tuple[str, str]] = []  # (action, text scope where the company must be named)
        for m in _INDEX_PROVIDER.finditer(fact):
            action = "add" if re.fullmatch(_ADD_VERBS, m["verb"], re.I) else "remove"
            wanted.append((action, m["obj"]))
        for m in _INDEX_PASSIVE.finditer(fact):
            action = "add" if re.fullmatch(_ADD_VERBS, m["verb"], re.I) else "remove"
            wanted.append((action, fact))
        for m in _INDEX_ACTIVE.finditer(fact):
            obj = re.split(r"[,;.]|\b(?:while|as|after|before|when|but|on|in|to)\b", m["obj"], maxsplit=1)[0]
            if re.match(r"\s*(?:[\d.+-]|about|around|nearly|almost|over|more|less)", obj, re.I):
                continue  # "the S&P 500 added 2%": a market move, not a change
            action = "add" if re.fullmatch(_ADD_VERBS, m["verb"], re.I) else "remove"
            wanted.append((action, obj))
        if _INDEX_REPLACE.search(fact):
            wanted.append(("any", fact))
        if not wanted:
            return None
        inst = instance or {}
        extra = {str(t).upper(): {str(n)} for t, n in zip(inst.get("tickers") or [], inst.get("names") or []) if t}
        years = {p.start.year for p in find_periods(fact)}
        hits: list[tuple[bool, int, dt.date, str, str]] = []  # (in a year the claim names, strength, event)
        for action, scope in wanted:
            for ticker in self._tickers:
                names = self._names.get(ticker, set()) | extra.get(ticker, set())
                strength = company_mention(scope, ticker, names)
                if not strength:
                    continue
                same = [e for e in self.events if e[1] == ticker and action in ("any", e[2])]
                if not same:
                    continue
                in_year = [e for e in same if e[0].year in years]
                hits.append((bool(in_year), strength, *(in_year or same)[0]))
        if not hits:
            return None
        # prefer a change in a year the claim names, then a ticker symbol over a company name
        # ("Fiserv (FI)": FI's change, not FISV's), then the latest (both sides of a replacement)
        _, _, day, ticker, action = max(hits)
        verb = "added to" if action == "add" else "removed from"
        return GroundedVerdict(day, f"S&P 500 change: {ticker} {verb} the index on {day}", category="A1")
