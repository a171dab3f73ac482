"""Grounded dating of company financial figures from EDGAR point-in-time facts (docs/verification.md#grounded).

A claim such as "Apple's FY2019 revenue was $260.2B" or "Tesla's Q3 2019 revenue was $6.3
billion" states information that became public with the *first SEC filing that reported it*.
:class:`EdgarGrounding` dates such a claim to that filing's ``filed`` date, read from the
point-in-time facts table of :mod:`anachron.sources.edgar` (one row per filing's report of a
value; columns ``cik, entity_name, concept, unit, val, start, end, fy, form, filed, accn,
revision, value_changed, restates``).

How a claim is read:

* **company** — the distinctive first word of an EDGAR ``entity_name`` ("Apple", "NVIDIA",
  "Tesla", "Alphabet"), an alias (tickers AAPL, NVDA, TSLA, GOOGL, GOOG; "Google"; more via the
  ``aliases`` argument), or an instance ticker whose instance name matches a company.
* **period** — in the company's own fiscal calendar. The fiscal year end of every 10-K (and
  10-K/A) accession is the latest ``end`` of its annual-duration rows (350-380 days); each end
  is labelled by the fiscal year the company gives it (the per-company mode of
  ``fy - year(end)``, robust to SEC's occasional wrong ``fy``). Apple's fiscal 2019 therefore
  ends 2019-09-28, NVIDIA's fiscal 2020 ends 2020-01-26. Fiscal quarter ``q`` of fiscal year
  ``Y`` is the quarterly-duration row (80-100 days) that ends about ``q`` quarters after the end
  of fiscal ``Y-1``. "Q3 2019" without the word fiscal is tried as the fiscal quarter first,
  then as the reported quarter that overlaps calendar Q3 2019 most; a bare year likewise.
* **concept family** — by keywords: revenue/sales, net income/loss, EPS, operating income,
  gross profit, operating cash flow, capital expenditure, R&D, cash, total assets, total
  liabilities, stockholders' equity (see :data:`FAMILIES`).
* **value** — "$260.2B", "$260.2 billion", "$55,256 million", "$2.97 per share"; a value
  matches a reported one within the stated precision (half a unit of the last stated digit)
  or, failing any such match, within ``max(0.5 %, half a unit)``.

Effective date: the earliest ``filed`` among the company's rows for that period and concept
family whose value matches. A value changed by a later filing (a 10-K/A, or a split-adjusted
EPS in the next 10-K; ``value_changed``/``restates``) is a different value: a claim with the
restated value dates to the restating filing, one with the original value to the original
filing. If the period and concept match but no value does (or no value is stated), the claim
dates to the first filing that reported that period's figure and the reason says so.
Forward-looking statements (guidance, expectations, estimates) are not checked: their value is
not a reported figure. Category A3 when the claim speaks of a report or filing, else A2.
"""

from __future__ import annotations

import calendar
import datetime as dt
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np
import pandas as pd

from anachron.frames import require_columns
from anachron.names import has_symbol, has_word
from anachron.verify.dates import find_periods
from anachron.verify.layers.figures import StatedValue, parse_values
from anachron.verify.layers.grounded import GroundedVerdict, instance_cutoff, names_date_after
from anachron.words import MONTH_ALTERNATION, MONTH_NUMBERS

__all__ = ["EdgarGrounding", "FAMILIES", "PeriodRef", "StatedValue", "find_fiscal_periods", "load_edgar_grounding",
           "parse_values"]

#: A value reported only before the cutoff supports a pre-cutoff date only when the table has
#: the company's filings for at least this many days after the cutoff.
SUPPORT_DAYS_AFTER = 120
#: Duration classes of EDGAR rows, in days (inclusive).
ANNUAL_DAYS = (350, 380)
QUARTER_DAYS = (80, 100)
#: Allowed difference between a period end found and a row's ``end``.
END_SLACK = dt.timedelta(days=3)
#: Relative tolerance floor for value matches.
REL_TOL = 0.005
#: A value matched in any period (no period named, or not the one named) must be stated this
#: exactly (half a unit of its last digit relative to it): "$91.8 billion" (0.05 %) or "$69
#: million" (0.7 %) is, "$16 million" (3 %) or "$5 billion" (10 %) is not; a per-share amount to
#: the cent always is.
VALUE_REL_PRECISION = 0.01

#: Default aliases (alias -> the company's key word or CIK); applied only to companies in the table.
DEFAULT_ALIASES: dict[str, str | int] = {
    "AAPL": "apple",
    "NVDA": "nvidia",
    "TSLA": "tesla",
    "GOOGL": "alphabet",
    "GOOG": "alphabet",
    "Google": "alphabet",
}


@dataclass(frozen=True)
class Family:
    """A concept family: keywords that name it, its XBRL concepts (in preference order), kind."""

    name: str
    pattern: re.Pattern[str]
    concepts: tuple[str, ...]
    instant: bool = False
    per_share: bool = False


def _rx(p: str) -> re.Pattern[str]:
    return re.compile(p, re.I)


#: Concept families, most specific first; a family's match masks its span for the later ones.
FAMILIES: tuple[Family, ...] = (
    Family(
        "EPS",
        _rx(r"\b(?:(?:diluted|basic)\s+)?(?:EPS|earnings per (?:diluted |basic )?share|(?:net )?(?:income|profit|earnings|loss) per (?:diluted |basic )?share|per[- ]share (?:earnings|profit|loss))\b"),
        ("EarningsPerShareDiluted", "EarningsPerShareBasic", "EarningsPerShareBasicAndDiluted"),
        per_share=True,
    ),
    Family("operating income", _rx(r"\b(?:operating (?:income|profit|loss|earnings)|income from operations|(?:loss|losses) from operations)\b"), ("OperatingIncomeLoss",)),
    Family("gross profit", _rx(r"\bgross (?:profit|margin)s?\b"), ("GrossProfit",)),
    Family(
        "operating cash flow",
        _rx(r"\b(?:operating cash flows?|cash flows? from operati\w+|cash (?:provided by|generated (?:by|from)) operati\w+)\b"),
        ("NetCashProvidedByUsedInOperatingActivities",),
    ),
    Family(
        "capital expenditure",
        _rx(r"\b(?:capital expenditures?|capex|capital spending|(?:payments (?:to acquire|for)|purchases? of) property,? plant,? and equipment)\b"),
        ("PaymentsToAcquirePropertyPlantAndEquipment",),
    ),
    Family("R&D expense", _rx(r"(?:\bR&D\b|\bresearch and development\b)"), ("ResearchAndDevelopmentExpense",)),
    Family(
        "net income",
        _rx(r"\b(?:net (?:income|earnings|profit|loss)|earn(?:ed|s)|(?<!gross )(?<!operating )profits?|(?<!per share )earnings(?! (?:call|report|release|date|season|guidance)))\b"),
        ("NetIncomeLoss", "ProfitLoss", "NetIncomeLossAvailableToCommonStockholdersBasic"),
    ),
    Family(
        "revenue",
        _rx(r"\b(?:total |net )?(?:revenues?|sales|turnover|top[- ]line)\b"),
        (
            "Revenues",
            "RevenueFromContractWithCustomerExcludingAssessedTax",
            "SalesRevenueNet",
            "RevenueFromContractWithCustomerIncludingAssessedTax",
            "SalesRevenueGoodsNet",
        ),
    ),
    Family("total assets", _rx(r"\btotal assets\b"), ("Assets",), instant=True),
    Family("total liabilities", _rx(r"\btotal liabilities\b"), ("Liabilities",), instant=True),
    Family("stockholders' equity", _rx(r"\b(?:stockholders|shareholders)['’]? equity\b"), ("StockholdersEquity",), instant=True),
    Family(
        "cash",
        _rx(r"\bcash(?: and (?:cash )?equivalents)?\b(?!\s*flows?)(?! (?:provided|generated|from|dividends?))"),
        ("CashAndCashEquivalentsAtCarryingValue", "CashCashEquivalentsRestrictedCashAndRestrictedCashEquivalents"),
        instant=True,
    ),
)

_FORWARD = _rx(
    r"\b(?:guidance|guided|guides|expect(?:s|ed|ing|ations?)?|forecast(?:s|ed|ing)?|outlook|projected|projects|projection|"
    r"anticipat\w+|estimates?|estimated|consensus|analysts?|will|would|target(?:s|ed)?|plans? to|aims? to|could|might)\b"
    r"|(?-i:\bmay\b)"
)
#: A reported figure compared with a forecast ("missed estimates", "beat consensus of $1.2B", "above
#: what analysts expected"): the comparison is masked before the forward-looking test, and a figure
#: right after it (the forecast's value) is not a stated figure.
_EXPECTATION = _rx(
    r"\b(?:beat|beats|beating|miss|missed|misses|missing|top(?:s|ped|ping)?|exceed(?:s|ed|ing)?|surpass(?:es|ed|ing)?|"
    r"above|below|ahead\s+of|short\s+of|shy\s+of|in\s+line\s+with|better\s+than|worse\s+than|lagg?(?:ed|ing)?|"
    r"versus|vs\.?|compared\s+(?:with|to)|against|trail(?:s|ed|ing)?)\s+"
    r"(?:(?:the|its|their|own|analysts['’]?|Wall\s+Street(?:['’]s)?|the\s+Street(?:['’]s)?|market|average|"
    r"consensus|prior|previous|earlier|company|management(?:['’]s)?|FactSet|Refinitiv|Bloomberg|LSEG|Zacks)\s+)*"
    r"(?:estimates?|expectations?|consensus|forecasts?|guidance|projections?|targets?|"
    r"what\s+(?:analysts|Wall\s+Street|investors|the\s+market)\s+(?:had\s+)?(?:expected|forecast|projected|estimated|anticipated))"
    r"(?:\s+(?:of|for|at)\s+(?:about\s+|around\s+)?(?:US\s?\$|\$)\s?\d[\d,.]*(?:\s*(?:trillion|billion|million|bn|mn|[bmk]\b))?"
    r"(?:\s+(?:a|per)\s+share)?)?"
)
_A_SHARE = _rx(r"\s*(?:a|per)\s+(?:diluted\s+|basic\s+)?share\b")
_REPORT_WORDS = _rx(r"\b(?:reported|reports|reporting|filed|filing|10-K(?:/A)?|10-Q|annual report|quarterly report|announced|disclosed|posted|published)\b")

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


def _ended(kind: str, end: dt.date) -> str:
    """ "quarter ended 2019-12-28", or "as of 2019-12-28" for a balance-sheet date."""
    return f"as of {end}" if kind == "instant" else f"{kind} ended {end}"


def _first_word(name: str) -> str:
    words = re.findall(r"[A-Za-z][A-Za-z&'.-]*", name or "")
    skip = {"the", "inc", "inc.", "corp", "corp."}
    words = [w.rstrip(".,") for w in words if w.lower() not in skip]
    return words[0].lower() if words else ""


def _fmt_money(v: float, per_share: bool) -> str:
    if per_share:
        return f"${v:,.2f}"
    a = abs(v)
    sign = "-" if v < 0 else ""
    for div, suf in ((1e12, "T"), (1e9, "B"), (1e6, "M")):
        if a >= div:
            return f"{sign}${a / div:,.3f}{suf}"
    return f"{sign}${a:,.0f}"


@dataclass(frozen=True)
class _Candidate:
    kind: str  # annual | quarter
    end: dt.date
    label: str


class EdgarGrounding:
    """Date company financial figures by the EDGAR filing that first reported them.

    Args:
        facts: the EDGAR point-in-time facts table (``anachron.sources.edgar`` output; at least
            ``cik, entity_name, concept, unit, val, start, end, fy, form, filed, accn``;
            ``value_changed`` and ``restates`` are used for reasons when present).
        aliases: extra names or tickers of companies: alias -> the company's key word (the first
            distinctive word of its ``entity_name``, lower case), its full entity name, or its CIK.
            Upper-case aliases match as case-sensitive whole words, others case-insensitively.

    ``check(fact, instance)`` also uses ``instance["tickers"]`` / ``instance["names"]`` when
    given: a ticker whose name starts with a company's key word refers to that company.
    """

    def __init__(self, facts: pd.DataFrame, aliases: Mapping[str, str | int] | None = None):
        concepts = {c for f in FAMILIES for c in f.concepts}
        need = ["cik", "entity_name", "concept", "unit", "val", "start", "end", "fy", "form", "filed", "accn"]
        require_columns(facts, need, "EDGAR facts")
        df = facts.copy()
        df["end_d"] = pd.to_datetime(df["end"], errors="coerce")
        df["start_d"] = pd.to_datetime(df["start"], errors="coerce")
        df["filed_d"] = pd.to_datetime(df["filed"], errors="coerce")
        df = df.dropna(subset=["end_d", "filed_d", "val"])
        df["days"] = (df["end_d"] - df["start_d"]).dt.days
        self.names: dict[int, str] = {}
        self._keys: dict[str, int] = {}
        self._fye: dict[int, dict[int, dt.date]] = {}
        self._quarter_ends: dict[int, list[dt.date]] = {}
        self._rows: dict[int, pd.DataFrame] = {}
        self._last_filed: dict[int, dt.date] = {}
        #: (cik, family) -> (absolute values ascending, the rows in that order)
        self._values: dict[tuple[int, str], tuple[np.ndarray, pd.DataFrame]] = {}
        #: (cik, family) -> the company's rows of the family's concepts in its unit, in ``_rows`` order
        self._family_rows: dict[tuple[int, str], pd.DataFrame] = {}
        for cik, g in df.groupby("cik", sort=True):
            cik = int(cik)
            name = str(g["entity_name"].iloc[-1])
            self.names[cik] = name
            key = _first_word(name)
            if key:
                self._keys[key] = cik
            self._fye[cik] = self._fiscal_year_ends(g)
            q = g[g["days"].between(*QUARTER_DAYS)]
            self._quarter_ends[cik] = sorted({d.date() for d in q["end_d"]})
            rows = g[g["concept"].isin(concepts)].copy()
            rows["end_date"] = rows["end_d"].dt.date
            rows["filed_date"] = rows["filed_d"].dt.date
            self._rows[cik] = rows.sort_values(["filed_d", "accn"], kind="stable")
            self._last_filed[cik] = g["filed_d"].max().date()
        self._index_families()
        self._aliases: dict[str, int] = {}
        for alias, target in {**DEFAULT_ALIASES, **dict(aliases or {})}.items():
            cik = self._resolve(target)
            if cik is not None:
                self._aliases[alias] = cik

    # -- building -------------------------------------------------------------

    def _index_families(self) -> None:
        """Per company and family: its rows of the family's concepts in the family's unit
        (``_family_rows``, which :meth:`_rows_for` narrows to a period), and those figures indexed
        by absolute value (``_values``: every period and duration; a row filed on or before its own
        period end, cover data, is left out). One pass per family over every company's rows, so
        the cost does not grow with a fixed price per company."""
        if not self._rows:
            return
        rows = pd.concat(list(self._rows.values()))
        unit = rows["unit"].astype(str).str.upper()
        after = rows["filed_d"] > rows["end_d"]
        no_start = rows["start_d"].isna()
        for fam in FAMILIES:
            in_family = rows["concept"].isin(fam.concepts) & (unit == ("USD/SHARES" if fam.per_share else "USD"))
            for cik, sel in rows[in_family].groupby("cik", sort=False):
                self._family_rows[(int(cik), fam.name)] = sel
            indexed = rows[in_family & after & (no_start if fam.instant else True)]
            # by |val|, stably (ties keep filing order); grouping keeps that order within each company
            indexed = indexed.iloc[np.argsort(indexed["val"].abs().to_numpy(dtype=float), kind="stable")]
            for cik, sel in indexed.groupby("cik", sort=False):
                self._values[(int(cik), fam.name)] = (sel["val"].abs().to_numpy(dtype=float), sel)

    @staticmethod
    def _fiscal_year_ends(g: pd.DataFrame) -> dict[int, dt.date]:
        """Fiscal year label -> fiscal year end, from the 10-K / 10-K/A accessions."""
        annual = g[g["form"].astype(str).str.startswith("10-K") & g["days"].between(*ANNUAL_DAYS)]
        if annual.empty:
            return {}
        per_accn = annual.groupby("accn").agg(end=("end_d", "max"), fy=("fy", "first"))
        ends = [e.date() for e in per_accn["end"]]
        # a year ending in the first week of January is the previous year's (52/53-week calendars)
        norm = [e.year - 1 if (e.month == 1 and e.day <= 7) else e.year for e in ends]
        offsets = [int(fy) - n for fy, n in zip(per_accn["fy"], norm) if pd.notna(fy)]
        offset = Counter(offsets).most_common(1)[0][0] if offsets else 0
        votes: dict[int, Counter[dt.date]] = {}
        for e, n in zip(ends, norm):
            votes.setdefault(n + offset, Counter())[e] += 1
        return {label: max(c.items(), key=lambda kv: (kv[1], kv[0]))[0] for label, c in votes.items()}

    def _resolve(self, target: str | int) -> int | None:
        if isinstance(target, (int, np.integer)):
            return int(target) if int(target) in self.names else None
        t = str(target).strip().lower()
        if t in self._keys:
            return self._keys[t]
        for cik, name in self.names.items():
            if name.lower() == t or _first_word(name) == _first_word(t):
                return cik
        return None

    def fiscal_year_end(self, cik: int, year: int) -> dt.date | None:
        """End of fiscal ``year`` of company ``cik`` (from its 10-Ks; extrapolated by 52 weeks
        from a neighbouring year when that year's 10-K is not in the table)."""
        fye = self._fye.get(cik, {})
        if year in fye:
            return fye[year]
        if year - 1 in fye:
            return fye[year - 1] + dt.timedelta(days=364)
        if year + 1 in fye:
            return fye[year + 1] - dt.timedelta(days=364)
        return None

    def fiscal_quarter_end(self, cik: int, year: int, quarter: int) -> dt.date | None:
        """End of fiscal quarter ``quarter`` of fiscal ``year`` (a reported quarterly period end)."""
        this, prev = self.fiscal_year_end(cik, year), self.fiscal_year_end(cik, year - 1)
        if this is None:
            return None
        prev = prev or this - dt.timedelta(days=364)
        best: tuple[int, dt.date] | None = None
        for e in self._quarter_ends.get(cik, []):
            if prev < e <= this + END_SLACK and max(1, min(4, round((e - prev).days / 91.3))) == quarter:
                days_off = abs((e - prev).days - 91.3 * quarter)
                if best is None or days_off < best[0]:
                    best = (int(days_off), e)
        return best[1] if best else None

    # -- reading a claim ------------------------------------------------------

    def companies(self, fact: str, instance: Mapping[str, Any] | None = None) -> list[int]:
        """CIKs of the companies ``fact`` names (key word, alias, or instance ticker)."""
        found: list[int] = []

        def hit(alias: str) -> bool:
            if alias.isupper() and len(alias) >= 2:
                return has_symbol(fact, alias)
            return has_word(fact, alias, ignore_case=True)

        aliases = dict(self._aliases)
        inst = instance or {}
        for t, n in zip(inst.get("tickers") or [], inst.get("names") or []):
            cik = self._keys.get(_first_word(str(n)))
            if cik is not None and t:
                aliases.setdefault(str(t), cik)
        # the keys are lower-case words: an ASCII key absent from an ASCII fact's lower case cannot hit
        low = fact.lower() if fact.isascii() else None
        for key, cik in self._keys.items():
            if low is not None and key.isascii() and key.lower() not in low:
                continue
            if hit(key) and cik not in found:
                found.append(cik)
        for alias, cik in aliases.items():
            if cik not in found and hit(alias):
                found.append(cik)
        return found

    def _candidates(self, cik: int, ref: PeriodRef) -> list[_Candidate]:
        out: list[_Candidate] = []
        if ref.end is not None and ref.month:
            # a period ending in a month: the company's reported period ends in that month (or,
            # on a 52/53-week calendar, in the first week of the next)
            known = sorted(set(self._fye.get(cik, {}).values())) if ref.kind == "annual" else self._quarter_ends.get(cik, [])
            lo, hi = ref.end.replace(day=1), ref.end + dt.timedelta(days=7)
            ends = [e for e in known if lo <= e <= hi] or [ref.end]
            return [_Candidate(ref.kind, e, f"{_ended(ref.kind, e)} ({ref.text})") for e in ends]
        if ref.end is not None:
            return [_Candidate(ref.kind, ref.end, _ended(ref.kind, ref.end))]
        if ref.kind == "annual":
            e = self.fiscal_year_end(cik, ref.year)
            if e:
                out.append(_Candidate("annual", e, f"fiscal {ref.year} (ends {e})"))
            if ref.fiscal is None:
                cal = self._overlap_end(cik, dt.date(ref.year, 1, 1), dt.date(ref.year, 12, 31), "annual")
                if cal and all(abs(c.end - cal) > END_SLACK for c in out):
                    out.append(_Candidate("annual", cal, f"the fiscal year ending {cal} (most of calendar {ref.year})"))
        else:
            q = ref.quarter or 1
            e = self.fiscal_quarter_end(cik, ref.year, q)
            if e:
                out.append(_Candidate("quarter", e, f"fiscal Q{q} {ref.year} (ends {e})"))
            if ref.fiscal is None:
                start = dt.date(ref.year, 3 * q - 2, 1)
                end = (pd.Timestamp(dt.date(ref.year, 3 * q, 1)) + pd.offsets.MonthEnd(0)).date()
                cal = self._overlap_end(cik, start, end, "quarter")
                if cal and all(abs(c.end - cal) > END_SLACK for c in out):
                    out.append(_Candidate("quarter", cal, f"the quarter ending {cal} (most of calendar Q{q} {ref.year})"))
        return out

    def _overlap_end(self, cik: int, start: dt.date, end: dt.date, kind: str) -> dt.date | None:
        """End of the company's reported period of ``kind`` that overlaps [start, end] most (>= half)."""
        if kind == "annual":
            ends = sorted(set(self._fye.get(cik, {}).values()))
            length = 364
        else:
            ends, length = self._quarter_ends.get(cik, []), 91
        best: tuple[int, dt.date] | None = None
        for e in ends:
            s = e - dt.timedelta(days=length)
            overlap = (min(e, end) - max(s, start)).days
            if overlap >= length // 2 and (best is None or overlap > best[0]):
                best = (overlap, e)
        return best[1] if best else None

    def _rows_for(self, cik: int, fam: Family, cand: _Candidate) -> pd.DataFrame:
        rows = self._rows.get(cik)
        if rows is None or rows.empty:
            return pd.DataFrame()
        sel = self._family_rows.get((cik, fam.name), rows.iloc[0:0])
        lo, hi = cand.end - END_SLACK, cand.end + END_SLACK
        sel = sel[(sel["end_date"] >= lo) & (sel["end_date"] <= hi)]
        if fam.instant:
            return sel[sel["start_d"].isna()]
        if cand.kind == "instant":
            return sel.iloc[0:0]  # a balance-sheet date names no period of a flow
        bounds = ANNUAL_DAYS if cand.kind == "annual" else QUARTER_DAYS
        return sel[sel["days"].between(*bounds)]

    @staticmethod
    def _matches(rows: pd.DataFrame, values: list[StatedValue]) -> pd.DataFrame:
        """Rows whose |val| matches a stated value: within half a unit of its last digit if any
        row does (a precise statement tells restated from original values), else within
        ``max(REL_TOL * |value|, half unit)``."""
        if rows.empty or not values:
            return rows.iloc[0:0]
        v = rows["val"].abs().to_numpy(dtype=float)
        tight = np.zeros(len(rows), dtype=bool)
        loose = np.zeros(len(rows), dtype=bool)
        for s in values:
            eps = 1e-9 * max(1.0, abs(s.value))
            tight |= np.abs(v - s.value) <= s.half_unit + eps
            loose |= np.abs(v - s.value) <= max(REL_TOL * abs(s.value), s.half_unit) + eps
        return rows[tight] if tight.any() else rows[loose]

    # -- the check ------------------------------------------------------------

    def check(self, fact: str, instance: dict[str, Any] | None = None) -> GroundedVerdict | None:
        """Date a claim about a company's reported figure, or None when it states none.

        Args:
            fact: claim text.
            instance: optional task context (``tickers``, ``names``) for company aliases.

        Returns:
            A :class:`GroundedVerdict` (``outcome=False``; category A3 for a claim about a
            report or filing, else A2) dated at the matching filing's ``filed`` date.
        """
        text = _EXPECTATION.sub(lambda m: " " * len(m[0]), fact)
        if _FORWARD.search(text):
            return None
        ciks = self.companies(fact, instance)
        if not ciks:
            return None
        families: list[Family] = []
        masked = text
        for fam in FAMILIES:
            hits = list(fam.pattern.finditer(masked))
            if hits:
                families.append(fam)
                for m in hits:
                    masked = masked[: m.start()] + " " * (m.end() - m.start()) + masked[m.end() :]
        values = parse_values(text)
        per_share = any(_A_SHARE.match(text, v.start + len(v.text)) for v in values if v.per_share)
        if per_share and FAMILIES[0] not in families and any(f.name == "net income" for f in families):
            families.insert(0, FAMILIES[0])  # "earned $2.10 a share", "a profit of $2.10 per share": EPS
        if not families:
            return None
        refs = find_fiscal_periods(text)
        cutoff = instance_cutoff(instance)
        if not refs and (cutoff is None or not values):
            return None
        dated: list[tuple[dt.date, str]] = []  # a date for every value matched
        unmatched: list[tuple[dt.date, str]] = []  # a named period's first report, when no value matched
        for cik in ciks:
            for fam in families:
                vals = [v for v in values if v.per_share == fam.per_share]
                # each value dates to the named period it matches; matching several, to the
                # earliest of their filings (a value that fits an earlier period is no evidence
                # of a later one)
                best: list[tuple[dt.date, str] | None] = [None] * len(vals)
                for ref in refs:
                    first_with_rows: tuple[dt.date, str] | None = None
                    for cand in self._candidates(cik, ref):
                        rows = self._rows_for(cik, fam, cand)
                        if rows.empty:
                            continue
                        hits = [(i, self._matches(rows, [v])) for i, v in enumerate(vals)]
                        hits = [(i, h) for i, h in hits if not h.empty]
                        if hits:
                            for i, h in hits:
                                d = self._describe(cik, fam, cand, h, [vals[i]], rows, True)
                                if best[i] is None or d[0] < best[i][0]:
                                    best[i] = d
                            first_with_rows = None
                            break
                        if first_with_rows is None:
                            first_with_rows = self._describe(cik, fam, cand, rows, vals, rows, False)
                    if first_with_rows is not None:
                        unmatched.append(first_with_rows)
                dated += [d for d in best if d is not None]
                if cutoff is None:
                    continue
                for v, done in zip(vals, (d is not None for d in best)):
                    exact = v.rel_precision <= VALUE_REL_PRECISION or (v.per_share and v.half_unit <= 0.005)
                    if done or v.hedged or not exact:
                        continue
                    ev = self._value_evidence(cik, fam, v, cutoff)
                    if ev is None:
                        continue
                    after, day, reason = ev
                    # a figure known before the cutoff supports a pre-cutoff date only when the claim
                    # names no period of its own (a named period's own filing dates it) nor a later
                    # date, and the table has the company's filings of the months after the cutoff
                    covered = (self._last_filed.get(cik, cutoff) - cutoff).days >= SUPPORT_DAYS_AFTER
                    if after or (covered and not refs and not names_date_after(text, cutoff)):
                        dated.append((day, reason))
        dated = dated or unmatched
        if not dated:
            return None
        day, reason = max(dated, key=lambda t: t[0])
        category = "A3" if _REPORT_WORDS.search(fact) else "A2"
        return GroundedVerdict(day, reason, outcome=False, category=category)

    def _value_evidence(self, cik: int, fam: Family, v: StatedValue, cutoff: dt.date) -> tuple[bool, dt.date, str] | None:
        """Date a stated value by the company's figures of ``fam`` that match it in any period.

        Each matching figure (concept, period) first appeared in its earliest filing with that
        value. Returns ``(True, first filing, reason)`` when every matching figure first appeared
        after ``cutoff`` (the value did not exist before it), ``(False, first filing, reason)``
        when every one appeared on or before it, and None when none matches or they fall on both
        sides (the value is then no evidence either way).
        """
        index = self._values.get((cik, fam.name))
        if index is None:
            return None
        vals, rows = index
        tol = v.half_unit + 1e-9 * max(1.0, v.value)
        lo = int(np.searchsorted(vals, v.value - tol, side="left"))
        hi = int(np.searchsorted(vals, v.value + tol, side="right"))
        if lo >= hi:
            return None
        hit = rows.iloc[lo:hi].sort_values(["filed_d", "accn"], kind="stable")
        first = hit.drop_duplicates(["concept", "start_d", "end_date"])
        before = first[first["filed_date"] <= cutoff]
        after = first[first["filed_date"] > cutoff]
        if not before.empty and not after.empty:
            return None
        r = first.iloc[0]
        who = self.names.get(cik, str(cik))
        period = f"the period ended {r['end_date']}" if pd.isna(r["start_d"]) else f"{r['start_d'].date()} to {r['end_date']}"
        where = f"{r['concept']} {_fmt_money(float(r['val']), fam.per_share)} for {period}, first reported in {r['form']} {r['accn']} filed {r['filed_date']}"
        if before.empty:
            return True, r["filed_date"], (
                f"EDGAR: {who} {fam.name}: stated {v.text} matches only figures first reported after the cutoff "
                f"({len(after)}): {where}"
            )
        return False, r["filed_date"], (
            f"EDGAR: {who} {fam.name}: stated {v.text} matches only figures reported before the cutoff "
            f"({len(before)}): {where}"
        )

    def _describe(
        self,
        cik: int,
        fam: Family,
        cand: _Candidate,
        hit: pd.DataFrame,
        vals: list[StatedValue],
        rows: pd.DataFrame,
        matched: bool,
    ) -> tuple[dt.date, str]:
        first = hit.iloc[0]
        who = self.names.get(cik, str(cik))
        filing = f"{first['form']} {first['accn']} filed {first['filed_date']}"
        reported = _fmt_money(float(first["val"]), fam.per_share)
        if matched:
            stated = ", ".join(v.text for v in vals)
            reason = (
                f"EDGAR: {who} {fam.name} for {cand.label}: stated {stated} matches {first['concept']} "
                f"{reported}, first reported in {filing}"
            )
            if bool(first.get("derived", False)):
                reason += " (derived: the 10-K's fiscal year minus the nine months to date)"
            if bool(first.get("value_changed", False)) and isinstance(first.get("restates"), str):
                orig = rows[
                    (rows["accn"] == first["restates"])
                    & (rows["concept"] == first["concept"])
                    & (rows["end_date"] == first["end_date"])
                ]
                was = f" (was {_fmt_money(float(orig.iloc[0]['val']), fam.per_share)} in {orig.iloc[0]['form']} filed {orig.iloc[0]['filed_date']})" if not orig.empty else ""
                reason += f"; a restated value replacing {first['restates']}{was}"
        else:
            why = (
                f"stated {', '.join(v.text for v in vals)} does not match the reported {reported}"
                if vals
                else "no figure stated to compare"
            )
            reason = (
                f"EDGAR: {who} {fam.name} for {cand.label} first reported in {filing}; {why}"
            )
        return first["filed_date"], reason


def load_edgar_grounding(path: str, aliases: Mapping[str, str | int] | None = None) -> EdgarGrounding:
    """Build :class:`EdgarGrounding` from the facts parquet (only the columns it needs)."""
    import pyarrow.parquet as pq

    cols = ["cik", "entity_name", "concept", "unit", "val", "start", "end", "fy", "form", "filed", "accn",
            "value_changed", "restates"]
    if "derived" in pq.read_schema(path).names:  # tables built before derived fourth quarters lack it
        cols.append("derived")
    return EdgarGrounding(pd.read_parquet(path, columns=cols), aliases)

