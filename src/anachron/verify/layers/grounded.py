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
from anachron.verify.dates import Period, find_periods, unquoted
from anachron.verify.layers.figures import StatedPercent, StatedValue, mentions_move, parse_percents, parse_prices

_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9&.-]*[A-Za-z0-9]|[A-Za-z0-9]")
_DIGIT = re.compile(r"\d")
_EPOCH_ORDINAL = dt.date(1970, 1, 1).toordinal()
_LOWER_WORDS = re.compile(r"[a-z]+")
#: Period kinds with calendar bounds (fiscal periods are another company's calendar).
_CALENDAR_KINDS = ("day", "month", "quarter", "year")
_PRICE_WORDS = re.compile(r"\b(clos(?:e|ed|ing)|price[sd]?|traded|trading at|share price|stock price|opened|priced)\b", re.I)
#: A dollar figure is a share price in a claim about shares, stock or trading ...
_PRICE_CONTEXT = re.compile(
    r"\b(?:clos(?:e|ed|es|ing)|price[sd]?|trad(?:ed|es|ing)|opened|shares?|stocks?|(?:a|per)\s+share|quoted|"
    r"(?:at|to)\s+(?:a\s+)?(?:(?:record|new|fresh|multi-year|\d+-\w+)\s+)?(?:low|high|level)?\s*(?:of\s+)?(?=\$))", re.I
)
#: ... unless the words just before it make it another amount per share or a deal's value (a
#: lower-case noun at most three words before the figure: "a dividend of $0.77", "EPS of $2.10",
#: "earnings per share rose to $3.10", "raised its price target to $300"; a capitalised "Target"
#: or "Realty Income" is a name).
_NOT_PRICE_BEFORE = re.compile(
    r"(?:\bEPS|(?<!price )\bper\s+share|\b(?-i:earn\w*|profits?|income|revenues?|sales|dividends?|payouts?|distributions?|targets?|"
    r"buybacks?|repurchases?|offer(?:ed|s)?|bids?|deals?|tender|acquisitions?|acquire[ds]?|fines?|settlements?|"
    r"loss(?:es)?|cash|debt|book\s+value|guidance|estimates?|forecasts?))\b(?:\s+[\w'’-]+){0,3}?\s*(?:US\s?|USD\s?)?$"
)
_NOT_PRICE_AFTER = re.compile(r"^\s*(?:a|per)\s+(?:diluted\s+)?share\s+(?:in\s+)?(?:profit|earnings|dividends?|loss|cash)", re.I)
#: A percentage near these words is a share's move ...
_STOCK_NOUNS = frozenset("share shares stock stocks price prices valuation".split())
#: ... near these, a company or economic figure's change, not a return.
_FUNDAMENTALS = frozenset(
    "revenue revenues sales earnings eps income profit profits margin margins ebitda deliveries production output "
    "demand dividend dividends debt guidance bookings orders shipments subscribers users customers headcount jobs "
    "workforce traffic volume volumes cost costs expenses spending capex inflation cpi gdp unemployment payrolls "
    "rate rates yield yields yoy".split()
)
_YEAR_ON_YEAR = re.compile(r"year[- ](?:over|on)[- ]year|y/y|cash\s+flow", re.I)
_CLAUSE_END = re.compile(r"[;.]\s|,\s+(?:while|whereas|but|and)\b|\b(?:while|whereas)\b", re.I)
#: "since", "from", "after" before a date: the window starts there and its end is not named.
_OPEN_START = re.compile(r"\b(?:since|from|after|starting|beginning|following)\s+(?:the\s+)?(?:(?:close|end)\s+(?:of|on)\s+)?$", re.I)
#: "to", "through", "until" before a date: the window ends there.
_END_MARK = re.compile(r"\b(?:to|through|thru|until|till|by|and|ending|ended)\s+(?:the\s+)?(?:(?:close|end)\s+(?:of|on)\s+)?$", re.I)

#: Relative tolerance of a stated price against a close.
PRICE_REL_TOL = 0.005
#: A price matched against every close must be stated to the cent or this exactly (half a unit
#: of its last digit, an integer's trailing zeros counting as rounding, relative to it):
#: "$27.34" or "$4.09" is, "$27", "$27.3" or "$1,800" is not.
PRICE_REL_PRECISION = 0.001
#: A price seen only before the cutoff supports the claim's pre-cutoff date only when the table
#: has the company's closes for at least this many days after the cutoff (else not meeting the
#: price after the cutoff says nothing: the forecast task's cutoffs lie years after the table).
PRICE_SUPPORT_DAYS_AFTER = 90
#: A return matched over a named window: half a unit of its last digit plus this (points).
RETURN_SLACK_PP = 0.01


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


def instance_cutoff(instance: Mapping[str, Any] | None) -> dt.date | None:
    """The instance's ``cutoff_date`` as a date, or None when it has none (or an unreadable one)."""
    try:
        return dt.date.fromisoformat(str((instance or {})["cutoff_date"])[:10])
    except (KeyError, ValueError):
        return None


def names_date_after(text: str, cutoff: dt.date) -> bool:
    """True if ``text`` names a time that starts after ``cutoff`` (a day, month, quarter or year)."""
    return any(p.start > cutoff for p in find_periods(text))


@dataclass(frozen=True)
class NamedWindow:
    """The time span a claim's figure refers to, from the dates it names: ``end`` its last day,
    ``start`` its first (None when only the end is named: "over the year to Nov. 29, 2019")."""

    start: dt.date | None
    end: dt.date


def named_window(text: str, periods: list[Period] | None = None) -> NamedWindow | None:
    """The window the dates in ``text`` close, or None when they name none or leave it open.

    One date is its own period ("in March 2020", "on March 3, 2020", "in Q1 2020"), or only the
    window's end after "to", "through", "until", "and" ("over the year to Nov. 29, 2019"); two
    or more span from the earliest start to the latest end ("between Aug. 30, 2019 and Nov. 29,
    2019"). A window whose last date follows "since", "from" or "after" is open: its end is not
    named, so None. ``periods``: ``find_periods(text)`` when the caller has it.
    """
    periods = [p for p in (find_periods(text) if periods is None else periods) if p.kind in _CALENDAR_KINDS]
    if not periods:
        return None
    last = max(periods, key=lambda p: p.end)
    pos = text.find(last.text)
    before = text[max(0, pos - 30) : pos] if pos >= 0 else ""
    if _OPEN_START.search(before):
        return None
    if len(periods) > 1:
        return NamedWindow(min(p.start for p in periods), last.end)
    if _END_MARK.search(before):
        return NamedWindow(None, last.end)
    return NamedWindow(last.start, last.end)


def _returns(fact: str) -> list[StatedPercent]:
    """The percentages of ``fact`` that can be a share's return: those whose clause speaks of
    shares, stock or a price, or of no company figure (a "revenue up 4%" is a growth rate)."""
    out = []
    for p in parse_percents(fact):
        lo = max(0, p.start - 80)
        before = fact[lo : p.start]
        cut = [m.end() for m in _CLAUSE_END.finditer(before)]
        clause = before[cut[-1] :] if cut else before
        after = _CLAUSE_END.split(fact[p.start + len(p.text) : p.start + len(p.text) + 30], maxsplit=1)[0]
        clause = f"{clause} {p.text}{after}"
        words = set(_LOWER_WORDS.findall(clause.lower()))
        if not _STOCK_NOUNS.isdisjoint(words) or (_FUNDAMENTALS.isdisjoint(words) and not _YEAR_ON_YEAR.search(clause)):
            out.append(p)
    return out


#: An approximate price ("near $24", "about $24 a share", "~$24") matches closes within this
#: share of it (or half a unit of its last digit, when wider).
APPROX_PRICE_REL_TOL = 0.03
#: An approximate price matched only after the cutoff leaks only when the table holds this many
#: days of the company's closes before the cutoff (a level is "first reached" against its history).
APPROX_PRICE_HISTORY_DAYS = 365
#: Words that make a price approximate (not a bound: "above $700" and "under $20" are not).
_APPROX_BEFORE = re.compile(r"(?:\b(?:about|around|approximately|approx\.?|roughly|near|nearly|almost|close\s+to|some)\s+|~\s*)$", re.I)


def _approx_price_figures(fact: str, dollars: list[StatedValue]) -> list[StatedValue]:
    """The dollar amounts of ``fact`` that state a share price approximately ("trading near $24",
    "about $24 a share"), in a claim about shares, stock or trading and not an amount per share
    of something else; each with the tolerance :data:`APPROX_PRICE_REL_TOL` as its half unit."""
    if not dollars or not _PRICE_CONTEXT.search(fact):
        return []
    return [
        StatedValue(v.value, max(v.half_unit, APPROX_PRICE_REL_TOL * v.value), v.per_share, v.text, v.start, True, v.currency, v.round_half_unit)
        for v in dollars
        if v.hedged and _APPROX_BEFORE.search(fact[max(0, v.start - 20) : v.start])
        and not _NOT_PRICE_BEFORE.search(_before_hedge(fact[max(0, v.start - 60) : v.start]))
        and not _NOT_PRICE_AFTER.match(fact[v.start + len(v.text) :])
    ]


def _before_hedge(lead: str) -> str:
    """``lead`` without its trailing approximation words ("a dividend of about" -> "a dividend of")."""
    return _APPROX_BEFORE.sub("", lead).rstrip() + " "


def _price_figures(fact: str, dollars: list[StatedValue]) -> list[StatedValue]:
    """The dollar amounts of ``fact`` that state a share price exactly: in a claim about shares,
    stock or trading, not hedged ("about $40"), stated to the cent or to
    :data:`PRICE_REL_PRECISION`, and not an amount per share of something else (EPS, a dividend,
    an offer)."""
    if not dollars or not _PRICE_CONTEXT.search(fact):
        return []
    return [
        v
        for v in dollars
        if not v.hedged
        and (v.half_unit <= 0.005 or v.rel_precision <= PRICE_REL_PRECISION)
        and not _NOT_PRICE_BEFORE.search(fact[max(0, v.start - 40) : v.start])
        and not _NOT_PRICE_AFTER.match(fact[v.start + len(v.text) :])
    ]


class PriceGrounding:
    """Grounded checks on closing prices and returns (stock, forecast), backed by a daily price table.

    Args:
        prices: long frame with columns ``ticker, date, close, adj_close`` (dates as
            datetime64 or ``datetime.date``). The union of its dates is the trading
            calendar. ``adj_close`` (split- and dividend-adjusted) may be NaN.
        names: ticker -> company name(s) (e.g. from the dated GICS tables), or a frame with
            ``ticker`` and ``name`` columns: a claim may name any company of the table this way
            (:func:`anachron.names.company_mention`), besides the instance's own companies.

    The checks, in order (:meth:`check`; the instance's own outcome is the task's to decide:
    the stock task's :class:`~anachron.tasks.stock.grounding.WindowOutcomeGrounding` runs first):

    1. a return over a window the claim names ("rose 7.1% in November 2019"), recomputed from
       the closes at its ends: a match dates the claim at the window's last trading day;
    2. a share price: a stated price that equals (to its stated precision) the raw or adjusted
       close of the named company only on trading days after the cutoff, and on none before it
       in the table, did not exist before the cutoff: the claim is dated at the first such day,
       whatever its dates say (unless the claim names a time before the table that none of
       those days is in). A price that matches only days on or before the cutoff dates the claim
       there (the first such day), when the claim names no later time and the table runs
       :data:`PRICE_SUPPORT_DAYS_AFTER` days past the cutoff. A price that matches on both sides
       is no evidence;
    3. a price on a named day: dated at that trading day (a non-trading day maps to the last
       trading day before it), with the close on that day in the reason.
    """

    def __init__(self, prices: pd.DataFrame, names: Mapping[str, Any] | pd.DataFrame | None = None):
        df = prices[["ticker", "date", "close", "adj_close"]].copy()
        df["date"] = pd.to_datetime(df["date"]).dt.date
        df = df.sort_values(["ticker", "date"], kind="stable")
        # proleptic Gregorian ordinals (date.toordinal) of the trading days, vectorised
        df["ord"] = pd.to_datetime(df["date"]).to_numpy().astype("datetime64[D]").astype(np.int64) + _EPOCH_ORDINAL
        self._closes: dict[str, tuple[list[dt.date], np.ndarray]] = {}
        self._adj: dict[str, np.ndarray] = {}
        #: ticker -> (closes and adjusted closes ascending, their trading days as ordinals)
        self._by_value: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        for ticker, g in df.groupby("ticker", sort=False):
            days = list(g["date"])
            close = g["close"].to_numpy(dtype=float)
            adj = g["adj_close"].to_numpy(dtype=float)
            self._closes[str(ticker)] = (days, close)
            self._adj[str(ticker)] = adj
            ords = g["ord"].to_numpy(dtype=np.int64)
            vals = np.concatenate([close, adj])
            ords2 = np.concatenate([ords, ords])
            keep = np.isfinite(vals)
            order = np.argsort(vals[keep], kind="stable")
            self._by_value[str(ticker)] = (vals[keep][order], ords2[keep][order])
        self.calendar: list[dt.date] = sorted(set(df["date"]))
        self._names: dict[str, set[str]] = {}
        self._keys: dict[str, set[str]] = {}
        pairs: list[tuple[Any, Any]] = []
        if isinstance(names, pd.DataFrame):
            pairs = list(names[["ticker", "name"]].itertuples(index=False))
        elif names:
            pairs = [(t, x) for t, n in names.items() for x in ([n] if isinstance(n, str) else list(n))]
        for t, n in pairs:
            t = str(t)
            if t in self._closes and isinstance(n, str) and n.strip():
                self._names.setdefault(t, set()).add(n.strip())
                words = _WORD.findall(n)
                if words:
                    self._keys.setdefault(words[0].lower(), set()).add(t)

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

    def days_matching(self, ticker: str, value: float, tol: float) -> list[dt.date]:
        """Trading days on which ``ticker``'s raw or adjusted close is within ``tol`` of ``value``, ascending."""
        index = self._by_value.get(ticker)
        if index is None:
            return []
        vals, ords = index
        lo = int(np.searchsorted(vals, value - tol, side="left"))
        hi = int(np.searchsorted(vals, value + tol, side="right"))
        return [dt.date.fromordinal(int(o)) for o in np.unique(ords[lo:hi])]

    def companies(
        self, fact: str, instance: Mapping[str, Any] | None = None, of_instance: list[str] | None = None
    ) -> list[str]:
        """Tickers ``fact`` names: the instance's companies (:func:`~anachron.names.mentioned_tickers`;
        ``of_instance`` when the caller has them), then any company of the table by symbol or
        name (:func:`~anachron.names.company_mention`)."""
        inst = instance or {}
        found = list(of_instance) if of_instance is not None else mentioned_tickers(
            fact, inst.get("tickers") or [], inst.get("names") or []
        )
        words = _WORD.findall(fact)
        cands = {w for w in words if w in self._closes}
        for w in words:
            cands |= self._keys.get(w.lower(), set())
        for t in sorted(cands):
            if t not in found and company_mention(fact, t, self._names.get(t, ())):
                found.append(t)
        return found

    # -- checks ---------------------------------------------------------------

    def check(self, fact: str, instance: dict[str, Any]) -> GroundedVerdict | None:
        """Apply the price checks to one fact (see the class docstring for the order).

        Args:
            fact: the claim text.
            instance: ``{"tickers", "names", "cutoff_date"}`` (other keys are ignored); without
                ``cutoff_date`` a price is not dated by the days it matches.
        """
        percents = _returns(fact) if mentions_move(fact) else []
        # unscaled dollar amounts ("$27.34", not "$1.2 billion")
        dollars = parse_prices(fact) if "$" in fact else []
        price_words = _PRICE_WORDS.search(fact) is not None
        if not (percents or dollars or price_words):
            return None  # no return, price or trading day to check
        tickers = mentioned_tickers(fact, instance.get("tickers") or [], instance.get("names") or [])
        cutoff = instance_cutoff(instance)
        figures = _price_figures(fact, dollars) + _approx_price_figures(fact, dollars)
        periods = find_periods(fact) if (percents or figures or price_words) and _DIGIT.search(fact) else []
        window = named_window(fact, periods) if percents and periods else None
        companies = self.companies(fact, instance, tickers) if (percents and window) or figures else tickers
        if percents and window is not None and companies:
            moved = self._window_return(percents, companies, window)
            if moved is not None:
                return moved
        return self._price(fact, dollars, figures, companies, cutoff, periods)

    def _window_return(self, percents: list[StatedPercent], tickers: list[str], window: NamedWindow) -> GroundedVerdict | None:
        """A stated return that matches a company's return over the window the claim names.

        The window's return runs from the close before it starts (or on its first day) to the
        close on its last trading day, on raw or adjusted closes; a named end alone ("over the
        year to D") is not enough to recompute it."""
        if window.start is None:
            return None
        end = self.last_trading_day(window.end)
        if end is None or end < window.start:
            return None
        for t in tickers:
            dates, close = self._closes.get(t, ([], np.array([])))
            adj = self._adj.get(t, np.array([]))
            j = bisect.bisect_left(dates, end)
            if j >= len(dates) or dates[j] != end:
                continue
            i0 = bisect.bisect_left(dates, window.start)  # first trading day in the window
            bases = [i for i in {i0 - 1, i0} if 0 <= i < j]
            if i0 == 0 and dates[0] > window.start:  # the table starts after the window does
                bases = [i for i in bases if i != 0]
            for i in sorted(bases):
                # the close before the window, or the window's first close, is the base
                if i == i0 - 1 and (window.start - dates[i]).days > 5:
                    continue
                for series in (close, adj):
                    if not (np.isfinite(series[i]) and np.isfinite(series[j]) and series[i]):
                        continue
                    r = 100.0 * (series[j] / series[i] - 1.0)
                    for p in percents:
                        if p.hedged or abs(p.value - abs(r)) > p.half_unit + RETURN_SLACK_PP:
                            continue
                        if p.sign and (p.sign > 0) != (r > 0):
                            continue
                        return GroundedVerdict(
                            end,
                            f"{t} moved {r:+.2f}% from the close on {dates[i]} to the close on {end}: "
                            f"stated {p.text} matches the return over the window the claim names",
                            category="A2",
                        )
        return None

    def _price(
        self,
        fact: str,
        dollars: list[StatedValue],
        figures: list[StatedValue],
        tickers: list[str],
        cutoff: dt.date | None,
        periods: list[Period],
    ) -> GroundedVerdict | None:
        """Checks 3 and 4: a stated price (``figures``) dated by the days it matches, and a price on
        a named day (``dollars``: every unscaled dollar amount, for the reason)."""
        on_day = self._price_on_day(fact, tickers, dollars, periods)
        if cutoff is None or not figures or not tickers:
            return on_day
        periods = [p for p in periods if p.kind in _CALENDAR_KINDS]
        for v in figures:
            for t in tickers:
                days = self.days_matching(t, v.value, v.half_unit + 1e-6)
                if not days:
                    continue
                first_day = self._closes[t][0][0]
                before = [d for d in days if d <= cutoff]
                after = [d for d in days if d > cutoff]
                if after and not before:
                    if first_day > cutoff:
                        continue  # the table has no close of this company before the cutoff
                    if v.hedged and (cutoff - first_day).days < APPROX_PRICE_HISTORY_DAYS:
                        continue  # a price level "first reached" after the cutoff needs the years before it
                    if on_day is not None and on_day.effective_date > cutoff:
                        return on_day
                    # a named time the table does not cover, none of whose days match: no evidence
                    if any(p.start < first_day for p in periods) and not any(
                        p.start <= d <= p.end for p in periods for d in after
                    ):
                        continue
                    return GroundedVerdict(
                        after[0],
                        f"stated {v.text} matches {t}'s close only after the cutoff (first on {after[0]}; "
                        f"{len(after)} day(s)), on no day on or before it in the price table (from {first_day})",
                        category="A2",
                    )
                last_day = self._closes[t][0][-1]
                if (
                    before
                    and not after
                    and on_day is None
                    and (last_day - cutoff).days >= PRICE_SUPPORT_DAYS_AFTER
                    and not any(p.start > cutoff for p in periods)
                ):
                    return GroundedVerdict(
                        before[0],
                        f"stated {v.text} matches {t}'s close on {before[0]}, on or before the cutoff "
                        "(and on no day after it in the price table)",
                        category="A2",
                    )
        return on_day

    def _price_on_day(
        self, fact: str, tickers: list[str], dollars: list[StatedValue], periods: list[Period]
    ) -> GroundedVerdict | None:
        if not _PRICE_WORDS.search(fact):
            return None
        days = [p.start for p in periods if p.kind == "day"]
        if not days:
            return None
        day = max(days)
        if not self.in_range(day):
            return None
        trading = self.last_trading_day(day)
        if trading is None:
            return None
        stated = [v.value for v in dollars]
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
    a removal) next to "S&P 500". It is dated at the first such change (in a year the claim
    names, when it names one); a company with the same change both before and after the
    instance's cutoff (added, removed, added again) is no evidence either way unless a named
    year tells them apart. Forward-looking statements ("will join", "is set to be added") are
    not dated here: announcements precede the change date.
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

    def _unambiguous(
        self, hits: list[tuple[bool, int, dt.date, str, str]], cutoff: dt.date, extra: Mapping[str, set[str]]
    ) -> list[tuple[bool, int, dt.date, str, str]]:
        """``hits`` less those where one company name (no symbol, no year) fits changes of several
        tickers on both sides of the cutoff ("Healthpeak joined": as PEAK in 2019, as DOC in 2024)."""
        def key(ticker: str) -> set[str]:
            words = (_WORD.findall(n) for n in self._names.get(ticker, set()) | extra.get(ticker, set()))
            return {w[0].lower() for w in words if w}

        loose = [h for h in hits if not h[0] and h[1] == 1]
        drop: set[int] = set()
        for h in loose:
            same = [g for g in loose if key(g[3]) & key(h[3])]
            if min(g[2] for g in same) <= cutoff < max(g[2] for g in same):
                drop.add(id(h))
        return [h for h in hits if id(h) not in drop]

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
        cutoff = instance_cutoff(inst)
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
                pool = in_year or same
                if cutoff is not None and pool[0][0] <= cutoff < pool[-1][0]:
                    continue  # the same change on both sides of the cutoff: no evidence either way
                hits.append((bool(in_year), strength, *pool[0]))
        if cutoff is not None:
            hits = self._unambiguous(hits, cutoff, extra)
        if not hits:
            return None
        # prefer a change in a year the claim names, then a ticker symbol over a company name
        # ("Fiserv (FI)": FI's change, not FISV's), then the latest (both sides of a replacement)
        _, _, day, ticker, action = max(hits)
        verb = "added to" if action == "add" else "removed from"
        return GroundedVerdict(day, f"S&P 500 change: {ticker} {verb} the index on {day}", category="A1")
