"""Layer 1: grounded checks against point-in-time data the project holds (DESIGN §5).

A grounded check dates a claim from data, not from the model's word:

* a closing price "on D" is public on trading day D; the trading calendar and
  the closes come from the price table (a non-trading day is mapped to the last
  trading day on or before it, and the stated price is compared with the close);
* a statement of the instance's own outcome (category A4: the realised return of
  one of the companies over the window, or its price at the end of the window)
  is leaked by definition, dated at the end of the window;
* an S&P 500 addition or removal is dated at the recorded change date
  (:class:`IndexChangeGrounding`, category A1);
* a statement of the contract, decision or forecast resolution being predicted is the
  instance's own outcome (A4, leaked): :class:`ContractGrounding`,
  :class:`DecisionGrounding`, :class:`ResolutionGrounding`;
* company financial figures are dated by their EDGAR filing in
  :mod:`anachron.verify.edgar_grounding`; :class:`CompositeGrounding` chains checks.

Each check returns a :class:`GroundedVerdict` or None when it does not apply.
"""

from __future__ import annotations

import bisect
import datetime as dt
import re
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np
import pandas as pd

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


def mentioned_tickers(fact: str, tickers: list[str], names: list[str]) -> list[str]:
    """Tickers of the instance that ``fact`` names, by ticker symbol or company name.

    A ticker matches as an upper-case whole word; a company name matches on its
    first distinctive word (case-insensitive), e.g. "Marathon" for "Marathon Petroleum", "3M"
    for "3M Company" (a word may start with a digit).
    """
    out = []
    for t, name in zip(tickers, names):
        if re.search(rf"(?<![A-Za-z]){re.escape(t)}(?![A-Za-z])", fact):
            out.append(t)
            continue
        words = [w.rstrip(".") for w in re.findall(r"[A-Za-z0-9][A-Za-z0-9&'.-]+", name or "") if w.lower() not in GENERIC_NAME_WORDS]
        if words and re.search(rf"(?<![A-Za-z0-9]){re.escape(words[0])}(?![A-Za-z0-9])", fact, re.I):
            out.append(t)
    return out


GENERIC_NAME_WORDS = {"the", "inc", "inc.", "corp", "corp.", "corporation", "company", "co", "co.", "group", "holdings", "plc", "ltd"}


_MONEY = re.compile(r"\$\s?(\d+(?:,\d{3})*(?:\.\d+)?)\s*(million|mil|m|billion|bn|b|k)?\b", re.I)
_CONTRACT_WORDS = re.compile(r"\b(sign(?:ed|s|ing)?|contract|deal|agree(?:d|ment)|extension|re-signed|inked|aav|per year|annually)\b", re.I)
_DECISION_WORDS = re.compile(
    r"\b(ruled|held|decided|reversed|affirmed|vacated|remanded|sided with|struck down|upheld|"
    r"dissent(?:ed|ing)?|opinion of the court|\d-\d (?:vote|decision|ruling))\b",
    re.I,
)


STATES = (
    "Alabama|Alaska|Arizona|Arkansas|California|Colorado|Connecticut|Delaware|Florida|Georgia|Hawai[iʻ']?i|Idaho|"
    "Illinois|Indiana|Iowa|Kansas|Kentucky|Louisiana|Maine|Maryland|Massachusetts|Michigan|Minnesota|Mississippi|"
    "Missouri|Montana|Nebraska|Nevada|New\\s+Hampshire|New\\s+Jersey|New\\s+Mexico|New\\s+York|North\\s+Carolina|"
    "North\\s+Dakota|Ohio|Oklahoma|Oregon|Pennsylvania|Rhode\\s+Island|South\\s+Carolina|South\\s+Dakota|Tennessee|"
    "Texas|Utah|Vermont|Virginia|Washington|West\\s+Virginia|Wisconsin|Wyoming|Puerto\\s+Rico|Guam|"
    "District\\s+of\\s+Columbia|D\\.C\\.|State"
)
#: Courts below the U.S. Supreme Court: federal circuits and district courts, specialised
#: federal courts, and every state court ("the Colorado Supreme Court", "the Supreme Court of
#: Alabama", "the state appellate court", "the New York Court of Appeals").
LOWER_COURT = re.compile(
    rf"\b(?:(?:{STATES})(?:['’]s)?\s+(?:Supreme|Superior|High|Appellate|Appeals|Trial|District|Circuit|Family|Chancery)\s+Court"
    rf"|(?:Supreme|Superior|High)\s+Court\s+of\s+(?:the\s+State\s+of\s+|the\s+Commonwealth\s+of\s+)?(?:{STATES})"
    rf"|(?:{STATES})\s+Court\s+of\s+(?:Criminal\s+)?Appeals"
    r"|circuit(?:\s+court)?|courts?\s+of\s+(?:criminal\s+|civil\s+|special\s+)?appeals?|appeals?\s+courts?|appellate\s+(?:courts?|division|panel)"
    r"|district\s+courts?|trial\s+courts?|trial\s+judge|state\s+(?:supreme\s+|high\s+|highest\s+)?courts?|state['’]s\s+(?:highest|high|top)\s+court"
    r"|lower\s+courts?|bankruptcy\s+(?:court|judge|appellate\s+panel)|tax\s+court|court\s+of\s+(?:federal\s+)?claims"
    r"|court\s+of\s+international\s+trade|superior\s+courts?|magistrate(?:\s+judge)?|en\s+banc\s+court|three-judge\s+(?:district\s+)?court"
    r"|(?:the\s+)?(?:First|Second|Third|Fourth|Fifth|Sixth|Seventh|Eighth|Ninth|Tenth|Eleventh|D\.C\.|Federal)\s+Circuit)\b",
    re.I,
)
#: The U.S. Supreme Court ("the Court" with a capital C in a Supreme Court case). Matched after
#: lower courts are masked, so "the Supreme Court of Alabama" is not it.
_SUPREME = re.compile(
    r"\b(?:U\.?S\.?\s+Supreme\s+Court|United\s+States\s+Supreme\s+Court|(?i:the)\s+Supreme\s+Court|Supreme\s+Court\s+of\s+the\s+United\s+States"
    r"|Supreme\s+Court|(?<!of\s)Justices?(?!\s+Department)|SCOTUS|(?i:the)\s+(?:high\s+)?Court|(?i:the)\s+nation['’]s\s+(?:highest|top)\s+court|(?i:the)\s+high\s+court)\b"
)


def _money_values(text: str) -> list[tuple[float, float, bool]]:
    """Dollar amounts in ``text`` in USD with their precision: ``(value, half_unit, approx)``.

    ``half_unit`` is half a unit of the last digit written ("$25.5M" -> (25_500_000, 50_000));
    ``approx`` is True when the amount is hedged ("about $25M", "roughly $25M", "~$25M").
    """
    scale = {"million": 1e6, "mil": 1e6, "m": 1e6, "billion": 1e9, "bn": 1e9, "b": 1e9, "k": 1e3}
    out = []
    for m in _MONEY.finditer(text):
        digits = m[1].replace(",", "")
        decimals = len(digits.split(".")[1]) if "." in digits else 0
        k = scale.get((m[2] or "").lower(), 1.0)
        approx = bool(_APPROX.search(text[max(0, m.start() - 25) : m.start()]))
        out.append((float(digits) * k, 0.5 * 10 ** (-decimals) * k, approx))
    return out


_APPROX = re.compile(r"(?:\b(?:about|around|roughly|approximately|nearly|almost|close\s+to|some|over|more\s+than|under|less\s+than)\s*|~\s*)$", re.I)


_NAME_SUFFIXES = {"jr", "sr", "ii", "iii", "iv", "v"}


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
        parts = [w for w in name.split() if w.strip(".,").lower() not in _NAME_SUFFIXES]
        last = parts[-1] if parts else name.split()[-1]
        if surnames and len(last) >= 4 and re.search(rf"\b{re.escape(last)}\b", fact):
            return True
    return False


#: Team names by league: canonical abbreviation -> names a claim may use (nicknames and
#: abbreviations; matched case-sensitively as whole words).
_TEAMS: dict[str, dict[str, tuple[str, ...]]] = {
    "NBA": {
        "ATL": ("Hawks",), "BOS": ("Celtics",), "BKN": ("Nets", "BRK"), "CHA": ("Hornets", "CHO"),
        "CHI": ("Bulls",), "CLE": ("Cavaliers", "Cavs"), "DAL": ("Mavericks", "Mavs"), "DEN": ("Nuggets",),
        "DET": ("Pistons",), "GSW": ("Warriors", "GS"), "HOU": ("Rockets",), "IND": ("Pacers",),
        "LAC": ("Clippers",), "LAL": ("Lakers",), "MEM": ("Grizzlies",), "MIA": ("Heat",), "MIL": ("Bucks",),
        "MIN": ("Timberwolves", "Wolves"), "NOP": ("Pelicans", "NO"), "NYK": ("Knicks", "NY"),
        "OKC": ("Thunder",), "ORL": ("Magic",), "PHI": ("76ers", "Sixers"), "PHX": ("Suns", "PHO"),
        "POR": ("Blazers", "Trail Blazers"), "SAC": ("Kings",), "SAS": ("Spurs", "SA"), "TOR": ("Raptors",),
        "UTA": ("Jazz", "UTAH"), "WAS": ("Wizards", "WSH"),
    },
    "NHL": {
        "ANA": ("Ducks",), "ARI": ("Coyotes", "PHX"), "BOS": ("Bruins",), "BUF": ("Sabres",), "CGY": ("Flames",),
        "CAR": ("Hurricanes", "Canes"), "CHI": ("Blackhawks",), "COL": ("Avalanche",), "CBJ": ("Blue Jackets",),
        "DAL": ("Stars",), "DET": ("Red Wings",), "EDM": ("Oilers",), "FLA": ("Panthers",), "LAK": ("Kings", "LA"),
        "MIN": ("Wild",), "MTL": ("Canadiens", "Habs"), "NSH": ("Predators", "Preds"), "NJD": ("Devils", "NJ"),
        "NYI": ("Islanders",), "NYR": ("Rangers",), "OTT": ("Senators",), "PHI": ("Flyers",),
        "PIT": ("Penguins",), "SJS": ("Sharks", "SJ"), "SEA": ("Kraken",), "STL": ("Blues",),
        "TBL": ("Lightning", "TB"), "TOR": ("Maple Leafs", "Leafs"), "UTA": ("Utah Hockey Club", "Mammoth"),
        "VAN": ("Canucks",), "VGK": ("Golden Knights", "VEG"), "WSH": ("Capitals", "Caps", "WAS"),
        "WPG": ("Jets",),
    },
}


def _team_key(league: str | None, team: Any) -> str | None:
    """Canonical abbreviation of ``team`` (a nickname or abbreviation) in ``league``, or None."""
    if not isinstance(team, str) or not team.strip():
        return None
    t = team.strip()
    for lg, teams in _TEAMS.items():
        if league and lg != str(league).upper():
            continue
        for key, names in teams.items():
            if t.upper() == key or t in names or t.lower() in {n.lower() for n in names}:
                return key
    return None


def _teams_named(fact: str, league: str | None, skip: str = "") -> set[str]:
    """Canonical abbreviations of the teams of ``league`` named in ``fact`` (``skip``: text to
    ignore, e.g. the player's name, so "Jordan Wild" is not the Minnesota Wild)."""
    text = fact.replace(skip, " ") if skip else fact
    out: set[str] = set()
    for lg, teams in _TEAMS.items():
        if league and lg != str(league).upper():
            continue
        for key, names in teams.items():
            for n in (key, *names):
                if re.search(rf"(?<![A-Za-z0-9]){re.escape(n)}(?![A-Za-z0-9])", text):
                    out.add(key)
                    break
    return out


#: A stated contract amount matches the real one within half a unit of its last written digit
#: ("$27 million" for $27.25M) or this share of it; hedged amounts ("about $27M") within ``rel_tol``.
EXACT_REL_TOL = 0.01
#: A signing more than this long before the instance's signing date is an earlier contract.
PREVIOUS_CONTRACT_GAP = dt.timedelta(days=90)


class ContractGrounding:
    """Grounded checks for the salary task: a claim that states the instance's own contract.

    The instance context (``SalaryTask.grounding_context``) gives ``player``, ``league``,
    ``team``, ``previous_team``, ``signing_date``, ``aav``, ``total_value`` and ``years``. A
    claim naming the player (full name, or a surname of 4+ letters; "Jr."/"III" ignored), with
    contract words and a dollar amount matching the AAV or total value, is the outcome itself
    (category A4): leaked, dated at the signing date. An amount matches within the precision
    it is written with (half a unit of its last digit: "$27 million" matches $27.25M, "$7.25M"
    does not match $7M) or 1% (:data:`EXACT_REL_TOL`); a hedged amount ("about $27M") within
    ``rel_tol``.

    A player's earlier contract can have a similar amount; the claim is then not this one
    and the check does not apply (the rules layer dates it) when

    * every date the claim mentions ends more than :data:`PREVIOUS_CONTRACT_GAP` before the
      signing date and before the cutoff ("On July 7, 2017, the Heat signed ..."), or
    * it names a team of the league and not the new ``team`` (e.g. the ``previous_team``).
    """

    def __init__(self, rel_tol: float = 0.05):
        self.rel_tol = rel_tol

    def _earlier_contract(self, fact: str, instance: dict[str, Any]) -> str | None:
        """Why ``fact`` is about another contract of the player, or None."""
        signing = dt.date.fromisoformat(str(instance["signing_date"])[:10])
        cutoff_raw = instance.get("cutoff_date")
        cutoff = dt.date.fromisoformat(str(cutoff_raw)[:10]) if cutoff_raw else signing
        periods = find_periods(fact)
        limit = min(cutoff, signing - PREVIOUS_CONTRACT_GAP)
        if periods and all(p.end < limit for p in periods):
            return f"dated {periods[-1].text}, before the cutoff"
        league = instance.get("league")
        new_team = _team_key(league, instance.get("team"))
        if new_team is not None:
            named = _teams_named(fact, league, skip=str(instance.get("player") or ""))
            if named and new_team not in named:
                return f"names another team ({', '.join(sorted(named))})"
        return None

    def check(self, fact: str, instance: dict[str, Any]) -> GroundedVerdict | None:
        """A leaked A4 verdict dated at the signing when ``fact`` states this contract, else None."""
        player = instance.get("player")
        if not player or not _names_in(fact, [player], surnames=True) or not _CONTRACT_WORDS.search(fact):
            return None
        targets = [v for v in (instance.get("aav"), instance.get("total_value")) if v and v == v]
        for stated, half_unit, approx in _money_values(fact):
            for target in targets:
                tol = self.rel_tol * float(target) if approx else max(half_unit, EXACT_REL_TOL * float(target))
                if abs(stated - float(target)) <= tol:
                    if self._earlier_contract(fact, instance):
                        return None
                    day = dt.date.fromisoformat(str(instance["signing_date"])[:10])
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
    state) needs the Supreme Court named too.

    Rulings of lower courts are the case's history, not its outcome: each decision verb is
    given a subject, the court named by "by the ..." after it (passive) or else the nearest
    court named before it in the same sentence. A claim whose every decision verb has a lower
    court as subject ("Before the case reached the Supreme Court, the Sixth Circuit had ruled
    against ...", "the Supreme Court of Alabama ruled ...", "the state appellate court held
    ...") is not the outcome, even when the Supreme Court is named elsewhere. Lower courts
    are federal circuits, district and specialised courts and every state court
    (:data:`LOWER_COURT`); "the Supreme Court" is the U.S. Supreme Court only once state
    supreme courts are masked.
    """

    def check(self, fact: str, instance: dict[str, Any]) -> GroundedVerdict | None:
        """A leaked A4 verdict dated at the decision when ``fact`` states this case's ruling, else None."""
        verbs = list(_DECISION_WORDS.finditer(fact))
        if not verbs:
            return None
        courts = _court_mentions(fact)
        supreme = any(kind == "supreme" for _, _, kind in courts)
        subjects = [_verb_subject(fact, v, courts) for v in verbs]
        if subjects and all(s == "lower" for s in subjects):
            return None  # only lower courts rule here: history
        if _names_in(fact, [instance.get("case_name") or ""]):
            if not any(s == "supreme" for s in subjects) and not supreme and any(k == "lower" for _, _, k in courts):
                return None
        elif not (supreme and _names_in(fact, [instance.get("petitioner") or "", instance.get("respondent") or ""])):
            return None
        day = dt.date.fromisoformat(instance["decision_date"])
        return GroundedVerdict(day, f"states the Court's decision in this case (decided {day})", outcome=True, category="A4")


def _court_mentions(fact: str) -> list[tuple[int, int, str]]:
    """(start, end, "lower"|"supreme") of every court named in ``fact``, lower courts first
    (their spans are masked before the Supreme Court is looked for)."""
    out: list[tuple[int, int, str]] = []
    masked = fact
    for m in LOWER_COURT.finditer(fact):
        out.append((m.start(), m.end(), "lower"))
        masked = masked[: m.start()] + " " * (m.end() - m.start()) + masked[m.end() :]
    for m in _SUPREME.finditer(masked):
        out.append((m.start(), m.end(), "supreme"))
    return sorted(out)


_CLAUSE_BREAK = re.compile(r"[.;]\s|\b(?:but|while|whereas|although|then|and\s+then|before|after)\b", re.I)


def _verb_subject(fact: str, verb: re.Match[str], courts: list[tuple[int, int, str]]) -> str | None:
    """The kind of court that is the subject of one decision verb, or None if none is named.

    Passive "decided ... by the <court>" takes the court after "by" (within 80 characters,
    same clause); otherwise the nearest court that ends before the verb, provided no clause
    break ("but", "before", "; ") separates them.
    """
    after = fact[verb.end() : verb.end() + 80]
    by = re.search(r"\bby\s+(?:the\s+|a\s+)?", after)
    if by and not _CLAUSE_BREAK.search(after[: by.start()]):
        pos = verb.end() + by.end()
        for s, _, kind in courts:
            if pos - 4 <= s <= pos + 12:
                return kind
    before = [(s, e, k) for s, e, k in courts if e <= verb.start()]
    if before:
        s, e, kind = before[-1]
        if not _CLAUSE_BREAK.search(fact[e : verb.start()]):
            return kind
    return None


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
#: Words too common to identify a company on their own (first word of names like "American Airlines").
_COMMON_FIRST = {
    "american", "general", "united", "first", "national", "international", "southern", "western", "eastern",
    "northern", "global", "public", "universal", "consolidated", "federal", "standard", "capital", "digital",
    "advanced", "applied", "analog", "best", "church", "dollar", "equity", "fifth", "host", "live", "match",
    "news", "principal", "progressive", "prudential", "regions", "republic", "state", "target", "texas",
    "the", "travelers", "union", "waste", "water", "west", "valero", "ball", "crown", "discovery", "electronic",
}
_NAME_SUFFIX = re.compile(
    r"[,.]?\s+(?:inc\.?|incorporated|corp\.?|corporation|co\.?|company|ltd\.?|plc|group|holdings?|n\.?v\.?|s\.?a\.?|l\.?p\.?|class [a-z])$",
    re.I,
)


def _clean_name(name: str) -> str:
    prev = None
    name = str(name or "").strip()
    while prev != name:
        prev = name
        name = _NAME_SUFFIX.sub("", name).strip()
    return name


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

    def _mentions(self, text: str, ticker: str, names: set[str]) -> int:
        """2 if ``text`` names ``ticker`` by its symbol, 1 by a company name, 0 not at all."""
        if text.strip(" ()") == ticker:
            return 2  # the whole object of "added Q to the S&P 500"
        if len(ticker) >= 2 and re.search(rf"(?<![A-Za-z0-9.]){re.escape(ticker)}(?![A-Za-z0-9])", text):
            return 2
        if re.search(rf"\((?:NYSE:\s*|NASDAQ:\s*)?{re.escape(ticker)}\)", text):
            return 2
        for name in names:
            clean = _clean_name(name)
            if clean and re.search(rf"\b{re.escape(clean)}\b", text, re.I):
                return 1
            words = re.findall(r"[A-Za-z0-9][A-Za-z0-9&'.-]+", clean)
            first = words[0].rstrip(".") if words else ""
            if len(first) >= 4 and first.lower() not in _COMMON_FIRST and re.search(rf"\b{re.escape(first)}\b", text):
                return 1
        return 0

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
                strength = self._mentions(scope, ticker, names)
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


# ---------------------------------------------------------------------------
# Forecast resolutions
# ---------------------------------------------------------------------------

_STOP = set(
    """a an the of in on at by to for from with and or than then as is are be been being was were will would
    what which who whom whose that this these those it its their there here have has had do does did not no yes
    according wikipedia question probability resolve resolves resolved resolution date compared value its
    more less higher lower between before after during over under above below into per any each all some much
    many how when where why if about up down one two three four five six seven eight nine ten e g eg average
    day days total""".split()
)
_EXPLICIT_RESOLUTION = re.compile(
    r"\b(?:question|market|it)\s+(?:ultimately\s+|eventually\s+|finally\s+)?resolved\b|"
    r"\bresolved\s+(?:as\s+|to\s+)?(?:yes|no|positively|negatively|true|false|in\s+the\s+affirmative|in\s+the\s+negative)\b|"
    r"\bresolution\s*(?:was|:)\s*(?:yes|no|positive|negative)\b",
    re.I,
)
_OUTCOME_WORDS = re.compile(
    r"\b(?:ended\s+up|turned\s+out|ultimately|eventually|in\s+the\s+end|final(?:ly)?|by\s+the\s+deadline|"
    r"at\s+(?:the\s+)?resolution|on\s+the\s+resolution\s+date|as\s+of\s+the\s+resolution\s+date)\b",
    re.I,
)
_REALISED = re.compile(
    r"\b(?:was|were|had|did|didn['’]t|won|lost|rose|fell|grew|hit|reached|became|closed|finished|ended|occurred|"
    r"happened|remained|stayed|exceeded|surpassed|passed|failed|declined|increased|decreased|dropped|climbed|"
    r"gained|came|went|saw|took|beat|defeated|released|launched|developed|approved|signed|elected|qualified|"
    r"[a-z]{3,}ed)\b",
    re.I,
)
_HEDGED = re.compile(
    r"(?-i:\bwill\b|\bWill(?=\s+[a-z])|\bmay\b(?!\s+\d))|"  # modal will / may, not "Will Smith" or "May 3"
    r"\b(?:would|could|might|should|expect\w*|forecast\w*|predict\w*|project(?:s|ed|ion)|likely|unlikely|"
    r"probabilit\w*|chances?|odds|plans?|planned|aims?|hopes?|intends?|anticipat\w*|scheduled|set\s+to|"
    r"poised|bet(?:s|ting)?|priced|implied|if|whether|uncertain|unclear|goals?|pledged?|promised?|commit\w*|"
    r"this\s+(?:market|question)|refers?\s+to|can\s+resolve|to\s+count)\b",
    re.I,
)


_IRREGULAR = {
    "won": "win", "winning": "win", "wins": "win", "lost": "lose", "losing": "lose", "rose": "rise", "risen": "rise",
    "fell": "fall", "fallen": "fall", "grew": "grow", "grown": "grow", "became": "become", "held": "hold",
    "left": "leave", "took": "take", "taken": "take", "came": "come", "went": "go", "gone": "go", "saw": "see",
    "seen": "see", "made": "make", "got": "get", "ran": "run", "sold": "sell", "led": "lead", "met": "meet",
    "beat": "beat", "beaten": "beat", "hit": "hit", "kept": "keep", "built": "build", "began": "begin",
    "begun": "begin", "chose": "choose", "chosen": "choose", "spent": "spend", "paid": "pay", "reached": "reach",
}
#: Words that state a negative outcome of whatever the question asks ("Canada lost in the quarter-finals").
_NEGATIVE_OUTCOME = re.compile(
    r"\b(?:lost|los(?:e|es|ing)|eliminated|failed|missed|fell\s+short|did\s+not|didn['’]t|never|no\s+longer)\b", re.I
)


def _stem(word: str) -> str:
    w = word.lower().replace("’", "'")
    if w.endswith("'s"):
        w = w[:-2]
    if w in _IRREGULAR:
        w = _IRREGULAR[w]
    for suf in ("ing", "ed", "es", "s", "e"):
        if len(w) > len(suf) + 2 and w.endswith(suf):
            return w[: -len(suf)]
    return w


def _content(text: str) -> set[str]:
    """Stemmed content words of ``text`` (no stop words, no numbers: dates are anchors, not subject)."""
    return {_stem(w) for w in re.findall(r"[A-Za-z][A-Za-z'’]+", text) if w.lower() not in _STOP and len(w) > 1}


def _entities(question: str) -> set[str]:
    """Names in a question: capitalised words after the first word, tickers, quoted terms."""
    out: set[str] = set()
    for m in re.finditer(r"['‘\"“]([^'’\"”]{2,40})['’\"”]", question):
        out |= {_stem(w) for w in re.findall(r"[A-Za-z]+", m[1]) if w.lower() not in _STOP}
    words = re.findall(r"[A-Za-z][A-Za-z'’&.-]*", question)
    for w in words[1:]:
        core = w.rstrip(".")
        if core[:1].isupper() and core.lower() not in _STOP and core.lower() not in {"fide", "wikipedia"}:
            out.add(_stem(core))
    return {e for e in out if len(e) > 1}


#: The claim (outside quotes) gives an answer: "turned out to be yes", "resolved NO", "the answer
#: was no", "came out negative".
_ANSWER = re.compile(
    r"\b(?:resolved|resolves|resolution|answer(?:ed)?|outcome|result|turned\s+out|ended\s+up|came\s+out|was|is|proved|proven)\b"
    r"[^.;]{0,40}?\b(?:yes|no(?!\s+(?:longer|later|earlier|more|one|data|information|clear|date))|true|false|positive(?:ly)?|negative(?:ly)?|affirmative|in\s+the\s+negative|correct|incorrect)\b",
    re.I,
)
_QUOTE_SPANS = re.compile(r"\"([^\"]{12,})\"|“([^”]{12,})”|‘([^’]{12,})’")
#: A quoted question counts as the instance's own when it is its first this-many characters or more.
QUOTE_MIN_CHARS = 20


def _norm_q(text: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"[‘’]", "'", re.sub(r"[“”]", '"', text))).strip().lower()


_QUESTION_START = re.compile(r"^(?:will|what|which|who|how|when|is|are|does|do|did|has|have|according|by|in)\b", re.I)


def _quotes_question(fact: str, question: str) -> bool | None:
    """Whether ``fact`` quotes the instance's question.

    True: a quoted span that, without a trailing ellipsis, is the question's text or its first
    :data:`QUOTE_MIN_CHARS`+ characters (placeholders filled, whitespace and quote styles
    normalised). False: it quotes another question (a span that starts like a question or ends
    with "?" / an ellipsis). None: it quotes no question."""
    q = _norm_q(question)
    other = False
    for m in _QUOTE_SPANS.finditer(fact):
        raw = _norm_q(next(g for g in m.groups() if g))
        span = re.sub(r"\s*(?:\.\.\.|…)\s*$", "", raw).strip()
        if len(span) >= min(QUOTE_MIN_CHARS, len(q)) and q.startswith(span):
            return True
        if _QUESTION_START.match(span) or raw.endswith(("?", "...", "…")):
            other = True
    return False if other else None


class ResolutionGrounding:
    """Forecast task: a claim that states how the question itself resolved is the outcome (A4),
    leaked by definition and dated at the resolution date.

    The instance context (``ForecastTask.grounding_context``) gives ``question`` (placeholders
    filled), ``resolution_date``, ``resolved_to`` and ``cutoff_date``. Conservative by design
    (planted clean claims must stay clean): the claim must

    * quote the question (its text, or its first 20+ characters before an ellipsis) and give
      an answer outside the quote ("The answer to \"Will ...?\" turned out to be no"): the
      outcome, whatever else the claim says; otherwise
    * share the question's subject: at least half of the question's names (capitalised words,
      tickers, quoted terms; at least one) and at least ``min_overlap`` of its content words;
    * speak of the resolution itself: an explicit "resolved Yes/No", or outcome words ("ended
      up", "ultimately", "in the end", ...), or a realised (past-tense) statement anchored at the
      question's horizon: the resolution day or month, or a year the question names that is not
      over by the cutoff;
    * not be hedged or forward-looking ("will", "expected", "odds", ...; words inside quotation
      marks, such as a quoted question, do not count), and not be anchored
      only at a period that ended by the cutoff (that is history, not the resolution).
    """

    def __init__(self, min_overlap: float = 0.5):
        self.min_overlap = min_overlap

    def check(self, fact: str, instance: dict[str, Any]) -> GroundedVerdict | None:
        """Return a leaked A4 verdict at ``resolution_date`` when ``fact`` states the resolution."""
        question = str(instance.get("question") or "").split("\n\n")[0].strip()
        res_raw = instance.get("resolution_date")
        if not question or not res_raw:
            return None
        resolution = dt.date.fromisoformat(str(res_raw)[:10])
        cutoff = dt.date.fromisoformat(str(instance["cutoff_date"])[:10]) if instance.get("cutoff_date") else None
        explicit = bool(_EXPLICIT_RESOLUTION.search(fact))
        quoted = _quotes_question(fact, question)
        if quoted is True and _ANSWER.search(unquoted(fact)):
            return self._verdict(resolution, instance, "quotes the question and states its answer")
        if quoted is False:
            return None  # the claim is about another, quoted question
        if _HEDGED.search(unquoted(fact)) and not explicit:
            return None
        q_words, f_words = _content(question), _content(fact)
        if not q_words:
            return None
        ents = _entities(question)
        if ents and len(ents & f_words) < max(1, (len(ents) + 1) // 2):
            return None
        overlap = len(q_words & f_words) / len(q_words)
        if overlap < (self.min_overlap if not explicit else self.min_overlap / 2):
            return None
        periods = find_periods(fact)
        horizon = any(p.start <= resolution <= p.end and p.kind in ("day", "month") for p in periods)
        q_years = {p.start.year for p in find_periods(question) if p.kind in ("year", "fiscal_year")}
        open_years = {y for y in q_years if cutoff is None or dt.date(y, 12, 31) > cutoff}
        year_anchor = any(p.kind in ("year", "fiscal_year") and p.start.year in open_years for p in periods)
        history = bool(periods) and cutoff is not None and all(p.end <= cutoff for p in periods)
        if history and not explicit:
            return None
        realised = bool(_REALISED.search(fact))
        # the question's predicate (its content words that are not names) restated, or a negative outcome
        predicate = q_words - ents
        says_predicate = not predicate or bool(predicate & f_words) or bool(_NEGATIVE_OUTCOME.search(fact))
        outcome_words = bool(_OUTCOME_WORDS.search(fact))
        if not (
            explicit
            or (realised and horizon)
            or (realised and says_predicate and (outcome_words or year_anchor))
        ):
            return None
        return self._verdict(resolution, instance)

    @staticmethod
    def _verdict(resolution: dt.date, instance: dict[str, Any], how: str = "") -> GroundedVerdict:
        outcome = instance.get("resolved_to")
        note = f"; recorded resolution {outcome}" if outcome is not None else ""
        how = f"; {how}" if how else ""
        return GroundedVerdict(
            resolution,
            f"states how the question resolved (resolution date {resolution}){how}{note}",
            outcome=True,
            category="A4",
        )
