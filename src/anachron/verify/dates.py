"""Dates in claims: normalising a declared date, and finding dates mentioned in text.

A *declared* date is the ``source_date`` the model wrote. A *mentioned* date is a
time reference inside the fact text ("closed at $61.45 on May 29, 2020",
"Q3 2019 revenue", "in March 2020"). Every reference is a period
(:class:`Period`): a day, a month, a quarter or a year, with its first and last day.
"""

from __future__ import annotations

import bisect
import calendar
import datetime as dt
import functools
import re
from dataclasses import dataclass

from anachron.words import MONTH_ALTERNATION, MONTH_NUMBERS

#: Month names and abbreviations (the lookahead on the first letter makes a scan skip other words fast).
_MONTH_RE = "(?=[ADFJMNOSadfjmnos])(?:" + MONTH_ALTERNATION + ")"
#: Capitalised month names only ("May", "Mar."), for dates written without a year, where a
#: lower-case "may" or "march" is a verb.
_MONTH_CAP_RE = "(?=[ADFJMNOS])(?:" + "|".join(sorted((re.escape(m.capitalize()) for m in MONTH_NUMBERS), key=len, reverse=True)) + ")"
#: A capitalised month name starts here (a fast test before looking for dates without a year).
_MONTH_CAP_HINT = re.compile("|".join(sorted({m.capitalize()[:3] for m in MONTH_NUMBERS})))
_ORD = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4}
_Y = r"(?:19|20)\d{2}"
#: A year of two or four digits, optionally after an apostrophe ("'19", "19", "2019").
_YY = r"['’]?(?:(?:19|20)\d{2}|\d{2})"

_ISO_DAY = re.compile(r"\b((?:19|20)\d{2})-(\d{1,2})-(\d{1,2})(?!\d)")
_ISO_MONTH = re.compile(r"\b((?:19|20)\d{2})-(\d{1,2})\b(?!-\d)")
_US_DAY = re.compile(rf"\b({_MONTH_RE})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?(?:,?\s+((?:19|20)\d{{2}})|,?\s*['’](\d{{2}}))\b", re.I)
_EU_DAY = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({_MONTH_RE})\.?,?\s+((?:19|20)\d{{2}})\b", re.I)
#: "Aug. 19-22, 2024", "March 30-April 2, 2020", "19-22 August 2024": the days of one event.
_US_DAYS = re.compile(
    rf"\b(?P<m1>{_MONTH_RE})\.?\s+(?P<d1>\d{{1,2}})(?:st|nd|rd|th)?\s?[-–—]\s?(?:(?P<m2>{_MONTH_RE})\.?\s+)?"
    rf"(?P<d2>\d{{1,2}})(?:st|nd|rd|th)?,?\s+(?P<y>{_Y})\b",
    re.I,
)
_EU_DAYS = re.compile(rf"\b(?P<d1>\d{{1,2}})\s?[-–—]\s?(?P<d2>\d{{1,2}})\s+(?P<m1>{_MONTH_RE})\.?,?\s+(?P<y>{_Y})\b", re.I)
#: "2020/03/23" (year first).
_YMD_SLASH = re.compile(r"(?<![\d/.])((?:19|20)\d{2})/(\d{1,2})/(\d{1,2})(?![\d/])")
#: "3/23/20", "28/01/2020", "03.04.2020": day and month in either order (see :func:`find_periods`).
_SLASH_DAY = re.compile(r"(?<![\d/.])(\d{1,2})/(\d{1,2})/((?:19|20)\d{2}|\d{2})(?![\d/])")
_DOT_DAY = re.compile(r"(?<![\d/.])(\d{1,2})\.(\d{1,2})\.((?:19|20)\d{2})(?!\d|\.\d)")
_MONTH_YEAR = re.compile(rf"\b({_MONTH_RE})\.?(?:(?:,?\s+(?:of\s+)?|\s?-\s?)((?:19|20)\d{{2}})|\s*['’](\d{{2}}))\b", re.I)
_SEASON_HINT = re.compile(r"\d{4}\s?[-–—/]")
#: Q3 2019, 2019 Q3; fiscal when "fiscal"/"FY" is attached: fiscal Q3 2019, Q3 FY2019,
#: Q3 of fiscal 2019, FY2019 Q3.
_QUARTER = re.compile(
    r"\b(?:(?P<f1>fiscal\s+|FY\s*)?Q(?P<q1>[1-4])[\s/-]*(?:(?P<f2>(?:of\s+)?(?:fiscal(?:\s+year)?\s+|FY\s*))|of\s+)?'?(?P<y1>(?:19|20)\d{2})"
    r"|(?P<f3>fiscal(?:\s+year)?\s+|FY\s*)?(?P<y2>(?:19|20)\d{2})[\s/-]*Q(?P<q2>[1-4]))\b",
    re.I,
)
#: Analysts' short forms: 1Q20, 3Q'19, 1Q 2020, Q3'19, Q1 FY20, 1QFY20, FY20 Q1.
_QUARTER_SHORT = re.compile(
    rf"\b(?:(?P<q1>[1-4])Q\s?(?P<f1>FY\s?)?(?P<y1>{_YY})|Q(?P<q2>[1-4])\s?(?:(?P<f2>FY)\s?['’]?|['’])(?P<y2>\d{{2}}(?:\d{{2}})?)"
    rf"|(?P<f3>FY)\s?['’]?(?P<y3>\d{{2}})\s?Q(?P<q3>[1-4]))\b"
)
#: "third quarter of 2019"; fiscal: "fiscal third quarter 2019", "third quarter of fiscal 2019",
#: "third fiscal quarter of 2019", "fiscal 2019 third quarter".
_QUARTER_WORDS = re.compile(
    r"\b(?P<f1>fiscal\s+)?(?P<q>first|second|third|fourth|1st|2nd|3rd|4th)(?P<f2>[- ]fiscal)?[- ]quarter"
    r"(?:\s+of)?(?:\s+(?:the\s+)?(?P<f3>fiscal(?:\s+year)?|FY))?,?\s+(?P<y>(?:19|20)\d{2})\b",
    re.I,
)
_QUARTER_WORDS_FY_FIRST = re.compile(
    r"\b(?:fiscal(?:\s+year)?\s+|FY\s*)(?P<y>(?:19|20)\d{2})\s+(?P<q>first|second|third|fourth|1st|2nd|3rd|4th)[- ]quarter\b", re.I
)
#: Halves: H1 2020, 1H20, H2'19, H1 FY20, "the first half of 2020", "second half of fiscal 2019".
_HALF = re.compile(
    rf"\b(?:H(?P<h1>[12])|(?P<h2>[12])H)\s?(?P<f1>FY\s?)?(?P<y1>{_YY})\b"
    rf"|\b(?i:(?P<w>first|second|1st|2nd)\s+half\s+(?:of\s+)?(?:the\s+)?(?P<f2>fiscal\s+(?:year\s+)?)?)(?P<y2>{_Y})\b"
)
#: The first months of a year: "the first nine months of 2019", "first six months of fiscal 2020".
_MONTHS_OF = re.compile(
    rf"\b(?i:first|initial)\s+(?P<n>(?i:two|three|four|five|six|seven|eight|nine|ten|eleven)|\d{{1,2}})\s+(?i:months)\s+(?i:of\s+)(?:the\s+)?"
    rf"(?P<f>(?i:fiscal\s+(?:year\s+)?))?(?P<y>{_Y})\b"
)
_NUMBERS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11}
#: Seasons and fiscal years across two calendar years ("2019-20", "2019/20", "2019–2020",
#: "FY2019-20") and ranges of years ("2015-2019").
_SEASON = re.compile(
    rf"(?<![\d-])(?:(?P<f>\bFY\s?|\bfiscal\s+(?:year\s+)?)|\b)(?P<a>{_Y})\s?[-–—/]\s?(?P<b>{_Y}|\d{{2}})\b(?![-/.]\d)", re.I
)
_FISCAL_YEAR = re.compile(
    rf"\b(?:FY\s*['’]?(?P<f1>(?:19|20)\d{{2}}|\d{{2}})|fiscal(?:\s+year)?\s+(?P<f2>{_Y})|full[- ]year\s+(?P<c1>{_Y})"
    rf"|(?P<c2>{_Y})\s+(?:full[- ]year|fiscal\s+year|annual))\b",
    re.I,
)
#: "early 2019", "mid-2019", "late March 2020", "the end of 2019", "the middle of March 2020".
_PART = re.compile(
    rf"\b(?P<q>early|mid|late|(?:beginning|start|middle|end)\s+of)(?:\s*-\s*|\s+)(?:the\s+)?(?:(?P<m>{_MONTH_RE})\.?,?\s+)?(?P<y>{_Y})\b(?![-–/]\d)",
    re.I,
)
#: A noun that a number identifies rather than dates ("H.B. 2023", "Senate Bill 2019", "Case No.
#: 2020", "Proposition 2022", "Route 2020"), right before the number ("the Act of 2019" is a year).
_IDENTIFIER_BEFORE = re.compile(
    r"(?:\b(?:[HS]\.\s?[BFRJ]|[HS][BFRJ]|Bill|No|Nos|Number|Docket|Proposition|Prop|Measure|Ordinance|Resolution|"
    r"Route|Highway|Flight|Model|Form|Rule|Section|Sec|Chapter|Article|Item|Unit|Suite|Room|Box)\.?|[#§])\s*$"
)
_YEAR = re.compile(r"(?<![\d$.,-])((?:19|20)\d{2})(?![\d%])(?!\s*(?:million|billion|bn|m\b|shares|employees|stores))")

#: Dates written without a year: "March 3", "Aug. 19", "3rd of March", "in March", "late March".
_YEARLESS_DAY = re.compile(rf"\b(?P<m>{_MONTH_CAP_RE})\.?\s+(?P<d>\d{{1,2}})(?:st|nd|rd|th)?\b(?![\d,./:]*\d)")
_YEARLESS_DAY_EU = re.compile(rf"\b(?P<d>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<m>{_MONTH_CAP_RE})\b\.?")
_YEARLESS_MONTH = re.compile(
    rf"\b(?:(?P<prep>[Ii]n|on|by|since|during|until|through|from|of|before|after|last|this|that|next)\s+(?:the\s+)?)?"
    rf"(?:(?P<part>early|mid|late|(?:beginning|start|middle|end)\s+of)(?:\s*-\s*|\s+))?(?P<m>{_MONTH_CAP_RE})\b\.?"
    # a month that names a statistical release's period: "the July jobs report", "September CPI"
    rf"(?P<release>(?=\s+(?:(?:employment|jobs|payrolls?|inflation|consumer|producer|retail|housing|trade|manufacturing|"
    rf"services|factory|durable|industrial|home|existing|new)\s+)?(?:reports?|data|figures?|numbers|readings?|prints?|"
    rf"CPI|PPI|PCE|PMI|ISM|payrolls|sales|starts|orders|output|production|survey|release)\b))?"
)


@dataclass(frozen=True)
class Period:
    """A time reference found in a text, with inclusive bounds ``start`` / ``end``.

    ``kind``: ``day``; ``day_either`` (a numeric date whose day/month order cannot be told
    apart: ``start`` and ``end`` are its two readings); ``days`` (an event over several days);
    ``month``; ``month_part`` (early / mid / late: days 1-10, 11-20, 21-end); ``quarter``;
    ``fiscal_quarter``; ``half``; ``months`` (the first months of a year); ``year_part`` (early / mid / late: Jan-Apr, May-Aug, Sep-Dec);
    ``year``; ``fiscal_year``; ``season`` ("2019-20": July 1 of the first year to June 30 of
    the second); ``years`` (a range "2015-2019").

    A ``fiscal_quarter`` ("fiscal Q2 2026") has no known calendar position: its bounds are the
    widest plausible ones (:func:`fiscal_quarter_period`). A ``fiscal_year`` keeps the calendar
    year's bounds; ``fiscal`` says the text called the period fiscal ("FY2019", "fiscal 2019",
    "Q1 FY20"), so its calendar position is the company's. ``pos`` is the offset of ``text`` in
    the searched text (-1 when unknown)."""

    kind: str
    start: dt.date
    end: dt.date
    text: str
    pos: int = -1
    fiscal: bool = False


def _month_period(year: int, month: int, text: str, pos: int = -1) -> Period:
    last = calendar.monthrange(year, month)[1]
    return Period("month", dt.date(year, month, 1), dt.date(year, month, last), text, pos)


def quarter_period(year: int, q: int, text: str = "", pos: int = -1) -> Period:
    """Calendar quarter ``q`` (1-4) of ``year``."""
    start = dt.date(year, 3 * q - 2, 1)
    end_month = 3 * q
    return Period("quarter", start, dt.date(year, end_month, calendar.monthrange(year, end_month)[1]), text, pos)


#: A fiscal year ``Y`` ends between late January of ``Y`` (NVIDIA, retailers) and December of
#: ``Y``; fiscal quarter ``q`` therefore starts no earlier than this many days before the end
#: of January of ``Y-1`` plus ``q-1`` quarters.
FISCAL_EARLY_SLACK_DAYS = 10


def fiscal_quarter_period(year: int, q: int, text: str = "", pos: int = -1) -> Period:
    """Fiscal quarter ``q`` of fiscal ``year`` with unknown fiscal calendar: from its earliest
    plausible start (a fiscal year ending in late January of ``year``: Q1 starts around
    January 21 of ``year - 1``) to its latest plausible end (a fiscal year that is the calendar
    year: the end of calendar quarter ``q`` of ``year``). The earliest plausible end of the
    quarter is ``start + 89 days`` (:func:`fiscal_quarter_earliest_end`)."""
    start = dt.date(year - 1, 1, 31) - dt.timedelta(days=FISCAL_EARLY_SLACK_DAYS)
    start = _add_months(start, 3 * (q - 1))
    end = quarter_period(year, q).end
    return Period("fiscal_quarter", start, end, text, pos, True)


def fiscal_quarter_earliest_end(p: Period) -> dt.date:
    """Earliest plausible last day of a ``fiscal_quarter`` period (start + 89 days)."""
    return p.start + dt.timedelta(days=89)


def fiscal_year_earliest_end(year: int) -> dt.date:
    """Earliest plausible last day of fiscal ``year`` when the company's calendar is unknown (a
    fiscal year ending in late January of ``year``, like NVIDIA's or a retailer's)."""
    return dt.date(year, 1, 31) - dt.timedelta(days=FISCAL_EARLY_SLACK_DAYS)


def _add_months(d: dt.date, months: int) -> dt.date:
    m = d.month - 1 + months
    y, m = d.year + m // 12, m % 12 + 1
    return dt.date(y, m, min(d.day, calendar.monthrange(y, m)[1]))


def _safe_day(y: int, m: int, d: int) -> dt.date | None:
    try:
        return dt.date(y, m, d)
    except ValueError:
        return None


def _year_of(token: str) -> int | None:
    """A year written with two or four digits ("'19", "19", "2019"); two digits are 1970-2069.
    None for four digits outside 1900-2099."""
    t = token.lstrip("'’")
    y = int(t)
    if len(t) == 2:
        return 2000 + y if y < 70 else 1900 + y
    return y if 1900 <= y <= 2099 else None


#: First month of each third of a year: "early" (Jan-Apr), "mid" (May-Aug), "late" (Sep-Dec).
_THIRD_START = {"early": 1, "mid": 5, "late": 9}
#: First day of each third of a month.
_THIRD_DAY = {"early": 1, "mid": 11, "late": 21}
_QUALIFIER_THIRD = {
    "early": "early", "beginning of": "early", "start of": "early",
    "mid": "mid", "middle of": "mid",
    "late": "late", "end of": "late",
}


def _third(word: str) -> str:
    return _QUALIFIER_THIRD[re.sub(r"\s+", " ", word.lower())]


def year_part_period(year: int, third: str, text: str = "", pos: int = -1) -> Period:
    """"early" / "mid" / "late" ``year``: Jan 1-Apr 30, May 1-Aug 31, Sep 1-Dec 31."""
    m = _THIRD_START[third]
    return Period("year_part", dt.date(year, m, 1), _add_months(dt.date(year, m, 1), 4) - dt.timedelta(days=1), text, pos)


def month_part_period(year: int, month: int, third: str, text: str = "", pos: int = -1) -> Period:
    """"early" / "mid" / "late" month: days 1-10, 11-20, 21 to the month's end."""
    first = _THIRD_DAY[third]
    last = {"early": 10, "mid": 20, "late": calendar.monthrange(year, month)[1]}[third]
    return Period("month_part", dt.date(year, month, first), dt.date(year, month, last), text, pos)


def season_period(first_year: int, text: str = "", pos: int = -1) -> Period:
    """A season or split year "2019-20": July 1 of ``first_year`` to June 30 of the next."""
    return Period("season", dt.date(first_year, 7, 1), dt.date(first_year + 1, 6, 30), text, pos)


def _numeric_day(a: int, b: int, year: int, text: str, pos: int) -> Period | None:
    """A numeric date with day and month in unknown order: one reading -> ``day``; two -> ``day_either``."""
    readings = sorted({d for d in (_safe_day(year, a, b), _safe_day(year, b, a)) if d is not None})
    if not readings:
        return None
    if len(readings) == 1:
        return Period("day", readings[0], readings[0], text, pos)
    return Period("day_either", readings[0], readings[1], text, pos)


class _Spans:
    """Non-overlapping ``[start, end)`` spans of a text, kept sorted: overlap tests in log time."""

    def __init__(self, spans: list[tuple[int, int]] | None = None):
        self._starts: list[int] = []
        self._ends: list[int] = []
        for s, e in sorted(spans or []):
            self.add(s, e)

    def free(self, start: int, end: int) -> bool:
        """True if ``[start, end)`` overlaps no span."""
        i = bisect.bisect_left(self._starts, end)  # spans starting before ``end``
        return i == 0 or self._ends[i - 1] <= start

    def add(self, start: int, end: int) -> None:
        i = bisect.bisect_left(self._starts, start)
        self._starts.insert(i, start)
        self._ends.insert(i, end)


_WORD = re.compile(r"[a-z]+")
_DIGIT = re.compile(r"\d")
_PART_WORDS = frozenset({"early", "mid", "late", "beginning", "start", "middle", "end"})
_FISCAL_WORDS = frozenset({"fy", "fiscal", "full", "annual"})


def _scan(text: str) -> list[Period]:
    """Every time reference in ``text`` with a year (see :func:`find_periods`), in text order.

    Each pattern runs only when the text has what it needs (a digit, a month name, a "Q", a
    dash, ...), which keeps a claim without dates cheap."""
    found: list[Period] = []
    if not _DIGIT.search(text):
        return found
    taken = _Spans()
    words = set(_WORD.findall(text.lower()))
    months = not words.isdisjoint(MONTH_NUMBERS)
    dash = "-" in text or "–" in text or "—" in text

    def add(m: re.Match[str], period: Period | None) -> None:
        if period is None:
            return
        span = m.span()
        if not taken.free(*span):
            return
        taken.add(*span)
        found.append(period)

    def day(m: re.Match[str], y: int, mo: int, d: int) -> Period | None:
        x = _safe_day(y, mo, d)
        return Period("day", x, x, m[0], m.start()) if x else None

    if "-" in text:
        for m in _ISO_DAY.finditer(text):
            p = day(m, int(m[1]), int(m[2]), int(m[3]))
            if p is None:  # an impossible day ("2019-02-30") names no date, not even its year
                taken.add(*m.span())
            add(m, p)
    if months and dash:
        for rx in (_US_DAYS, _EU_DAYS):
            for m in rx.finditer(text):
                y, m1 = int(m["y"]), MONTH_NUMBERS[m["m1"].lower()]
                m2 = MONTH_NUMBERS[m["m2"].lower()] if rx is _US_DAYS and m["m2"] else m1
                a, b = _safe_day(y, m1, int(m["d1"])), _safe_day(y, m2, int(m["d2"]))
                add(m, Period("days", a, b, m[0], m.start()) if a and b and a <= b else None)
    if months:
        for m in _US_DAY.finditer(text):
            add(m, day(m, _year_of(m[3] or m[4]) or 0, MONTH_NUMBERS[m[1].lower()], int(m[2])))
        for m in _EU_DAY.finditer(text):
            add(m, day(m, int(m[3]), MONTH_NUMBERS[m[2].lower()], int(m[1])))
    if "/" in text:
        for m in _YMD_SLASH.finditer(text):
            add(m, day(m, int(m[1]), int(m[2]), int(m[3])))
    for rx, hint in ((_SLASH_DAY, "/" in text), (_DOT_DAY, ".19" in text or ".20" in text)):
        for m in rx.finditer(text) if hint else ():
            year = _year_of(m[3])
            add(m, _numeric_day(int(m[1]), int(m[2]), year, m[0], m.start()) if year else None)
    if "Q" in text or "q" in words:
        for m in _QUARTER.finditer(text):
            q, y = (m["q1"], m["y1"]) if m["q1"] else (m["q2"], m["y2"])
            fiscal = bool(m["f1"] or m["f2"] or m["f3"])
            add(m, (fiscal_quarter_period if fiscal else quarter_period)(int(y), int(q), m[0], m.start()))
        for m in _QUARTER_SHORT.finditer(text):
            q, y = next((m[f"q{i}"], m[f"y{i}"]) for i in (1, 2, 3) if m[f"q{i}"])
            year = _year_of(y)
            fiscal = bool(m["f1"] or m["f2"] or m["f3"])
            add(m, (fiscal_quarter_period if fiscal else quarter_period)(year, int(q), m[0], m.start()) if year else None)
    if "quarter" in words:
        for m in _QUARTER_WORDS.finditer(text):
            fiscal = bool(m["f1"] or m["f2"] or m["f3"])
            add(m, (fiscal_quarter_period if fiscal else quarter_period)(int(m["y"]), _ORD[m["q"].lower()], m[0], m.start()))
        for m in _QUARTER_WORDS_FY_FIRST.finditer(text):
            add(m, fiscal_quarter_period(int(m["y"]), _ORD[m["q"].lower()], m[0], m.start()))
    if "months" in words:
        for m in _MONTHS_OF.finditer(text):
            n = int(m["n"]) if m["n"].isdigit() else _NUMBERS[m["n"].lower()]
            if 1 <= n <= 11:
                y = int(m["y"])
                end = _add_months(dt.date(y, n, 1), 1) - dt.timedelta(days=1)
                add(m, Period("months", dt.date(y, 1, 1), end, m[0], m.start(), bool(m["f"])))
    if "half" in words or any(h in text for h in ("H1", "H2", "1H", "2H")):
        for m in _HALF.finditer(text):
            h = int(m["h1"] or m["h2"]) if m["y1"] else _ORD[m["w"].lower()]
            year = _year_of(m["y1"] or m["y2"])
            if year:
                start = dt.date(year, 1 if h == 1 else 7, 1)
                end = dt.date(year, 6, 30) if h == 1 else dt.date(year, 12, 31)
                add(m, Period("half", start, end, m[0], m.start(), bool(m["f1"] or m["f2"])))
    if (dash or "/" in text) and _SEASON_HINT.search(text):
        for m in _SEASON.finditer(text):
            a, b = int(m["a"]), m["b"]
            second = int(b) if len(b) == 4 else (a // 100) * 100 + int(b)
            if m["f"] and second == a + 1:  # FY2019-20: the fiscal year ending in 2020
                add(m, Period("fiscal_year", dt.date(second, 1, 1), dt.date(second, 12, 31), m[0], m.start(), True))
            elif second == a + 1:
                add(m, season_period(a, m[0], m.start()))
            elif len(b) == 4 and a < second:
                add(m, Period("years", dt.date(a, 1, 1), dt.date(second, 12, 31), m[0], m.start()))
    if "FY" in text or not words.isdisjoint(_FISCAL_WORDS):
        for m in _FISCAL_YEAR.finditer(text):
            y = _year_of(m["f1"] or m["f2"] or m["c1"] or m["c2"])
            fiscal = bool(m["f1"] or m["f2"])
            add(m, Period("fiscal_year", dt.date(y, 1, 1), dt.date(y, 12, 31), m[0], m.start(), fiscal) if y else None)
    if not words.isdisjoint(_PART_WORDS):
        for m in _PART.finditer(text):
            third, y = _third(m["q"]), int(m["y"])
            if m["m"]:
                add(m, month_part_period(y, MONTH_NUMBERS[m["m"].lower()], third, m[0], m.start()))
            else:
                add(m, year_part_period(y, third, m[0], m.start()))
    if months:
        for m in _MONTH_YEAR.finditer(text):
            name, year = m[1], _year_of(m[2] or m[3])
            add(m, _month_period(year, MONTH_NUMBERS[name.lower()], m[0], m.start()) if year else None)
    if "-" in text:
        for m in _ISO_MONTH.finditer(text):
            mo = int(m[2])
            add(m, _month_period(int(m[1]), mo, m[0], m.start()) if 1 <= mo <= 12 else None)
    for m in _YEAR.finditer(text):
        if _IDENTIFIER_BEFORE.search(text, max(0, m.start() - 24), m.start()):
            continue  # "H.B. 2023", "Senate Bill 2019", "No. 2020": a number that names, not a year
        y = int(m[1])
        add(m, Period("year", dt.date(y, 1, 1), dt.date(y, 12, 31), m[0], m.start()))
    found.sort(key=lambda p: p.pos)
    return found


def find_periods(text: str) -> list[Period]:
    """All time references with a year in ``text``, in text order; for overlapping spans the
    most specific wins.

    Recognises ISO days and months; "May 29, 2020", "Jan. 28, 2020", "29 May 2020"; ranges of
    days ("Aug. 19-22, 2024"); numeric dates "2020/03/23", "3/23/20", "28/01/2020",
    "03.04.2020" (day and month in either order: a date with two valid readings is a
    ``day_either`` spanning both); "May 2020", "Mar-2020", "March '20"; quarters "Q1 2020",
    "2020 Q1", "first quarter of 2020", "1Q20", "3Q'19", "Q1 FY20" (fiscal ones as
    ``fiscal_quarter``); halves "H1 2020", "first half of 2020"; seasons "2019-20" /
    "2019/20" and ranges "2015-2019"; "FY2019", "FY20", "FY2019-20", "fiscal 2019",
    "full-year 2019"; "early 2019", "mid-2019", "late March 2020", "the end of 2019"; and bare
    years. Impossible days ("2019-02-30") are skipped. A year that is part of a larger match is
    not reported again on its own. Dates without a year ("March 3") are
    :func:`find_yearless`'s. Every pattern is linear in the length of ``text``. Cached: the
    layers and the categoriser read the same claim text several times.
    """
    return list(_scan_cached(text or ""))


@functools.lru_cache(maxsize=65_536)
def _scan_cached(text: str) -> tuple[Period, ...]:
    return tuple(_scan(text))


@dataclass(frozen=True)
class YearlessDate:
    """A day or month written without a year ("March 3", "Aug. 19", "in March", "late March").

    ``day`` is None for a month; ``third`` ("early" / "mid" / "late") narrows a month;
    ``relative`` is "last", "this" or "next" when the text says so ("last March")."""

    month: int
    day: int | None
    text: str
    pos: int
    third: str | None = None
    relative: str | None = None

    def reading(self, year: int) -> Period | None:
        """The period this date names in ``year`` (None for Feb 29 of a common year)."""
        if self.day is not None:
            d = _safe_day(year, self.month, self.day)
            return Period("day", d, d, self.text, self.pos) if d else None
        if self.third:
            return month_part_period(year, self.month, self.third, self.text, self.pos)
        return _month_period(year, self.month, self.text, self.pos)


def find_yearless(text: str, periods: list[Period] | None = None) -> list[YearlessDate]:
    """Dates in ``text`` written without a year, outside the spans :func:`find_periods` finds.

    Days: "March 3", "Aug. 19th", "3rd of March", "19 August" (capitalised month names). A
    month alone needs a preposition or a qualifier before it ("in March", "since May",
    "late March", "last March") or a statistical release after it ("the July jobs report",
    "September CPI"), so that the verb "may" or a name is not a date. ``periods``: the
    text's :func:`find_periods`, when the caller has them already.
    """
    text = text or ""
    hints = [m.start() for m in _MONTH_CAP_HINT.finditer(text)]
    if not hints:
        return []
    taken = _Spans([(p.pos, p.pos + len(p.text)) for p in (_scan(text) if periods is None else periods)])
    if not any(taken.free(h, h + 3) for h in hints):  # every month name is part of a dated reference
        return []
    out: list[YearlessDate] = []

    def free(s: int, e: int) -> bool:
        return taken.free(s, e)

    for rx in (_YEARLESS_DAY, _YEARLESS_DAY_EU):
        for m in rx.finditer(text):
            d = int(m["d"])
            if 1 <= d <= 31 and free(*m.span()):
                taken.add(*m.span())
                out.append(YearlessDate(MONTH_NUMBERS[m["m"].lower()], d, m[0], m.start()))
    for m in _YEARLESS_MONTH.finditer(text):
        if not (m["prep"] or m["part"] or m["release"] is not None) or not free(m.start("m"), m.end("m")):
            continue
        rel = m["prep"].lower() if m["prep"] and m["prep"].lower() in ("last", "this", "next") else None
        start = m.start("part") if m["part"] else m.start("m")
        out.append(YearlessDate(MONTH_NUMBERS[m["m"].lower()], None, text[start : m.end()], start, _third(m["part"]) if m["part"] else None, rel))
    out.sort(key=lambda y: y.pos)
    return out


#: How many units a count word stands for, as (fewest, most): "two weeks", "a few days", "several months".
_COUNT = {
    "a": (1, 1), "an": (1, 1), "one": (1, 1), "two": (2, 2), "three": (3, 3), "four": (4, 4), "five": (5, 5),
    "six": (6, 6), "seven": (7, 7), "eight": (8, 8), "nine": (9, 9), "ten": (10, 10), "eleven": (11, 11),
    "twelve": (12, 12), "few": (2, 9), "a few": (2, 9), "several": (2, 9),
}
#: Dates given relative to an earlier date of the same text: "two weeks later", "later that
#: month", "the following year", "the same day". "N years after" counts only as an adverb ("two
#: days after, ..."): with a complement ("30 years after he was discharged", "a year after the
#: merger") the anchor is the complement's event, not the text's earlier date.
_RELATIVE = re.compile(
    r"\b(?:(?P<n>\d{1,3}|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|(?:a\s+)?few|several)\s+"
    r"(?P<unit>day|week|month|year)s?\s+(?:later|afterwards?|after(?=\s*(?:[,;:.)—–]|$)))"
    r"|later\s+(?:that|the\s+same)\s+(?P<rest>day|week|month|year)"
    r"|(?:the\s+)?(?:following|subsequent)\s+(?P<next>day|week|month|year)"
    r"|the\s+next\s+(?P<next2>day|week|month|year)"
    r"|(?:the\s+)?(?:following|next|subsequent)\s+(?P<nextm>January|February|March|April|May|June|July|August|September|October|November|December)\b"
    # "that summer", "That December": a demonstrative that opens its phrase (at the start, after a
    # comma, "and", "in", "by", "until", "during"), not the conjunction of "reported that June 2025 was"
    r"|(?:^|(?<=[,;.(]\s)|(?<=\band\s)|(?<=\bin\s)|(?<=\bat\s)|(?<=\bof\s)|(?<=\bby\s)|(?<=\bover\s)|(?<=\buntil\s)|(?<=\bafter\s)|(?<=\bduring\s))(?:that|That)\s+"
    r"(?:(?P<that>summer|winter|spring|fall|autumn|season|offseason|off-season)(?:['’]s)?"
    r"|(?P<thatm>(?-i:January|February|March|April|June|July|August|September|October|November|December))(?!\s*,?\s*\d))"
    r"|(?:on\s+)?the\s+same\s+(?P<same>day))\b",
    re.I,
)


@dataclass(frozen=True)
class RelativeDate:
    """A date given relative to an earlier date of the text (:func:`find_relative`).

    ``mode``: ``after`` (``count`` units later: "two weeks later"), ``rest`` (later in the same
    unit: "later that month"), ``next`` (the next unit: "the following year"), ``nextmonth`` (the
    first such month after: "the following January"), ``that`` (a season referred back to: "that
    summer" is the next summer after, "that season" some time after) or ``same`` ("the same day");
    ``count`` is (fewest, most) units."""

    mode: str
    unit: str
    count: tuple[int, int]
    text: str
    pos: int

    def after(self, anchor: Period) -> Period:
        """The period this date names after ``anchor``."""
        lo, hi = anchor.start, anchor.end
        if self.mode == "after":
            lo, hi = _shift(lo, self.unit, self.count[0]), _shift(hi, self.unit, self.count[1])
        elif self.mode == "rest":
            lo = lo if self.unit == "day" else lo + dt.timedelta(days=1)
            hi = {"day": hi, "week": hi + dt.timedelta(days=6), "month": _shift(hi.replace(day=1), "month", 1) - dt.timedelta(days=1),
                  "year": dt.date(hi.year, 12, 31)}[self.unit]
        elif self.mode == "nextmonth":  # the first such month after the anchor ("that December": from it on)
            month = _MONTH_NUMBER[self.unit]
            ref = hi if self.count == (1, 1) or anchor.kind == "day" else lo - dt.timedelta(days=1)
            year = ref.year if month > ref.month else ref.year + 1
            lo = dt.date(year, month, 1)
            hi = _shift(lo, "month", 1) - dt.timedelta(days=1)
        elif self.mode == "that":  # "that summer": the first such season that has not ended by the anchor
            ref = anchor.end + dt.timedelta(days=1) if anchor.kind == "day" else anchor.start
            first, last = _SEASON_MONTHS.get(self.unit, (None, None))
            if first is None:  # "that season", "that offseason": some time from the anchor on
                lo, hi = ref, dt.date.max
            else:
                for year in (ref.year - 1, ref.year, ref.year + 1):
                    start = dt.date(year, first, 1)
                    end = _shift(dt.date(year + (1 if last < first else 0), last, 1), "month", 1) - dt.timedelta(days=1)
                    if end >= ref:
                        lo, hi = max(start, ref), end
                        break
        elif self.mode == "next":
            if self.unit == "month":
                lo = _shift(hi.replace(day=1), "month", 1)
                hi = _shift(lo, "month", 1) - dt.timedelta(days=1)
            elif self.unit == "year":
                lo, hi = dt.date(hi.year + 1, 1, 1), dt.date(hi.year + 1, 12, 31)
            else:
                lo, hi = lo + dt.timedelta(days=1), hi + dt.timedelta(days=1 if self.unit == "day" else 13)
        return Period("relative", lo, max(lo, hi), self.text, self.pos)


def _shift(d: dt.date, unit: str, n: int) -> dt.date:
    if unit == "day":
        return d + dt.timedelta(days=n)
    if unit == "week":
        return d + dt.timedelta(weeks=n)
    return _add_months(d, n * (12 if unit == "year" else 1))


_MONTH_NUMBER = {m: i for i, m in enumerate(
    "january february march april may june july august september october november december".split(), start=1)}
#: The months of each season of the year (northern hemisphere), first and last.
_SEASON_MONTHS = {"summer": (6, 8), "fall": (9, 11), "autumn": (9, 11), "winter": (12, 2), "spring": (3, 5)}


def find_relative(text: str) -> list[RelativeDate]:
    """Dates in ``text`` given relative to an earlier date ("three days later", "later that
    month", "the following year", "the following January", "that summer", "that season's", "the
    same day"); the caller resolves them against the date before them, or the answer's own date
    (:meth:`RelativeDate.after`)."""
    out: list[RelativeDate] = []
    for m in _RELATIVE.finditer(text or ""):
        if m["unit"]:
            n = m["n"].lower()
            count = (int(n), int(n)) if n.isdigit() else _COUNT[re.sub(r"\s+", " ", n)]
            out.append(RelativeDate("after", m["unit"].lower(), count, m[0], m.start()))
        elif m["rest"]:
            out.append(RelativeDate("rest", m["rest"].lower(), (0, 0), m[0], m.start()))
        elif m["nextm"]:
            out.append(RelativeDate("nextmonth", m["nextm"].lower(), (1, 1), m[0], m.start()))
        elif m["thatm"]:  # "that December": the first December from the anchor on
            out.append(RelativeDate("nextmonth", m["thatm"].lower(), (0, 0), m[0], m.start()))
        elif m["that"]:
            out.append(RelativeDate("that", m["that"].lower().replace("-", ""), (0, 0), m[0], m.start()))
        elif m["next"] or m["next2"]:
            out.append(RelativeDate("next", (m["next"] or m["next2"]).lower(), (1, 1), m[0], m.start()))
        else:
            out.append(RelativeDate("same", "day", (0, 0), m[0], m.start()))
    return out


@dataclass(frozen=True)
class DeclaredDate:
    """A normalised declared date.

    ``status``: ``exact`` (a valid ISO day), ``normalized`` (a clear coarser date mapped to
    its first day; ``rule`` says how), or ``undated`` (missing or not a date; ``date`` is None).
    ``latest`` is the last day the declared date allows (``date`` itself for a day; the end of
    the month, quarter, year or third of it for a coarser date; None when undated): the
    declared date is the interval ``[date, latest]``.
    """

    date: dt.date | None
    status: str
    rule: str | None = None
    latest: dt.date | None = None


_QUALIFIER = re.compile(
    r"(?:the\s+)?(?P<q>early|beginning\s+of|start\s+of|middle\s+of|mid|late|end\s+of)(?:\s+|-|\s*-\s*)(?:the\s+)?(?P<rest>.+)",
    re.I,
)
_VAGUE = re.compile(r"\b(around|circa|approx\w*|about|roughly|sometime|some\s+time|before|after|since|until|by|or)\b|\bca\.|[~?]", re.I)


def _qualified(s: str) -> DeclaredDate | None:
    """ "early 2019" / "mid-2019" / "late 2019" / "end of 2019" -> the first day of that third
    of the year (Jan 1, May 1, Sep 1); with a month ("late March 2019") the first day of that
    third of the month (1st, 11th, 21st). ``latest`` is the last day of that third."""
    m = _QUALIFIER.fullmatch(s.strip())
    if not m:
        return None
    third = _third(m["q"])
    rest = m["rest"].strip()
    y = re.fullmatch(r"((?:19|20)\d{2})s?", rest)
    if y and not rest.endswith("s"):
        p = year_part_period(int(y[1]), third)
        return DeclaredDate(p.start, "normalized", f"'{third} YYYY' -> first day of that third of the year", p.end)
    periods = find_periods(rest)
    if len(periods) == 1 and periods[0].text.strip() == rest and periods[0].kind == "month":
        p = month_part_period(periods[0].start.year, periods[0].start.month, third)
        return DeclaredDate(p.start, "normalized", f"'{third} MONTH YYYY' -> first day of that third of the month", p.end)
    return None


def normalize_declared(value: str | None) -> DeclaredDate:
    """Normalise a model's ``source_date``.

    A valid ``YYYY-MM-DD`` is exact. "2019-11", "November 2019", "Q3 2019", "1Q19", "FY19",
    "2019-20" and "2019" are normalised to the first day of the period (the earliest the fact
    could have been public), with ``latest`` the period's last day. "early 2019" -> 2019-01-01,
    "mid 2019" / "mid-2019" -> 2019-05-01, "late 2019" / "end of 2019" -> 2019-09-01 (the
    first day of that third of the year; "late March 2019" -> 2019-03-21 likewise). A numeric
    day whose day/month order is unclear ("03/04/2019") is its earlier reading, ``latest``
    the later. Each normalisation records its ``rule``. "2019-02-30" is ``undated``
    ("impossible calendar day"); vague forms ("around 2019", "2019 or 2020", "before 2020")
    and anything else are ``undated`` ("not a date"); the caller counts them apart.
    """
    if value is None or not str(value).strip():
        return DeclaredDate(None, "undated", "missing")
    s = str(value).strip()[:200]
    m = re.fullmatch(r"((?:19|20)\d{2})-(\d{2})-(\d{2})", s)
    if m:
        d = _safe_day(int(m[1]), int(m[2]), int(m[3]))
        return DeclaredDate(d, "exact", None, d) if d else DeclaredDate(None, "undated", "impossible calendar day")
    if _VAGUE.search(s):
        return DeclaredDate(None, "undated", "not a date")
    q = _qualified(s)
    if q is not None:
        return q
    periods = find_periods(s)
    if len(periods) == 1 and re.search(r"\b(early|mid|late|end|beginning|start|middle)", s, re.I) is None:
        p = periods[0]
        if p.kind == "day":
            return DeclaredDate(p.start, "normalized", "day written in words", p.end)
        if p.kind == "day_either":
            return DeclaredDate(p.start, "normalized", "day/month order unclear -> the earlier reading", p.end)
        return DeclaredDate(p.start, "normalized", f"{p.kind} -> first day", p.end)
    return DeclaredDate(None, "undated", "not a date")


#: Quoted spans: "...", “...”, ‘...’ (straight single quotes are apostrophes too often).
_QUOTED = re.compile(r"\"[^\"]*\"|“[^”]*”|‘[^’]*’")


_URL = re.compile(r"\b(?:https?://|www\.)\S+", re.I)


def without_urls(text: str) -> str:
    """``text`` with web addresses blanked out (same length): a date in an address
    ("/ai-solves-millennium-problem-before-july-2025/") names a page, it states nothing."""
    return _URL.sub(lambda m: " " * len(m[0]), text or "") if "http" in text or "www." in text else text


def unquoted(text: str) -> str:
    """``text`` with quoted spans ("...", “...”, ‘...’) blanked out (same length), e.g. so a
    quoted question "Will X happen?" does not count as the claim's own wording."""
    return _QUOTED.sub(lambda m: " " * len(m[0]), text or "")
