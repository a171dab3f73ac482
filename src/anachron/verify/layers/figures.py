"""Figures stated in a claim, with the precision they are stated to (docs/verification.md#grounded).

The grounded checks compare a claim's numbers with the point-in-time data: a share price with the
daily closes, a return with the closes at the ends of its window, revenue or EPS with the EDGAR
facts. A figure is only as exact as it is written: "$260.2 billion" is any value within half a
unit of its last digit (0.05 billion), "$27.34" within half a cent, "12%" within half a point.
This module reads them:

* :func:`parse_values`: money, in US dollars: "$260.2B", "$260.2 billion", "US$1.2bn",
  "USD 1.2 billion", "$55,256 million", "260.2 billion dollars", a bare "1,234.5 million"
  (``currency=False``: a count of something else reads the same), and per-share amounts
  ("$2.97 per share", "EPS of $2.10", "2.10 a share").
* :func:`parse_percents`: "12.3%", "-4 %", "12.3 percent", "12 per cent", "12 pct" (not
  "percentage points": a difference, not a level), and the multiplicative words of moves
  ("halved", "doubled", "tripled", "lost a third of its value"), each with its sign when the
  wording gives one (a minus sign, or a verb of rising or falling next to it).

Each figure keeps its position in the text and whether it is hedged ("about", "nearly", "more
than", "topped"): a hedged figure is not an exact statement of a value.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from anachron.money import precision, scan_money
from anachron.words import HEDGE_APPROX_PHRASES, HEDGE_APPROX_WORDS

#: Units a figure without a currency may carry ("260.2 billion dollars", a bare "1,234.5 million");
#: letters ("5 m", "2019 M&A") and "thousand" without "dollars" are not figures.
_BARE_UNITS = frozenset({"trillion", "billion", "million", "thousand", "bn", "mn"})
_PER_SHARE = re.compile(r"\s*(?:a|per)\s+(?:diluted\s+|basic\s+)?share\b", re.I)
_EPS_BEFORE = re.compile(r"\b(?:EPS|per[- ]share)\b[^.;$]{0,25}$", re.I)
#: How far before a figure a hedge word counts (characters).
_HEDGE_WINDOW = 24
_LOWER_WORDS = re.compile(r"[a-z]+")


@dataclass(frozen=True)
class StatedValue:
    """A money figure stated in a claim.

    Attributes:
        value: in US dollars (USD per share for per-share amounts), unsigned.
        half_unit: half a unit of its last written digit, in the same unit ("$260.2B": 0.05e9).
        per_share: a per-share amount (EPS, a share price): unscaled and followed by "a/per
            share", or after "EPS", or below 1,000 without a scale word.
        text: the figure as written.
        start: its offset in the text.
        hedged: preceded by "about", "nearly", "more than", "topped"...: not an exact value.
        currency: written with a currency ("$", "USD", "dollars"); False for a bare
            "1,234.5 million" or "2.10 a share".
        round_half_unit: like ``half_unit``, but the trailing zeros of an integer without a
            scale word count as rounding ("$1,800": 50, where ``half_unit`` is 0.5; "$440
            million": 0.5 million, as ``half_unit``).
    """

    value: float
    half_unit: float
    per_share: bool
    text: str
    start: int = 0
    hedged: bool = False
    currency: bool = True
    round_half_unit: float = 0.0

    @property
    def rel_precision(self) -> float:
        """``round_half_unit`` relative to the value (inf for zero): the smaller, the more exact."""
        return self.round_half_unit / self.value if self.value else float("inf")


def hedged_before(text: str, start: int) -> bool:
    """True if the words just before offset ``start`` hedge the figure there ("about $40",
    "more than 12%", "topped $100 billion", "~$40")."""
    window = text[max(0, start - _HEDGE_WINDOW) : start]
    if window.rstrip().endswith("~"):
        return True
    words = _LOWER_WORDS.findall(window.lower())
    return bool(words) and (
        words[-1] in HEDGE_APPROX_WORDS or " ".join(words[-2:]) in HEDGE_APPROX_PHRASES or " ".join(words[-3:]) in HEDGE_APPROX_PHRASES
    )


def parse_values(text: str) -> list[StatedValue]:
    """Money figures in ``text``, in order: "$260.2B" -> 260.2e9 (half unit 0.05e9), "$55,256
    million", "USD 1.2 billion", "260.2 billion dollars", "1,234.5 million" (``currency``
    False), "$2.97 per share" / "EPS of $2.10" / "2.10 a share" (per share: unscaled, below
    1,000 or followed by "a/per share"). See :class:`StatedValue`."""
    out = []
    for a in scan_money(text):
        if a.currency not in (None, "USD"):  # "€4 million": not a dollar figure
            continue
        if a.currency_before:
            start, e, currency, unit = a.start, a.unit_end, True, a.unit
        else:
            if text[a.num_end : a.num_end + 1] not in (" ", "b", "m", "B", "M"):
                continue
            start, unit = a.num_start, a.unit
            if unit in _BARE_UNITS and (a.currency_after or unit != "thousand"):
                e, currency = (a.end, True) if a.currency_after else (a.unit_end, False)
            elif unit is None and _PER_SHARE.match(text, a.num_end):  # 2.10 a share
                e, currency = a.num_end, False
            else:
                continue
        half, round_half = precision(a.digits, a.scale)
        per_share = unit is None and (
            bool(_PER_SHARE.match(text, e)) or a.value < 1000 or bool(_EPS_BEFORE.search(text, max(0, start - 40), start))
        )
        out.append(StatedValue(a.value, half, per_share, text[start:e].strip(), start, hedged_before(text, start),
                               currency, round_half))
    return out


def parse_prices(text: str) -> list[StatedValue]:
    """The unscaled dollar amounts of ``text`` ("$27.34", "US$1,020.50"; not "$4.2 billion",
    "USD 27"): the candidates for a share price, as :func:`parse_values` reads them, in one pass."""
    out = []
    for a in scan_money(text):
        if a.unit is not None or not a.currency_before or "$" not in text[a.start : a.num_start] or a.currency != "USD":
            continue
        half, round_half = precision(a.digits, 1.0)
        per_share = a.value < 1000 or bool(_PER_SHARE.match(text, a.num_end))
        out.append(StatedValue(a.value, half, per_share, text[a.start : a.num_end].strip(), a.start,
                               hedged_before(text, a.start), True, round_half))
    return out


@dataclass(frozen=True)
class StatedPercent:
    """A percentage stated in a claim.

    Attributes:
        value: in percent, unsigned (a fall of 12% is 12.0).
        half_unit: half a unit of its last digit, in percentage points ("12.3%": 0.05); a word
            ("halved") is taken to within 1 point.
        sign: +1 / -1 when the wording says which way (a minus sign, "rose", "fell", "a 12%
            drop"), 0 when it does not.
        text: as written; start: its offset; hedged: "about 12%", "more than 12%".
    """

    value: float
    half_unit: float
    sign: int
    text: str
    start: int
    hedged: bool = False


_PERCENT = re.compile(r"(\d+(?:\.\d+)?)\s?(?:%|percent\b|per\s?cent\b|pct\b)", re.I)
_PERCENT_HINT = re.compile(r"%|percent|per\s?cent|pct|halved|in\s+half|doubled|tripled|quadrupled|\sof\s+(?:its|their|the)\s", re.I)
_UP = frozenset(
    "rise rises rising risen rose gain gains gained gaining surge surges surged surging jump jumps jumped jumping "
    "climb climbs climbed climbing advance advances advanced advancing rally rallies rallied rallying soar soars "
    "soared soaring increase increases increased increasing up higher added appreciate appreciated appreciating "
    "appreciation rebound rebounds rebounded rebounding grew grow grows growing grown growth".split()
)
_DOWN = frozenset(
    "fall falls fell fallen falling drop drops dropped dropping decline declines declined declining lose loses "
    "lost losing loss plunge plunges plunged plunging sank sunk sink sinks sinking slid slide slides sliding "
    "tumble tumbles tumbled tumbling down lower shed sheds shedding decrease decreases decreased decreasing "
    "crash crashed crashes crashing slump slumps slumped slumping retreat retreats retreated retreating dip dips "
    "dipped dipping skid skids skidded skidding tank tanks tanked tanking collapse collapses collapsed "
    "collapsing depreciate depreciated depreciating depreciation erode eroded eroding plummet plummets "
    "plummeted plummeting halved".split()
)
#: Words of a move either way: the wording of a return.
_MOVE = _UP | _DOWN | frozenset(
    "return returns returned outperform outperforms outperformed outperforming underperform underperforms "
    "underperformed underperforming doubled tripled quadrupled".split()
)
#: Words that end the clause of a figure when looking back for its verb.
_CLAUSE_WORDS = frozenset("while whereas but and as after before when compared versus vs than".split())
_CLAUSE_TOKENS = re.compile(r"[a-z]+|[;,]")
_MULTIPLE = re.compile(
    r"\b(?P<w>halved|cut\s+in\s+half|doubled|tripled|quadrupled)\b"
    r"|\b(?P<v>lost|shed|gained|added|dropped|gave\s+up|wiped\s+out|erased|fell\s+by|rose\s+by)\s+"
    r"(?:about\s+|roughly\s+|nearly\s+|almost\s+|more\s+than\s+|over\s+|some\s+|around\s+)?"
    r"(?P<f>half|a\s+half|one[- ]half|a\s+third|one[- ]third|two[- ]thirds|a\s+quarter|one[- ]quarter|three[- ]quarters)"
    r"\s+of\s+(?:its|their|the\s+stock's|the\s+company's)\s+(?:market\s+)?(?:value|worth|market\s+cap\w*)",
    re.I,
)
_MULTIPLE_HINT = re.compile(r"halved|in\s+half|doubled|tripled|quadrupled|\sof\s+(?:its|their|the)\s", re.I)
_POINTS = re.compile(r"\s*points?\b", re.I)
_NEXT_WORDS = re.compile(r"\s*([a-z]+)(?:\s+([a-z]+))?")
_MULTIPLE_PCT = {"halved": -50.0, "cut in half": -50.0, "doubled": 100.0, "tripled": 200.0, "quadrupled": 300.0}
_FRACTION_PCT = {"half": 50.0, "a half": 50.0, "one half": 50.0, "a third": 100 / 3, "one third": 100 / 3,
                 "two thirds": 200 / 3, "a quarter": 25.0, "one quarter": 25.0, "three quarters": 75.0}


def mentions_move(text: str) -> bool:
    """True if ``text`` has a word of a move either way ("rose", "fell", "returned", "halved")."""
    return not _MOVE.isdisjoint(_LOWER_WORDS.findall(text.lower()))


def _direction(text: str, start: int, end: int) -> int:
    """+1 / -1 from the nearest verb of rising or falling in the figure's clause ("rose 12%",
    "a 12% drop", "down 12%"), 0 when there is none."""
    for tok in reversed(_CLAUSE_TOKENS.findall(text[max(0, start - 60) : start].lower())):
        if tok in _UP:
            return 1
        if tok in _DOWN:
            return -1
        if tok in _CLAUSE_WORDS or tok in ";,":
            break
    after = _NEXT_WORDS.match(text[end : end + 30].lower())
    for w in after.groups() if after else ():
        if w in _UP:
            return 1
        if w in _DOWN:
            return -1
    return 0


def parse_percents(text: str) -> list[StatedPercent]:
    """Percentages in ``text``, in order, with their sign where the wording gives one (see
    :class:`StatedPercent`); "percentage points" (a difference, not a level) are skipped;
    "halved", "doubled", "lost a third of its value" are read as -50%, +100%, -33.3% (half
    unit 1 point)."""
    out: list[StatedPercent] = []
    if not _PERCENT_HINT.search(text):
        return out
    for m in _PERCENT.finditer(text):
        s = m.start()
        if s and (text[s - 1].isalnum() or text[s - 1] in ".,") or _POINTS.match(text, m.end()):
            continue
        neg = s and text[s - 1] in "-−–" and (s < 2 or not text[s - 2].isalnum())
        if not neg and s > 1 and text[s - 1] == " " and text[s - 2] in "-−–" and (s < 3 or not text[s - 3].isalnum()):
            neg, s = True, s - 2
        elif neg:
            s -= 1
        digits = m[1]
        half = 0.5 * 10 ** (-len(digits.split(".")[1])) if "." in digits else 0.5
        sign = -1 if neg else _direction(text, s, m.end())
        out.append(StatedPercent(float(digits), half, sign, text[s : m.end()], s, hedged_before(text, s)))
    for m in _MULTIPLE.finditer(text) if _MULTIPLE_HINT.search(text) else ():
        if m["w"]:
            pct = _MULTIPLE_PCT[re.sub(r"\s+", " ", m["w"].lower())]
            out.append(StatedPercent(abs(pct), 1.0, 1 if pct > 0 else -1, m[0], m.start(), hedged_before(text, m.start())))
        else:
            frac = _FRACTION_PCT[re.sub(r"[\s-]+", " ", m["f"].lower())]
            sign = 1 if re.match(r"gained|added|rose", m["v"], re.I) else -1
            out.append(StatedPercent(frac, 1.0, sign, m[0], m.start(), hedged_before(text, m.start())))
    out.sort(key=lambda p: p.start)
    return out
