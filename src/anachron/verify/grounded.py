"""Layer 1: grounded checks against point-in-time data the project holds (DESIGN §5).

A grounded check dates a claim from data, not from the model's word:

* a closing price "on D" is public on trading day D; the trading calendar and
  the closes come from the price table (a non-trading day is mapped to the last
  trading day on or before it, and the stated price is compared with the close);
* a statement of the instance's own outcome (category A4: the realised return of
  one of the companies over the window, or its price at the end of the window)
  is leaked by definition, dated at the end of the window.

Each check returns a :class:`GroundedVerdict` or None when it does not apply.
"""

from __future__ import annotations

import bisect
import datetime as dt
import re
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from anachron.verify.dates import find_periods

_PRICE_WORDS = re.compile(r"\b(clos(?:e|ed|ing)|price[sd]?|traded|trading at|share price|stock price|opened|priced)\b", re.I)
_RETURN_WORDS = re.compile(
    r"\b(returns?|returned|gain(?:ed|s)?|rose|rise|risen|fell|fall(?:en)?|drop(?:ped)?|declin(?:e|ed)|"
    r"surg(?:e|ed)|plung(?:e|ed)|los[st]|outperform(?:ed)?|underperform(?:ed)?|up|down|increase[ds]?|decrease[ds]?)\b",
    re.I,
)
_PERCENT = re.compile(r"(-?\d+(?:\.\d+)?)\s?%")
_DOLLARS = re.compile(r"\$\s?(\d{1,3}(?:,\d{3})*(?:\.\d+)?|\d+(?:\.\d+)?)(?!\s*(?:million|billion|bn|m\b|b\b|trillion))", re.I)

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


class PriceGrounding:
    """Grounded checks for the stock task, backed by a daily price table.

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
                stock label (``returns``, ``first_day``, ``last_day``).
        """
        tickers = mentioned_tickers(fact, instance["tickers"], instance["names"])
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


def mentioned_tickers(fact: str, tickers: list[str], names: list[str]) -> list[str]:
    """Tickers of the instance that ``fact`` names, by ticker symbol or company name.

    A ticker matches as an upper-case whole word; a company name matches on its
    first distinctive word (case-insensitive), e.g. "Marathon" for "Marathon Petroleum".
    """
    out = []
    for t, name in zip(tickers, names):
        if re.search(rf"(?<![A-Za-z]){re.escape(t)}(?![A-Za-z])", fact):
            out.append(t)
            continue
        words = [w for w in re.findall(r"[A-Za-z][A-Za-z&'.-]+", name or "") if w.lower() not in _GENERIC]
        if words and re.search(rf"\b{re.escape(words[0])}\b", fact, re.I):
            out.append(t)
    return out


_GENERIC = {"the", "inc", "inc.", "corp", "corp.", "corporation", "company", "co", "co.", "group", "holdings", "plc", "ltd"}


_MONEY = re.compile(r"\$\s?(\d+(?:,\d{3})*(?:\.\d+)?)\s*(million|mil|m|billion|bn|b|k)?\b", re.I)
_CONTRACT_WORDS = re.compile(r"\b(sign(?:ed|s|ing)?|contract|deal|agree(?:d|ment)|extension|re-signed|inked|aav|per year|annually)\b", re.I)
_DECISION_WORDS = re.compile(
    r"\b(ruled|held|decided|reversed|affirmed|vacated|remanded|sided with|struck down|upheld|"
    r"dissent(?:ed|ing)?|opinion of the court|\d-\d (?:vote|decision|ruling))\b",
    re.I,
)


_LOWER_COURT = re.compile(r"\b(circuit|court of appeals|appeals court|district court|state supreme court|trial court)\b", re.I)
_SUPREME = re.compile(r"\b(U\.?S\.? Supreme Court|(?i:the) Supreme Court|Supreme Court of the United States|Justices?|SCOTUS)\b")


def _money_values(text: str) -> list[float]:
    """Dollar amounts in ``text`` in USD ("$25.5M" -> 25_500_000)."""
    scale = {"million": 1e6, "mil": 1e6, "m": 1e6, "billion": 1e9, "bn": 1e9, "b": 1e9, "k": 1e3}
    out = []
    for m in _MONEY.finditer(text):
        v = float(m[1].replace(",", ""))
        out.append(v * scale.get((m[2] or "").lower(), 1.0))
    return out


def _names_in(fact: str, names: list[str], *, surnames: bool = False) -> bool:
    """True if ``fact`` mentions any of ``names`` in full (case-insensitive), or, with
    ``surnames``, a capitalised last name of 4+ letters ("James" for "LeBron James")."""
    low = fact.lower()
    for name in names:
        name = str(name or "").strip()
        if not name:
            continue
        if name.lower() in low:
            return True
        last = name.split()[-1]
        if surnames and len(last) >= 4 and re.search(rf"\b{re.escape(last)}\b", fact):
            return True
    return False


class ContractGrounding:
    """Grounded checks for the salary task: a claim that states the instance's own contract.

    The instance context (``SalaryTask.grounding_context``) gives ``player``,
    ``signing_date``, ``aav``, ``total_value`` and ``years``. A claim naming the player,
    with contract words and a dollar amount within ``rel_tol`` of the AAV or total value,
    is the outcome itself (category A4): leaked, dated at the signing date.
    """

    def __init__(self, rel_tol: float = 0.05):
        self.rel_tol = rel_tol

    def check(self, fact: str, instance: dict[str, Any]) -> GroundedVerdict | None:
        player = instance.get("player")
        if not player or not _names_in(fact, [player], surnames=True) or not _CONTRACT_WORDS.search(fact):
            return None
        targets = [v for v in (instance.get("aav"), instance.get("total_value")) if v]
        for stated in _money_values(fact):
            for target in targets:
                if abs(stated - float(target)) <= self.rel_tol * float(target):
                    day = dt.date.fromisoformat(instance["signing_date"])
                    return GroundedVerdict(
                        day,
                        f"states the contract being predicted (${float(target):,.0f}, signed {day})",
                        outcome=True,
                        category="A4",
                    )
        return None


class DecisionGrounding:
    """Grounded checks for the legal task: a claim that states how the case was decided.

    The context (``LegalTask.grounding_context``) gives ``case_name``, ``petitioner``,
    ``respondent`` and ``decision_date``. A claim naming the case or a party together with
    decision language ("ruled", "reversed", "affirmed", "a 5-4 decision", ...) states the
    outcome (A4): leaked, dated at the decision date. Naming only a party (an agency, a
    state) needs the Supreme Court named too, and statements about the lower courts
    ("the Ninth Circuit affirmed") are history, not the outcome, unless the Supreme Court
    is named.
    """

    def check(self, fact: str, instance: dict[str, Any]) -> GroundedVerdict | None:
        if not _DECISION_WORDS.search(fact):
            return None
        supreme = bool(_SUPREME.search(fact))
        if _names_in(fact, [instance.get("case_name") or ""]):
            if _LOWER_COURT.search(fact) and not supreme:
                return None
        elif not (supreme and _names_in(fact, [instance.get("petitioner") or "", instance.get("respondent") or ""])):
            return None
        day = dt.date.fromisoformat(instance["decision_date"])
        return GroundedVerdict(day, f"states the Court's decision in this case (decided {day})", outcome=True, category="A4")
