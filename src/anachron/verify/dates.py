"""Dates in claims: normalising a declared date, and finding dates mentioned in text.

A *declared* date is the ``source_date`` the model wrote. A *mentioned* date is a
time reference inside the fact text ("closed at $61.45 on May 29, 2020",
"Q3 2019 revenue", "in March 2020"). Every reference is a period
(:class:`Period`): a day, a month, a quarter or a year, with its first and last day.
"""

from __future__ import annotations

import calendar
import datetime as dt
import re
from dataclasses import dataclass

_MONTHS = {m.lower(): i for i, m in enumerate(calendar.month_name) if m}
_MONTHS.update({m.lower(): i for i, m in enumerate(calendar.month_abbr) if m})
_MONTHS["sept"] = 9
_MONTH_RE = "|".join(sorted((re.escape(m) for m in _MONTHS), key=len, reverse=True))
_ORD = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4}

_ISO_DAY = re.compile(r"\b((?:19|20)\d{2})-(\d{1,2})-(\d{1,2})\b")
_ISO_MONTH = re.compile(r"\b((?:19|20)\d{2})-(\d{1,2})\b(?!-\d)")
_US_DAY = re.compile(rf"\b({_MONTH_RE})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+((?:19|20)\d{{2}})\b", re.I)
_EU_DAY = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+({_MONTH_RE})\.?,?\s+((?:19|20)\d{{2}})\b", re.I)
_SLASH_DAY = re.compile(r"\b(\d{1,2})/(\d{1,2})/((?:19|20)\d{2})\b")
_MONTH_YEAR = re.compile(rf"\b({_MONTH_RE})\.?,?\s+(?:of\s+)?((?:19|20)\d{{2}})\b", re.I)
#: Q3 2019, 2019 Q3; fiscal when "fiscal"/"FY" is attached: fiscal Q3 2019, Q3 FY2019,
#: Q3 of fiscal 2019, FY2019 Q3.
_QUARTER = re.compile(
    r"\b(?:(?P<f1>fiscal\s+|FY\s*)?Q(?P<q1>[1-4])\s*(?:(?P<f2>(?:of\s+)?(?:fiscal(?:\s+year)?\s+|FY\s*)))?'?(?P<y1>(?:19|20)\d{2})"
    r"|(?P<f3>fiscal(?:\s+year)?\s+|FY\s*)?(?P<y2>(?:19|20)\d{2})\s*Q(?P<q2>[1-4]))\b",
    re.I,
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
_FISCAL_YEAR = re.compile(
    r"\b(?:FY\s*'?((?:19|20)\d{2})|fiscal(?:\s+year)?\s+((?:19|20)\d{2})|full[- ]year\s+((?:19|20)\d{2})"
    r"|((?:19|20)\d{2})\s+(?:full[- ]year|fiscal\s+year|annual))\b",
    re.I,
)
_YEAR = re.compile(r"(?<![\d$.,-])((?:19|20)\d{2})(?![\d%])(?!\s*(?:million|billion|bn|m\b|shares|employees|stores))")


@dataclass(frozen=True)
class Period:
    """A time reference: ``kind`` in {day, month, quarter, fiscal_quarter, year, fiscal_year};
    inclusive bounds.

    A ``fiscal_quarter`` ("fiscal Q2 2026") has no known calendar position: its bounds are the
    widest plausible ones (:func:`fiscal_quarter_period`)."""

    kind: str
    start: dt.date
    end: dt.date
    text: str


def _month_period(year: int, month: int, text: str) -> Period:
    last = calendar.monthrange(year, month)[1]
    return Period("month", dt.date(year, month, 1), dt.date(year, month, last), text)


def quarter_period(year: int, q: int, text: str = "") -> Period:
    """Calendar quarter ``q`` (1-4) of ``year``."""
    start = dt.date(year, 3 * q - 2, 1)
    end_month = 3 * q
    return Period("quarter", start, dt.date(year, end_month, calendar.monthrange(year, end_month)[1]), text)


#: A fiscal year ``Y`` ends between late January of ``Y`` (NVIDIA, retailers) and December of
#: ``Y``; fiscal quarter ``q`` therefore starts no earlier than this many days before the end
#: of January of ``Y-1`` plus ``q-1`` quarters.
FISCAL_EARLY_SLACK_DAYS = 10


def fiscal_quarter_period(year: int, q: int, text: str = "") -> Period:
    """Fiscal quarter ``q`` of fiscal ``year`` with unknown fiscal calendar: from its earliest
    plausible start (a fiscal year ending in late January of ``year``: Q1 starts around
    January 21 of ``year - 1``) to its latest plausible end (a fiscal year that is the calendar
    year: the end of calendar quarter ``q`` of ``year``). The earliest plausible end of the
    quarter is ``start + 89 days`` (:func:`fiscal_quarter_earliest_end`)."""
    start = dt.date(year - 1, 1, 31) - dt.timedelta(days=FISCAL_EARLY_SLACK_DAYS)
    start = _add_months(start, 3 * (q - 1))
    end = quarter_period(year, q).end
    return Period("fiscal_quarter", start, end, text)


def fiscal_quarter_earliest_end(p: Period) -> dt.date:
    """Earliest plausible last day of a ``fiscal_quarter`` period (start + 89 days)."""
    return p.start + dt.timedelta(days=89)


def _add_months(d: dt.date, months: int) -> dt.date:
    m = d.month - 1 + months
    y, m = d.year + m // 12, m % 12 + 1
    return dt.date(y, m, min(d.day, calendar.monthrange(y, m)[1]))


def _safe_day(y: int, m: int, d: int) -> dt.date | None:
    try:
        return dt.date(y, m, d)
    except ValueError:
        return None


def find_periods(text: str) -> list[Period]:
    """All time references in ``text``, most specific first for overlapping spans.

    Recognises ISO days and months, "May 29, 2020", "29 May 2020", "5/29/2020" (US
    order), "May 2020", "Q1 2020" / "2020 Q1" / "first quarter of 2020",
    "FY2019" / "fiscal 2019" / "full-year 2019", and bare years. Impossible days
    ("2019-02-30") are skipped. A year that is part of a larger match is not
    reported again on its own.
    """
    found: list[tuple[int, int, Period]] = []
    taken: list[tuple[int, int]] = []

    def add(m: re.Match[str], period: Period | None) -> None:
        if period is None:
            return
        span = m.span()
        if any(s <= span[0] < e or s < span[1] <= e for s, e in taken):
            return
        taken.append(span)
        found.append((span[0], span[1], period))

    for m in _ISO_DAY.finditer(text):
        d = _safe_day(int(m[1]), int(m[2]), int(m[3]))
        add(m, Period("day", d, d, m[0]) if d else None)
    for m in _US_DAY.finditer(text):
        d = _safe_day(int(m[3]), _MONTHS[m[1].lower()], int(m[2]))
        add(m, Period("day", d, d, m[0]) if d else None)
    for m in _EU_DAY.finditer(text):
        d = _safe_day(int(m[3]), _MONTHS[m[2].lower()], int(m[1]))
        add(m, Period("day", d, d, m[0]) if d else None)
    for m in _SLASH_DAY.finditer(text):
        d = _safe_day(int(m[3]), int(m[1]), int(m[2]))
        add(m, Period("day", d, d, m[0]) if d else None)
    for m in _QUARTER.finditer(text):
        q, y = (m["q1"], m["y1"]) if m["q1"] else (m["q2"], m["y2"])
        fiscal = bool(m["f1"] or m["f2"] or m["f3"])
        add(m, (fiscal_quarter_period if fiscal else quarter_period)(int(y), int(q), m[0]))
    for m in _QUARTER_WORDS.finditer(text):
        fiscal = bool(m["f1"] or m["f2"] or m["f3"])
        add(m, (fiscal_quarter_period if fiscal else quarter_period)(int(m["y"]), _ORD[m["q"].lower()], m[0]))
    for m in _QUARTER_WORDS_FY_FIRST.finditer(text):
        add(m, fiscal_quarter_period(int(m["y"]), _ORD[m["q"].lower()], m[0]))
    for m in _FISCAL_YEAR.finditer(text):
        y = int(next(g for g in m.groups() if g))
        add(m, Period("fiscal_year", dt.date(y, 1, 1), dt.date(y, 12, 31), m[0]))
    for m in _MONTH_YEAR.finditer(text):
        add(m, _month_period(int(m[2]), _MONTHS[m[1].lower()], m[0]))
    for m in _ISO_MONTH.finditer(text):
        mo = int(m[2])
        add(m, _month_period(int(m[1]), mo, m[0]) if 1 <= mo <= 12 else None)
    for m in _YEAR.finditer(text):
        y = int(m[1])
        add(m, Period("year", dt.date(y, 1, 1), dt.date(y, 12, 31), m[0]))
    found.sort(key=lambda t: t[0])
    return [p for _, _, p in found]


@dataclass(frozen=True)
class DeclaredDate:
    """A normalised declared date.

    ``status``: ``exact`` (a valid ISO day), ``normalized`` (a clear coarser date mapped to
    its first day; ``rule`` says how), or ``undated`` (missing or not a date; ``date`` is None).
    """

    date: dt.date | None
    status: str
    rule: str | None = None


#: First month of each third of a year: "early" (Jan-Apr), "mid" (May-Aug), "late" (Sep-Dec).
_THIRD_START = {"early": 1, "mid": 5, "late": 9}
_QUALIFIER = re.compile(
    r"(?:the\s+)?(?P<q>early|beginning\s+of|start\s+of|middle\s+of|mid|late|end\s+of)(?:\s+|-|\s*-\s*)(?:the\s+)?(?P<rest>.+)",
    re.I,
)
_QUALIFIER_THIRD = {
    "early": "early", "beginning of": "early", "start of": "early",
    "mid": "mid", "middle of": "mid",
    "late": "late", "end of": "late",
}
_VAGUE = re.compile(r"\b(around|circa|approx\w*|about|roughly|sometime|some\s+time|before|after|since|until|by|or)\b|\bca\.|[~?]", re.I)


def _qualified(s: str) -> DeclaredDate | None:
    """ "early 2019" / "mid-2019" / "late 2019" / "end of 2019" -> the first day of that third
    of the year (Jan 1, May 1, Sep 1); with a month ("late March 2019") the first day of that
    third of the month (1st, 11th, 21st). A lower bound: it never dates a fact later than it
    could have been public, so it never invents a leak."""
    m = _QUALIFIER.fullmatch(s.strip())
    if not m:
        return None
    third = _QUALIFIER_THIRD[re.sub(r"\s+", " ", m["q"].lower())]
    rest = m["rest"].strip()
    y = re.fullmatch(r"((?:19|20)\d{2})s?", rest)
    if y and not rest.endswith("s"):
        year = int(y[1])
        return DeclaredDate(dt.date(year, _THIRD_START[third], 1), "normalized", f"'{third} YYYY' -> first day of that third of the year")
    periods = find_periods(rest)
    if len(periods) == 1 and periods[0].text.strip() == rest and periods[0].kind == "month":
        p = periods[0]
        day = {"early": 1, "mid": 11, "late": 21}[third]
        return DeclaredDate(p.start.replace(day=day), "normalized", f"'{third} MONTH YYYY' -> first day of that third of the month")
    return None


def normalize_declared(value: str | None) -> DeclaredDate:
    """Normalise a model's ``source_date``.

    A valid ``YYYY-MM-DD`` is exact. "2019-11", "November 2019", "Q3 2019" and "2019"
    are normalised to the first day of the period (the earliest the fact could have been
    public, which never invents a leak). "early 2019" -> 2019-01-01, "mid 2019" /
    "mid-2019" -> 2019-05-01, "late 2019" / "end of 2019" -> 2019-09-01 (the first day of
    that third of the year; "late March 2019" -> 2019-03-21 likewise). Each normalisation
    records its ``rule``. "2019-02-30" is ``undated`` ("impossible calendar day"); vague
    forms ("around 2019", "2019 or 2020", "before 2020") and anything else are ``undated``
    ("not a date"); the caller counts them apart.
    """
    if value is None or not str(value).strip():
        return DeclaredDate(None, "undated", "missing")
    s = str(value).strip()
    m = re.fullmatch(r"((?:19|20)\d{2})-(\d{2})-(\d{2})", s)
    if m:
        d = _safe_day(int(m[1]), int(m[2]), int(m[3]))
        return DeclaredDate(d, "exact") if d else DeclaredDate(None, "undated", "impossible calendar day")
    if _VAGUE.search(s):
        return DeclaredDate(None, "undated", "not a date")
    q = _qualified(s)
    if q is not None:
        return q
    periods = find_periods(s)
    if len(periods) == 1 and re.search(r"\b(early|mid|late|end|beginning|start|middle)", s, re.I) is None:
        p = periods[0]
        if p.kind == "day":
            return DeclaredDate(p.start, "normalized", "day written in words")
        return DeclaredDate(p.start, "normalized", f"{p.kind} -> first day")
    return DeclaredDate(None, "undated", "not a date")


#: Quoted spans: "...", “...”, ‘...’ (straight single quotes are apostrophes too often).
_QUOTED = re.compile(r"\"[^\"]*\"|“[^”]*”|‘[^’]*’")


def unquoted(text: str) -> str:
    """``text`` with quoted spans ("...", “...”, ‘...’) blanked out (same length), e.g. so a
    quoted question "Will X happen?" does not count as the claim's own wording."""
    return _QUOTED.sub(lambda m: " " * len(m[0]), text or "")
