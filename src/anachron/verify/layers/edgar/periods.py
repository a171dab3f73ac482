"""The fiscal or calendar periods a company-figure claim names (:func:`find_fiscal_periods`).

Quarters ("Q3 2019", "third quarter of fiscal 2019", "the December 2019 quarter", "1Q20"), fiscal and
full years, "year ended <day>" and balance-sheet dates ("as of <day>"), bare years last
(docs/verification.md#grounded; :mod:`anachron.verify.layers.edgar`).
"""

from __future__ import annotations

import calendar
import datetime as dt
import re
from dataclasses import dataclass

from anachron.verify.dates import find_periods
from anachron.words import MONTH_ALTERNATION, MONTH_NUMBERS


_ORD = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4}
_Y = r"((?:19|20)\d{2}|'?\d{2})"
_FISCAL_WORD = r"(fiscal(?:\s+year)?|FY)"
_QUARTER_RES = (
    # Q3 2019, Q3 FY2019, Q3 of fiscal 2019, fiscal Q3 2019, FY2019 Q3, Q3'19
    re.compile(rf"\b(?:(fiscal|FY)\s*)?Q([1-4])\s*(?:of\s+)?(?:{_FISCAL_WORD}\s*)?{_Y}\b", re.I),
    re.compile(rf"\b(?:{_FISCAL_WORD}\s*)?((?:19|20)\d{{2}})\s*Q([1-4])\b", re.I),
    # third quarter of fiscal 2019, the fiscal third quarter 2019, 3rd quarter 2019
    re.compile(
        rf"\b(fiscal\s+)?(first|second|third|fourth|1st|2nd|3rd|4th)(?:[- ]fiscal)?[- ]quarter(?:\s+of)?(?:\s+(?:the\s+)?{_FISCAL_WORD})?(?:\s+year)?,?\s+{_Y}\b",
        re.I,
    ),
    # fiscal 2019 third quarter
    re.compile(rf"\b{_FISCAL_WORD}\s*{_Y}\s+(first|second|third|fourth|1st|2nd|3rd|4th)[- ]quarter\b", re.I),
)
_FY_RE = re.compile(rf"\b{_FISCAL_WORD}\s*{_Y}\b|\b((?:19|20)\d{{2}})\s+fiscal(?:\s+year)?\b", re.I)
_FULL_YEAR = re.compile(r"\b(?:full[- ]year|calendar(?:\s+year)?|year)\s+((?:19|20)\d{2})\b|\b((?:19|20)\d{2})\s+(?:full[- ]year|annual)\b", re.I)
_ENDED = re.compile(r"\b(year|quarter|three months|twelve months|12 months)s?\s+end(?:ed|ing)\s+(?:in\s+)?", re.I)
#: "as of September 28, 2019": a balance-sheet date
_AS_OF = re.compile(r"\b(?:as\s+(?:of|at)|at\s+the\s+end\s+of)\s+", re.I)
#: "the December 2019 quarter", "the September-quarter 2019", "December quarter of 2019"
_MONTH_QUARTER = re.compile(
    rf"\b({MONTH_ALTERNATION})\.?[- ](?:((?:19|20)\d{{2}})[- ])?quarter\b(?:\s+of)?(?(2)|,?\s+((?:19|20)\d{{2}})\b)", re.I
)
#: "quarter ended December 2019" (the month only)
_MONTH_YEAR_AT = re.compile(rf"({MONTH_ALTERNATION})\.?,?\s+((?:19|20)\d{{2}})\b", re.I)
#: "1Q20", "3Q 2019", "4Q'19"
_NQ = re.compile(rf"\b([1-4])Q\s*{_Y}\b")
_BARE_YEAR = re.compile(r"(?<![\d$.,/-])((?:19|20)\d{2})(?![\d%/-])(?!\s*(?:million|billion|shares|employees|stores))")


def _year(tok: str) -> int:
    tok = tok.lstrip("'")
    y = int(tok)
    return y + 2000 if y < 100 else y


@dataclass(frozen=True)
class PeriodRef:
    """A period named in a claim: ``kind`` annual|quarter|instant (a balance-sheet date: "as of
    <day>"); ``fiscal`` True (said so) or None (ambiguous);
    ``end`` set when the claim gives the period's end day ("year ended September 28, 2019"), or
    with ``month`` True the last day of the month it ends in ("the December 2019 quarter")."""

    kind: str
    year: int
    quarter: int | None
    fiscal: bool | None
    text: str
    end: dt.date | None = None
    month: bool = False


def find_fiscal_periods(text: str) -> list[PeriodRef]:
    """Fiscal or calendar periods named in ``text``: quarters first, then fiscal years, then
    "year ended <day>", then bare years (only when nothing more specific is named)."""
    refs: list[PeriodRef] = []
    taken: list[tuple[int, int]] = []

    def free(span: tuple[int, int]) -> bool:
        return not any(s < span[1] and span[0] < e for s, e in taken)

    def add(m: re.Match[str], ref: PeriodRef) -> None:
        if free(m.span()):
            taken.append(m.span())
            refs.append(ref)

    q1, q2, q3, q4 = _QUARTER_RES
    for m in q1.finditer(text):
        add(m, PeriodRef("quarter", _year(m[4]), int(m[2]), True if (m[1] or m[3]) else None, m[0]))
    for m in q2.finditer(text):
        add(m, PeriodRef("quarter", int(m[2]), int(m[3]), True if m[1] else None, m[0]))
    for m in q3.finditer(text):
        add(m, PeriodRef("quarter", _year(m[4]), _ORD[m[2].lower()], True if (m[1] or m[3]) else None, m[0]))
    for m in q4.finditer(text):
        add(m, PeriodRef("quarter", _year(m[2]), _ORD[m[3].lower()], True, m[0]))
    for m in _NQ.finditer(text):
        add(m, PeriodRef("quarter", _year(m[2]), int(m[1]), None, m[0]))
    for m in _MONTH_QUARTER.finditer(text):
        y, mo = int(m[2] or m[3]), MONTH_NUMBERS[m[1].lower()]
        end = dt.date(y, mo, calendar.monthrange(y, mo)[1])
        add(m, PeriodRef("quarter", y, None, True, m[0], end=end, month=True))
    for m in _FY_RE.finditer(text):
        y = m[2] or m[3]
        add(m, PeriodRef("annual", _year(y), None, True, m[0]))
    for m in _FULL_YEAR.finditer(text):
        add(m, PeriodRef("annual", int(m[1] or m[2]), None, None, m[0]))
    ended = [(m, "quarter" if m[1].lower() in ("quarter", "three months") else "annual") for m in _ENDED.finditer(text)]
    for m, kind in ended + [(m, "instant") for m in _AS_OF.finditer(text)]:
        rest = text[m.end() : m.end() + 40]
        days = [p for p in find_periods(rest) if p.kind == "day" and rest.find(p.text) <= 2]
        month = _MONTH_YEAR_AT.match(rest)
        if days:
            span = (m.start(), m.end() + rest.find(days[0].text) + len(days[0].text))
            d, by_month = days[0].start, False
        elif month:
            span = (m.start(), m.end() + month.end())
            y, mo = int(month[2]), MONTH_NUMBERS[month[1].lower()]
            d, by_month = dt.date(y, mo, calendar.monthrange(y, mo)[1]), True
        else:
            continue
        if free(span):
            taken.append(span)
            refs.append(PeriodRef(kind, d.year, None, True, text[span[0] : span[1]], end=d, month=by_month))
    if refs:
        return refs
    masked = text
    for p in find_periods(text):
        if p.kind in ("day", "month"):
            masked = masked.replace(p.text, " " * len(p.text))
    for m in _BARE_YEAR.finditer(masked):
        add(m, PeriodRef("annual", int(m[1]), None, None, m[0]))
    return refs
