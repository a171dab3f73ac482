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
_QUARTER = re.compile(r"\b(?:Q([1-4])\s*(?:FY\s*)?'?((?:19|20)\d{2})|((?:19|20)\d{2})\s*Q([1-4]))\b", re.I)
_QUARTER_WORDS = re.compile(
    r"\b(first|second|third|fourth|1st|2nd|3rd|4th)[- ]quarter(?:\s+of)?(?:\s+(?:fiscal|FY))?\s+((?:19|20)\d{2})\b", re.I
)
_FISCAL_YEAR = re.compile(
    r"\b(?:FY\s*'?((?:19|20)\d{2})|fiscal(?:\s+year)?\s+((?:19|20)\d{2})|full[- ]year\s+((?:19|20)\d{2})"
    r"|((?:19|20)\d{2})\s+(?:full[- ]year|fiscal\s+year|annual))\b",
    re.I,
)
_YEAR = re.compile(r"(?<![\d$.,-])((?:19|20)\d{2})(?![\d%])(?!\s*(?:million|billion|bn|m\b|shares|employees|stores))")


@dataclass(frozen=True)
class Period:
    """A time reference: ``kind`` in {day, month, quarter, year, fiscal_year}; inclusive bounds."""

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
        q, y = (m[1], m[2]) if m[1] else (m[4], m[3])
        add(m, quarter_period(int(y), int(q), m[0]))
    for m in _QUARTER_WORDS.finditer(text):
        add(m, quarter_period(int(m[2]), _ORD[m[1].lower()], m[0]))
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


def normalize_declared(value: str | None) -> DeclaredDate:
    """Normalise a model's ``source_date``.

    A valid ``YYYY-MM-DD`` is exact. "2019-11", "November 2019", "Q3 2019" and "2019"
    are normalised to the first day of the period (the earliest the fact could have been
    public, which never invents a leak). "2019-02-30", "late 2019" (vague) and
    anything else are ``undated``; the caller counts them apart.
    """
    if value is None or not str(value).strip():
        return DeclaredDate(None, "undated", "missing")
    s = str(value).strip()
    m = re.fullmatch(r"((?:19|20)\d{2})-(\d{2})-(\d{2})", s)
    if m:
        d = _safe_day(int(m[1]), int(m[2]), int(m[3]))
        return DeclaredDate(d, "exact") if d else DeclaredDate(None, "undated", "impossible calendar day")
    periods = find_periods(s)
    if len(periods) == 1 and re.search(r"\b(early|mid|late|end|around|circa|approx)", s, re.I) is None:
        p = periods[0]
        if p.kind == "day":
            return DeclaredDate(p.start, "normalized", "day written in words")
        return DeclaredDate(p.start, "normalized", f"{p.kind} -> first day")
    return DeclaredDate(None, "undated", "not a date")
