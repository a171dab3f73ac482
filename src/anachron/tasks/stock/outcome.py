"""Stock: the window's outcome in any wording, checked against the window's true returns.

The outcome of a stock instance is the total return of each of its five companies over the
window (the first to the last trading day after the cutoff) and their ranking by it. A claim
states the outcome when what it says about the companies' performance is *the window's*:

* **its time scope** (:func:`time_scope`) is the window: a time reference that starts after
  the cutoff and not after the window's last day ("through May 2020", "from early December to
  June" with month names the window spans), or a phrase naming the window ("over the period",
  "the following six months"); or it has no time reference at all. A claim whose references
  all lie before the cutoff (or straddle it: "in 2019", "over the year to Nov. 29"), look back
  from it ("over the past year", "has outperformed"), or lie after the window, is about
  another period: not the outcome, whatever its numbers;
* **its assertions agree with the window's returns** (:func:`assertions`): a return figure
  ("fell 43%", "about 16 percent", "roughly halved", "lost a third") of a named company within
  :data:`RETURN_TOL_PP` of its window return (half the
  rounding step for "about 60%"; the sign too, when the wording gives one); a rank ("the
  weakest of the five", "held up best", "came out on top", "second-best", "the steepest
  decline"), a comparison ("outperformed X and Y", "trailed X"), an order ("from best to worst:
  A, B, C") or a sign ("the only two to finish higher", "all five ended lower") that the
  window's returns bear out.

A claim with no time reference needs a return figure that matches, or a rank, comparison or
order that names two of the companies, the group ("of the five", "in the group", "among
these"), the stock ("shares", "performer") or a move ("fell the most"); a claim whose scope is the window needs a
performance statement. No checkable assertion may be false. Company fundamentals (revenue,
earnings ...) and analysts' opinions are not the stock's performance. The close at the end of
the window is checked by the task's grounding (:mod:`anachron.tasks.stock.grounding`), which
has the price table.
"""

from __future__ import annotations

import bisect
import datetime as dt
import functools
import json
import re
from dataclasses import dataclass
from typing import Any, Mapping

from anachron.names import ticker_mentions
from anachron.verify.dates import find_periods
from anachron.verify.features import LOOKING_BACK, as_list, context_cutoff, yearless_months
from anachron.verify.layers.rules import date_scopes
from anachron.words import HEDGE_SPECULATIVE, PRESENT_PERFECT

#: Tolerance of a stated return against the window's realised return, in percentage points.
RETURN_TOL_PP = 1.0
#: Tolerance of a return stated as a fraction in words ("halved", "lost a third"), relative to it.
WORD_FRACTION_REL_TOL = 0.1
#: A reference that ends at most this many days before the window's first trading day is its
#: starting point ("from Nov. 29 to June 1": the base close of the window's return).
BASE_DAY_SLACK = 7

_UP = (
    r"ros[e]|rise[sn]?|rising|gain(?:ed|s|ing|ers?)?|climb(?:ed|s|ing)?|jump(?:ed|s)?|surg(?:e|ed|es|ing)|soar(?:ed|s|ing)?|"
    r"rall(?:y|ied|ies)|rebound(?:ed|s)?|advanc(?:e|ed|es)|increase[ds]?|appreciat(?:ed|es)|add(?:ed|s)|"
    r"higher|up|positive|green|doubled|tripled|recover(?:ed|s)?|firmed|strengthened|edged\s+(?:up|higher)"
)
_DOWN = (
    r"fell|fall(?:en|s|ing)?|drop(?:ped|s|ping)?|declin(?:e|ed|es|ing)|slid(?:e|es)?|sank|sunk|sinks?|"
    r"plung(?:e|ed|es)|plummet(?:ed|s)?|tumbl(?:e|ed|es)|slump(?:ed|s)?|lost|los(?:e|es|ing)|loss(?:es)?|losers?|decliners?|"
    r"shed|crash(?:ed|es)?|decrease[ds]?|depreciat(?:ed|es)|lower|down|negative|red|halved|slipped|eroded|"
    r"(?:gave|give[sn]?|giving)\s+up|wiped\s+out|dip(?:ped|s)?|retreat(?:ed|s)?|weakened|edged\s+(?:down|lower)"
)
_DIRECTION = re.compile(rf"\b(?:(?P<up>{_UP})|(?P<down>{_DOWN}))\b", re.I)
#: A return figure: "-16.3%", "43 percent", "12 per cent" (not "percentage points").
_PERCENT = re.compile(r"(?<![\w.])([+\-−]?\d+(?:\.\d+)?)\s?(?:%|percent\b(?!age)|per\s+cent\b|pct\b)", re.I)
#: Words that make a figure approximate or a bound ("about 60%", "more than 40%", "just over").
_APPROX = (
    r"(?:about|roughly|around|nearly|almost|some|approximately|close\s+to|more\s+than|less\s+than|over|under|"
    r"(?:just|a\s+little|slightly)\s+(?:over|under|more\s+than|less\s+than))"
)
_APPROX_BEFORE = re.compile(rf"\b{_APPROX}\s*$", re.I)
#: A return stated as a fraction in words, with its value in percent.
_LOSS_VERB = r"(?:lost|shed|erased|gave\s+up|wiped\s+out)\s+(?:" + _APPROX + r"\s+)?"
_WORD_FRACTIONS = (
    (re.compile(rf"\b(?:(?:roughly\s+|nearly\s+|almost\s+|about\s+)?halved|halving|cut\s+in\s+half|{_LOSS_VERB}half)\b", re.I), -50.0),
    (re.compile(rf"\b{_LOSS_VERB}(?:a|one)[- ]third\b", re.I), -100.0 / 3),
    (re.compile(rf"\b{_LOSS_VERB}two[- ]thirds\b", re.I), -200.0 / 3),
    (re.compile(rf"\b{_LOSS_VERB}(?:a|one)[- ]quarter\b", re.I), -25.0),
    (re.compile(rf"\b{_LOSS_VERB}three[- ]quarters\b", re.I), -75.0),
    (re.compile(r"\bdoubled\b", re.I), 100.0),
    (re.compile(r"\btripled\b", re.I), 200.0),
)
#: Rank words: the best of the group or the worst; an ordinal before them counts from that end.
_BEST = (
    r"best|strongest|leader|led\s+(?:the|all|its|this|these)|first\s+place|number\s+one|most\s+resilient|"
    r"top(?:[- ]perform\w*|\s+(?:spot|place|of\s+the\s+(?:group|pack|list|ranking|table)))|(?:highest|top)\s+(?:total\s+)?return|"
    r"(?:on|at\s+the)\s+top"
)
_WORST = (
    r"worst|bottom|weakest|laggards?|last\s+place|lowest\s+(?:total\s+)?return|(?:at|on)\s+the\s+bottom|"
    r"(?:hit|hurt)\s+(?:the\s+)?hardest|hardest[- ]hit"
)
_ORDINAL = {"second": 2, "third": 3, "fourth": 4, "2nd": 2, "3rd": 3, "4th": 4}
_RANK = re.compile(
    rf"\b(?:(?P<ord>second|third|fourth|2nd|3rd|4th)[- ](?:\w+[- ])?)?(?:(?P<best>{_BEST})|(?P<worst>{_WORST}))\b", re.I
)
#: A superlative of size ("the steepest", "the group's smallest", "fell the most"): the best or
#: the worst depending on the direction of the move it qualifies (:func:`_size_rank`).
_SIZE = re.compile(
    r"\b(?:the|group's|sector's|its|their)\s+(?:\w+(?:'s)?\s+)?(?:(?P<ord>second|third|fourth|2nd|3rd|4th)[- ])?"
    r"(?:(?P<big>biggest|largest|steepest|deepest|sharpest|heaviest|greatest|furthest|farthest|hardest|most\s+severe|"
    r"most|strongest)|(?P<small>smallest|mildest|shallowest|slightest|least|fewest|narrowest))\b",
    re.I,
)
#: "ranked third", "finished fourth of the five"
_RANKED = re.compile(r"\b(?:ranked|placed|came\s+in|finished)\s+(?P<n>first|second|third|fourth|fifth|last|1st|2nd|3rd|4th|5th)\b", re.I)
_PLACE = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4, "fifth": 5, "5th": 5}
#: A comparison: the subject above (+1) or below (-1) the companies named after the verb.
_COMPARE = re.compile(
    r"\b(?:(?P<above>outperform(?:ed|s|ing)?|outpac(?:ed|es)|outstripp?(?:ed|s)|beat|bested|topped|ahead\s+of|"
    r"(?:did|fared|held\s+up|performed)\s+better\s+than|(?:rose|gained|climbed)\s+(?:more|further|higher)\s+than|"
    r"(?:fell|dropped|declined|lost|sank)\s+less\s+than)"
    r"|(?P<below>underperform(?:ed|s|ing)?|trail(?:ed|s|ing)|lagg?(?:ed|s|ing)(?:\s+behind)?|(?:finished|ended|came\s+in)\s+behind|"
    r"(?:did|fared|held\s+up|performed)\s+worse\s+than|(?:fell|dropped|declined|lost|sank)\s+(?:more|further|farther|lower)\s+than|"
    r"(?:rose|gained|climbed)\s+less\s+than))\b",
    re.I,
)
#: A sign over the window: "finished higher", "ended the period in the red", "was up", "to gain".
_UP_STATE = r"higher|up|in\s+(?:positive\s+territory|the\s+green|the\s+black)"
_DOWN_STATE = r"lower|down|in\s+(?:negative\s+territory|the\s+red)"
_SIGN = re.compile(
    rf"\b(?:finish(?:ed|es)?|end(?:ed|s)?|clos(?:ed|es)|came\s+out)\s+(?:the\s+\w+(?:\s+\w+)?\s+)?(?:with\s+a\s+)?"
    rf"(?:(?P<up>{_UP_STATE}|gain|positive)|(?P<down>{_DOWN_STATE}|loss|negative))\b"
    rf"|\b(?:was|were|is|are|stood)\s+(?:(?P<up1>{_UP_STATE})|(?P<down1>{_DOWN_STATE}))\b"
    rf"|\bto\s+(?:(?P<up2>gain|rise|advance|finish\s+(?:\w+\s+){{0,2}}?(?:{_UP_STATE}))"
    rf"|(?P<down2>lose|fall|decline|finish\s+(?:\w+\s+){{0,2}}?(?:{_DOWN_STATE})))\b",
    re.I,
)
#: "the only two", "the only one": the named companies are all that did so.
_ONLY = re.compile(r"\b(?:the\s+)?only\s+(?:ones?|two|three|four|names?|stocks?|compan(?:y|ies)|members?)\b", re.I)
#: The group as a whole: "of the five", "in the group", "among these", "its peers".
_GROUP = re.compile(
    r"\b(?:of|among|in|within|across)\s+(?:the|these|this|those|its|their|all)\s+(?:\w+\s+){0,3}?"
    r"(?:five|four|group|set|names|companies|stocks|peers|members|bunch|basket|quintet|list|sector|others)\b"
    r"|\bamong\s+(?:these|those|the\s+five|this\s+group)\b"
    r"|\b(?:the\s+(?:rest|others|other\s+four|group|five)|its\s+peers|their\s+peers|peer\s+group)\b",
    re.I,
)
#: Nouns of the stock (as opposed to the business): with a business figure in the claim, one
#: of these must be there for a performance statement.
_STOCK_NOUN = re.compile(
    r"\b(?:shares?|stocks?|returns?|returned|perform\w*|share\s+price|stock\s+price|market\s+value|"
    r"market\s+cap\w*|investors?|shareholders?|traded|trading)\b",
    re.I,
)
#: Business figures and attributes: a statement about them is not the stock's performance.
FUNDAMENTAL = re.compile(
    r"\b(?:revenues?|sales|earnings|eps|net\s+income|net\s+loss|income|profits?|margins?|ebitda|cash\s+flows?|"
    r"deliveries|production|output|demand|dividends?|debt|guidance|bookings|subscribers|users|headcount|"
    r"employees|workforce|market\s+share|capex|spending|costs?|volumes?|yield|payout|ratings?|credit|"
    r"balance\s+sheets?|leverage|reserves|customers|orders|backlog|capacity|estimates?|forecasts?)\b",
    re.I,
)
#: Opinions of the stock (analysts' ranks and ratings), or a rank by size: not its performance.
_OPINION = re.compile(
    r"\b(?:analysts?|rated|ratings?|recommend\w*|upgrad\w*|downgrad\w*|price\s+targets?|top\s+picks?|consensus|"
    r"overweight|underweight)\b"
    r"|\bby\s+(?:market\s+(?:cap\w*|value)|size|index\s+weight\w*|weight\w*|assets|revenues?|sales|headcount|employees)\b",
    re.I,
)
#: A phrase naming the window itself.
WINDOW_PHRASE = re.compile(
    r"\b(?:over|during|across|through(?:out)?|in|by\s+the\s+end\s+of|at\s+the\s+end\s+of|end(?:ed|s)?|finish(?:ed|es)?|for)\s+"
    r"the\s+(?!(?:same|prior|previous|preceding|earlier|year-ago|comparable|last)\b)(?:\w+\s+)?"
    r"(?:window|period|horizon|ranking\s+period|evaluation\s+period|prediction\s+period|forecast\s+period)\b"
    r"|\b(?:over|during|in|across|for)\s+the\s+(?:following|next|subsequent|ensuing|coming)\s+"
    r"(?:(?:\w+|\d+)[- ])?(?:months?|weeks?|quarters?|half[- ]year|year|half|semester)\b"
    r"|\b(?:over|in|during)\s+the\s+(?:\w+[- ])?(?:month|week)s?\s+(?:that\s+)?(?:followed|after(?:wards?)?|since)\b",
    re.I,
)
#: A time before the window named by its relation to it ("in the month before the cutoff").
_BEFORE_WINDOW = re.compile(
    r"\b(?:before|prior\s+to|ahead\s+of|leading\s+up\s+to|in\s+the\s+run-up\s+to)\s+(?:the\s+)?(?:cut-?off|window|period|start)\b"
    r"|\b(?:to|up\s+to|until|through|ending|ended|at)\s+the\s+cut-?off\b",
    re.I,
)
#: The whole group as the subject ("all five", "each of the five", "none of the five").
_WHOLE_GROUP = re.compile(
    r"\b(?:(?P<all>all|every(?:\s+one)?|each)(?:\s+of)?\s+(?:the\s+|these\s+|those\s+)?(?:five|four|\w+\s+)?"
    r"(?:stocks|names|companies|members|shares|five)|(?P<none>none|not\s+one)\s+of\s+(?:the\s+|these\s+|those\s+)?(?:five|\w+\s+)?"
    r"(?:stocks|names|companies|members|five))\b",
    re.I,
)
#: An order of the companies: "the ranking was A, B, C", "from best to worst: A, B, C".
_ORDER = re.compile(
    r"\b(?:rank(?:ing|ed)|order(?:ed)?|finishing\s+order|(?P<rev>worst|weakest)\s+to\s+(?:best|strongest)|"
    r"(?:best|strongest)\s+to\s+(?:worst|weakest))\b",
    re.I,
)
#: Any word of performance at all (a quick test before the assertions are read).
_TRIGGER = re.compile(
    re.sub(r"\(\?P<\w+>", "(?:", "|".join(
        p.pattern for p in (_DIRECTION, _PERCENT, _RANK, _SIZE, _RANKED, _COMPARE, _ORDER, *(f for f, _ in _WORD_FRACTIONS))
    )),
    re.I,
)
#: Where a clause ends for the subject of an assertion.
_CLAUSE_BREAK = re.compile(r"[;:]|,\s+(?:while|whereas|but|and|as)\b|\b(?:while|whereas|but)\b")


@dataclass(frozen=True)
class Window:
    """The instance's window and its outcome.

    Attributes:
        cutoff: the day before the window.
        first_day, last_day: the window's first and last trading day.
        returns: ticker -> total return over the window (a fraction, -0.18 = -18%).
        tickers, names: the instance's companies, paired in order.
        months: the month numbers the window spans, None when it spans a year or more (a month
            name then says nothing).
    """

    cutoff: dt.date
    first_day: dt.date
    last_day: dt.date
    returns: Mapping[str, float]
    tickers: tuple[str, ...]
    names: tuple[str, ...]
    months: frozenset[int] | None

    def __hash__(self) -> int:  # a value hash (``returns`` is a mapping): findings are cached by window
        return hash((self.cutoff, self.first_day, self.last_day, tuple(sorted(self.returns.items())), self.tickers, self.names))

    def rank(self, ticker: str) -> int:
        """1-based place of ``ticker`` by window return, best first."""
        r = self.returns[ticker]
        return 1 + sum(1 for t, x in self.returns.items() if t != ticker and x > r)


def window_of(context: Mapping[str, Any]) -> Window | None:
    """The :class:`Window` of a stock grounding context (``cutoff_date``, ``tickers``, ``names``
    and ``label`` with ``returns``, ``first_day``, ``last_day``; ``label`` may be a JSON string),
    or None when any of them is missing or unreadable."""
    label = context.get("label") or {}
    if isinstance(label, str):
        try:
            label = json.loads(label)
        except ValueError:
            return None
    cutoff = context_cutoff(context)
    if not isinstance(label, dict) or cutoff is None:
        return None
    try:
        first = dt.date.fromisoformat(str(label["first_day"])[:10])
        last = dt.date.fromisoformat(str(label["last_day"])[:10])
        returns = {str(t): float(r) for t, r in (label.get("returns") or {}).items()}
    except (KeyError, ValueError, TypeError):
        return None
    tickers, names = as_list(context.get("tickers")), as_list(context.get("names"))
    if not returns or not tickers:
        return None
    span = 12 * (last.year - first.year) + last.month - first.month
    months = frozenset((first.month - 1 + i) % 12 + 1 for i in range(span + 1)) if span < 11 else None
    return Window(cutoff, first, last, returns, tuple(tickers), tuple(names), months)


# -- time scope -----------------------------------------------------------------------------


def time_scope(text: str, w: Window) -> str:
    """Which period ``text`` speaks of, relative to the window: ``"window"`` (a reference inside
    it, or a phrase naming it, and none elsewhere but the base day just before it), ``"other"``
    (references before the cutoff, straddling it, or after the window, and none inside), or
    ``"none"`` (no time reference). A reference that looks back from the cutoff ("over the
    past year", "year to date"), or the present perfect ("has outperformed") without a
    reference inside the window, is other; so is a date the grammar places in a plan or an
    expectation (:func:`~anachron.verify.layers.rules.date_scopes`: "closing expected in Q1 2020").

    Month names without a year count, in a claim with no dated reference, as inside when the
    window (shorter than a year) spans that month, else as other; "Aug. 30" counts as its
    month. (With a dated reference, "between Aug. 3 and Feb. 26, 2021", that reference says
    which year.)"""
    inside = other = base = False
    periods = find_periods(text)
    scopes = date_scopes(text, [(p.pos, p.pos + len(p.text)) for p in periods]) if periods else []
    for p, scope in zip(periods, scopes):
        if scope == "prospective":
            other = True  # a plan or expectation for the window ("closing expected in Q1 2020") is no move in it
        elif w.cutoff < p.start <= w.last_day:
            inside = True
        elif p.kind == "day" and p.end <= w.cutoff and (w.first_day - p.end).days <= BASE_DAY_SLACK:
            base = True  # the base close of the window's return, if the claim reaches into the window
        else:
            other = True
    for month in yearless_months(text, periods) if w.months is not None and not periods else ():
        if month in w.months:
            inside = True
        else:
            other = True
    if WINDOW_PHRASE.search(text):
        inside = True
    if LOOKING_BACK.search(text) or _BEFORE_WINDOW.search(text) or (PRESENT_PERFECT.search(text) and not inside):
        other = True
    if inside and not other:
        return "window"
    if other or base:
        return "other"
    return "none"


# -- assertions -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Assertion:
    """One checkable statement about the window's outcome and whether the returns bear it out.

    ``kind``: ``return`` (a figure), ``rank``, ``compare``, ``order`` or ``sign``; ``holds``: True when
    the window's returns agree; ``note``: what was checked, for the verdict's reason."""

    kind: str
    holds: bool
    note: str


def _subjects(spans: dict[str, list[int]], lo: int, hi: int) -> list[str]:
    """Tickers mentioned in ``text[lo:hi]``, in order of first mention."""
    found = sorted((min(p for p in at if lo <= p < hi), t) for t, at in spans.items() if any(lo <= p < hi for p in at))
    return [t for _, t in found]


@functools.lru_cache(maxsize=256)
def _breaks(text: str) -> tuple[int, ...]:
    """Where the clause breaks of ``text`` (:data:`_CLAUSE_BREAK`) end, in order."""
    return tuple(m.end() for m in _CLAUSE_BREAK.finditer(text))


def _clause_start(text: str, pos: int) -> int:
    """Start of the clause that holds ``pos`` (after the last ';', ':', ', while' ... before it)."""
    ends = _breaks(text)
    i = bisect.bisect_right(ends, pos)
    return ends[i - 1] if i else 0


def _subject_before(text: str, spans: dict[str, list[int]], pos: int) -> str | None:
    """The company named last before ``pos`` in its clause, else the first named after it."""
    lo = _clause_start(text, pos)
    before = [(p, t) for t, at in spans.items() for p in at if lo <= p < pos]
    if before:
        return max(before)[1]
    after = [(p, t) for t, at in spans.items() for p in at if p >= pos]
    return min(after)[1] if after else None


def _direction_near(text: str, start: int, end: int) -> int:
    """+1 / -1 for the direction word nearest the figure at ``text[start:end]`` within its
    clause (the last before it, else the first after it), 0 when there is none."""
    lo = _clause_start(text, start)
    nxt = _CLAUSE_BREAK.search(text, end)
    hi = nxt.start() if nxt else len(text)
    before = [m for m in _DIRECTION.finditer(text, lo, start)]
    pick = before[-1] if before else _DIRECTION.search(text, end, hi)
    if pick is None:
        return 0
    return 1 if pick["up"] else -1


def _figure_tolerance(text: str, start: int, value: float) -> float:
    """Tolerance of a stated return in percentage points: :data:`RETURN_TOL_PP`, or half its
    rounding step when an approximation word comes before it ("about 60%": +-5, "roughly 45%":
    +-2.5)."""
    if not _APPROX_BEFORE.search(text[max(0, start - 30):start]):
        return RETURN_TOL_PP
    step = 10.0 if value % 10 == 0 else 5.0 if value % 5 == 0 else 1.0
    return max(RETURN_TOL_PP, step / 2)


def _return_assertions(text: str, spans: dict[str, list[int]], w: Window) -> list[Assertion]:
    """Return figures (percentages, fractions in words), each of the company named last before
    it in its clause (else the first after it); figures of the business are left out."""
    figures: list[tuple[int, int, float, float, int]] = []  # start, end, value (pp), tolerance, sign
    for m in _PERCENT.finditer(text):
        raw = m[1].replace("−", "-")
        value = float(raw)
        sign = -1 if raw.startswith("-") else (1 if raw.startswith("+") else _direction_near(text, m.start(), m.end()))
        figures.append((m.start(), m.end(), abs(value), _figure_tolerance(text, m.start(), value), sign))
    for pattern, value in _WORD_FRACTIONS:
        for m in pattern.finditer(text):
            tol = max(RETURN_TOL_PP, WORD_FRACTION_REL_TOL * abs(value))
            figures.append((m.start(), m.end(), abs(value), tol, 1 if value > 0 else -1))
    out = []
    for start, end, value, tol, sign in figures:
        lo = _clause_start(text, start)
        if FUNDAMENTAL.search(text, lo, end):
            continue  # "revenue fell 12%": the business, not the stock
        t = _subject_before(text, spans, start)
        if t is None or t not in w.returns:
            continue
        realised = 100.0 * w.returns[t]
        holds = abs(value - abs(realised)) <= tol and (sign == 0 or sign * realised >= 0 or abs(realised) <= tol)
        out.append(Assertion("return", holds, f"{t} stated {'+-'[sign < 0] if sign else ''}{value:.1f}%, window return {realised:+.1f}%"))
    return out


def _size_rank(text: str, m: re.Match[str], n: int) -> int | None:
    """The place a size superlative states: 1 for the biggest rise or the smallest fall, ``n``
    for the biggest fall or the smallest rise (an ordinal counts from that end: "the
    second-steepest fall" is ``n - 1``); None when no move is near it (the three words
    after it, else the six before it in its clause: "the steepest decline", "its decline was
    the steepest", "fell the most")."""
    after = re.match(r"(?:\W+\w+){0,3}", text[m.end():])
    d = _DIRECTION.search(after[0]) if after else None
    if d is None:
        lo = _clause_start(text, m.start())
        before = list(_DIRECTION.finditer(" ".join(text[lo:m.start()].split()[-6:])))
        d = before[-1] if before else None
    if d is None:
        return None
    k = _ORDINAL.get((m["ord"] or "").lower(), 1)
    return k if bool(d["up"]) == bool(m["big"]) else n + 1 - k


def _rank_assertions(text: str, spans: dict[str, list[int]], w: Window) -> list[Assertion]:
    """Ranks, comparisons and signs, each with its subjects: the companies named before it in
    its clause since the previous assertion, else the first named after it in its clause, else
    those of the previous assertion."""
    found: list[tuple[int, int, str, Any]] = []
    order = _ORDER.search(text)
    for m in _RANK.finditer(text):
        if order is not None and order.start() <= m.start() < order.end():
            continue  # "from best to worst": an order follows, not a rank
        k = _ORDINAL.get((m["ord"] or "").lower(), 1)
        found.append((m.start(), m.end(), "rank", k if m["best"] else len(w.returns) + 1 - k))
    for m in _SIZE.finditer(text):
        place = _size_rank(text, m, len(w.returns))
        if place is not None:
            found.append((m.start(), m.end(), "rank", place))
    for m in _RANKED.finditer(text):
        n = m["n"].lower()
        found.append((m.start(), m.end(), "rank", len(w.returns) if n == "last" else _PLACE[n]))
    for m in _COMPARE.finditer(text):
        found.append((m.start(), m.end(), "compare", 1 if m["above"] else -1))
    for m in _SIGN.finditer(text):
        found.append((m.start(), m.end(), "sign", 1 if (m["up"] or m["up1"] or m["up2"]) else -1))
    found.sort()
    out: list[Assertion] = []
    prev_end, prev_subjects = 0, []
    for i, (start, end, kind, arg) in enumerate(found):
        # the companies named before it in its clause (since the previous statement), else the
        # first named after it in its clause ("the worst was X"), else the previous subjects
        subjects = _subjects(spans, max(prev_end, _clause_start(text, start)), start)
        if not subjects and kind != "compare":
            brk = _CLAUSE_BREAK.search(text, end)
            nxt = min(found[i + 1][0] if i + 1 < len(found) else len(text), brk.start() if brk else len(text))
            subjects = _subjects(spans, end, nxt)[:1]
        subjects = subjects or prev_subjects
        if not subjects:
            continue
        if kind == "rank":
            for t in subjects:
                out.append(Assertion("rank", w.rank(t) == arg, f"{t} placed {w.rank(t)} of {len(w.returns)}, stated {arg}"))
        elif kind == "compare":
            nxt = found[i + 1][0] if i + 1 < len(found) else len(text)
            brk = _CLAUSE_BREAK.search(text, end, nxt)
            others = [t for t in _subjects(spans, end, brk.start() if brk else nxt) if t not in subjects]
            if not others and _GROUP.search(text, end, nxt):
                others = [t for t in w.returns if t not in subjects]
            for t in subjects:
                for o in others:
                    holds = (w.returns[t] - w.returns[o]) * arg > 0
                    out.append(Assertion("compare", holds, f"{t} {'above' if arg > 0 else 'below'} {o} stated"))
        else:
            only = _ONLY.search(text)
            for t in subjects:
                out.append(Assertion("sign", w.returns[t] * arg > 0, f"{t} {'up' if arg > 0 else 'down'} stated"))
            rest = [t for t in w.returns if t not in subjects]
            if only and rest:
                holds = all(w.returns[t] * arg <= 0 for t in rest)
                out.append(Assertion("sign", holds, f"none of {', '.join(rest)} {'up' if arg > 0 else 'down'} stated"))
        prev_end, prev_subjects = end, subjects
    return out


def mentions(text: str, w: Window) -> dict[str, list[int]]:
    """Where ``text`` names the window's companies: ticker -> offsets (:func:`~anachron.names.ticker_mentions`)."""
    return {t: at for t, at in ticker_mentions(text, list(w.tickers), list(w.names)).items() if t in w.returns}


def _order_assertions(text: str, spans: dict[str, list[int]], w: Window) -> list[Assertion]:
    """An order of three or more companies after "ranking" / "best to worst" ...: the order of
    their first mentions after it is the window's (reversed for "worst to best")."""
    m = _ORDER.search(text)
    if m is None:
        return []
    firsts = sorted((min(p for p in at if p >= m.start()), t) for t, at in spans.items() if any(p >= m.start() for p in at))
    if len(firsts) < 3:
        return []
    stated = [t for _, t in firsts]
    true = sorted(stated, key=lambda t: -w.returns[t])
    if m["rev"]:
        true.reverse()
    return [Assertion("order", stated == true, f"order stated {', '.join(stated)}; window order {', '.join(true)}")]


def _group_assertions(text: str, w: Window) -> list[Assertion]:
    """A sign of the whole group ("all five ended lower", "none of the five gained"): every
    company's window return has that sign (none has it)."""
    out = []
    for g in _WHOLE_GROUP.finditer(text):
        brk = _CLAUSE_BREAK.search(text, g.end())
        hi = brk.start() if brk else len(text)
        sign = _SIGN.search(text, g.end(), hi)
        d = _DIRECTION.search(text, g.end(), hi) if sign is None else None
        if sign is not None:
            arg = 1 if (sign["up"] or sign["up1"] or sign["up2"]) else -1
        elif d is not None:
            arg = 1 if d["up"] else -1
        else:
            continue
        if g["none"]:
            holds = all(r * arg <= 0 for r in w.returns.values())
        else:
            holds = all(r * arg > 0 for r in w.returns.values())
        out.append(Assertion("sign", holds, f"{'none' if g['none'] else 'all'} of the group {'up' if arg > 0 else 'down'} stated"))
    return out


def assertions(text: str, w: Window, spans: dict[str, list[int]] | None = None) -> list[Assertion]:
    """Every checkable statement of ``text`` about the window's returns (see the module docstring);
    ``spans``: :func:`mentions` when already known."""
    spans = mentions(text, w) if spans is None else spans
    if not spans:
        return _group_assertions(text, w)
    return _return_assertions(text, spans, w) + _rank_assertions(text, spans, w) + _order_assertions(text, spans, w)


# -- the finding ----------------------------------------------------------------------------


@dataclass(frozen=True)
class OutcomeFinding:
    """A claim found to state the window's outcome: the categoriser's ``rule`` and why."""

    rule: str
    reason: str


def find_outcome(text: str, context: Mapping[str, Any], window: Window | None = None) -> OutcomeFinding | None:
    """Whether ``text`` states the window's outcome (see the module docstring), or None.

    The finding depends on the text and the window only, and is cached by both: the claim
    categoriser and the stock grounding check ask about the same claim and window, and the
    second question costs a look-up.

    Args:
        text: the claim.
        context: the stock grounding context (:meth:`~anachron.tasks.stock.task.StockTask.grounding_context`).
        window: its :func:`window_of`, when already known.
    """
    w = window or window_of(context)
    if w is None or not isinstance(text, str):
        return None
    return _find_outcome(text, w)


@functools.lru_cache(maxsize=8192)
def _find_outcome(text: str, w: Window) -> OutcomeFinding | None:
    spans = mentions(text, w)
    if not (spans or _WHOLE_GROUP.search(text)) or not _TRIGGER.search(text) or HEDGE_SPECULATIVE.search(text):
        return None
    found = assertions(text, w, spans)
    wrong = [a for a in found if not a.holds]
    right = [a for a in found if a.holds]
    if wrong or _OPINION.search(text) or (FUNDAMENTAL.search(text) and not _STOCK_NOUN.search(text)):
        return None
    if not right and not _DIRECTION.search(text):
        return None
    scope = time_scope(text, w)
    if scope == "other":
        return None
    figures = [a for a in right if a.kind == "return"]
    relative = [a for a in right if a.kind in ("rank", "compare", "order") or (a.kind == "sign" and _ONLY.search(text))]
    specific = len(spans) >= 2 or any(p.search(text) for p in (_STOCK_NOUN, _GROUP, _DIRECTION))
    if figures:
        return OutcomeFinding("A4:stock:return-in-window", "; ".join(a.note for a in figures))
    if relative and spans and (scope == "window" or specific):
        return OutcomeFinding("A4:stock:ranking-in-window", "; ".join(a.note for a in relative))
    if scope == "window" and (right or _DIRECTION.search(text)):
        note = "; ".join(a.note for a in right) or "a move of the group's companies over the window"
        return OutcomeFinding("A4:stock:move-in-window", note)
    return None
