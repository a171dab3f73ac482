"""Text features of a claim that the category rules test.

The generic categoriser (:mod:`anachron.verify.categorize`), each task's outcome rules
(``anachron.tasks.<name>.claims``) and the extractors (:mod:`anachron.verify.extract`) read a
claim through these: a stated quantity, time references and where they fall relative to the
instance's cutoff, content words. The word lists they share (hedged wording, month names, stop
words) are in :mod:`anachron.words`. No task is looked up here, so task packages import this
module freely.
"""

from __future__ import annotations

import datetime as dt
import functools
import re
from typing import Any, Mapping

from anachron.dates import to_date
from anachron.verify.dates import Period, find_periods
from anachron.words import MONTH_NAMES, MONTH_NUMBERS

_RELATIVE_TIME = re.compile(
    r"\b(yesterday|today|tomorrow|recently|currently|this (?:week|month|quarter|year|season|term)|"
    r"last (?:week|month|quarter|year|season|term)|next (?:week|month|quarter|year|season|term)|"
    r"year-to-date|ytd|year-end|year end)\b"
    r"|\b(" + "|".join(m for m in MONTH_NAMES if m != "May") + r")\b"
    r"|\bMay(?=\s+\d)",
    re.I,
)
# numerals that name things rather than measure them: masked before looking for a number
_NAME_NUMERALS = re.compile(
    r"S&P\s?500|S&P\s?400|S&P\s?600|Fortune\s?500|Russell\s?[0-9]{4}|Nasdaq[- ]100|Dow\s?30|COVID-19|SARS-CoV-2|"
    r"\b10-K(?:/A)?\b|\b10-Q\b|\b8-K\b|\bS-1\b|\b401\(k\)|\bForm\s+[0-9A-Z-]+|"
    r"§+\s?[0-9][0-9a-z().-]*|\b[0-9]+\s+U\.?S\.?C?\.?(?:\s+§*\s?[0-9]+)?|\bU\.?S\.?C\.?\s+§*\s?[0-9]+|"
    r"\b(?:Section|Sec\.|Rule|Article|Title|Amendment|Chapter|Docket|No\.)\s+[0-9][0-9a-z().-]*|"
    r"\b[0-9]+(?:st|nd|rd|th)\s+(?:Circuit|Amendment|Congress|District|Street|Avenue|Precinct)\b|"
    r"\bCase\s+No\.?\s*[0-9-]+|\b[0-9]{1,2}-[0-9]{3,5}\b",
    re.I,
)
_NUMBER = re.compile(
    r"[0-9]|\b(million|billion|trillion|percent|percentage points?|basis points?|bps)\b", re.I
)


def norm_text(text: str) -> str:
    """Lower-cased, whitespace-collapsed text without trailing punctuation (the dedup key)."""
    return " ".join(text.lower().split()).strip(" .;:,!?")


def mask_name_numerals(text: str) -> str:
    """``text`` with its name-like numerals ("S&P 500", "10-K", "COVID-19", "§ 1983", "9th
    Circuit", docket numbers) blanked out."""
    return _NAME_NUMERALS.sub(" ", text)


def without_dates(text: str) -> str:
    """``text`` with every time reference :func:`~anachron.verify.dates.find_periods` finds blanked out."""
    for p in find_periods(text):
        text = text.replace(p.text, " ")
    return text


def _masked(text: str) -> str:
    """``text`` with its time references and name-like numerals removed."""
    return without_dates(mask_name_numerals(text))


def has_number(text: str) -> bool:
    """True if ``text`` states a quantity: a digit, or million/billion/percent/basis points,
    outside its dates and outside numerals that name things (S&P 500, 10-K, § 1983, 9th Circuit)."""
    return bool(_NUMBER.search(_masked(text)))


def has_time_ref(text: str) -> bool:
    """True if ``text`` refers to a time: a date, month, quarter, year, or a relative time word."""
    return bool(find_periods(text)) or bool(_RELATIVE_TIME.search(text))


def context_cutoff(context: Mapping[str, Any]) -> dt.date | None:
    """The ``cutoff_date`` of a categorisation context as a date (None when missing or not a date)."""
    return to_date(context.get("cutoff_date"))


def all_before(text: str, cutoff: dt.date | None) -> bool:
    """True if ``text`` has dated periods and every one ends on or before the cutoff (history)."""
    if cutoff is None:
        return False
    periods = find_periods(text)
    return bool(periods) and all(p.end <= cutoff for p in periods)


def periods_after(text: str, cutoff: dt.date | None, until: dt.date | None = None) -> list[Period]:
    """Periods of ``text`` that start after the cutoff (and on or before ``until`` if given)."""
    if cutoff is None:
        return []
    return [p for p in find_periods(text) if p.start > cutoff and (until is None or p.start <= until)]


def as_list(v: Any) -> list[str]:
    """A context value as a list of non-empty strings (None -> [], a string -> [it])."""
    if v is None:
        return []
    if isinstance(v, (list, tuple)):
        return [str(x) for x in v if x]
    return [str(v)] if v else []


#: Irregular English verb forms -> the base form (before :func:`stem` strips suffixes).
IRREGULAR_FORMS = {
    "won": "win", "winning": "win", "wins": "win", "lost": "lose", "losing": "lose", "rose": "rise", "risen": "rise",
    "fell": "fall", "fallen": "fall", "grew": "grow", "grown": "grow", "became": "become", "held": "hold",
    "left": "leave", "took": "take", "taken": "take", "came": "come", "went": "go", "gone": "go", "saw": "see",
    "seen": "see", "made": "make", "got": "get", "ran": "run", "sold": "sell", "led": "lead", "met": "meet",
    "beat": "beat", "beaten": "beat", "hit": "hit", "kept": "keep", "built": "build", "began": "begin",
    "begun": "begin", "chose": "choose", "chosen": "choose", "spent": "spend", "paid": "pay", "reached": "reach",
    "struck": "strike", "bought": "buy", "brought": "bring", "sought": "seek", "said": "say", "told": "tell",
    "wrote": "write", "written": "write", "gave": "give", "given": "give", "drove": "drive", "driven": "drive",
    "spoke": "speak", "spoken": "speak", "froze": "freeze", "frozen": "freeze", "bid": "bid", "dealt": "deal",
    "heard": "hear", "found": "find", "thought": "think", "felt": "feel", "stood": "stand", "understood": "understand",
    "cutting": "cut", "cuts": "cut", "shown": "show", "showed": "show", "signed": "sign", "hiked": "hike",
    "hikes": "hike", "raised": "raise", "raises": "raise",
}
#: Suffixes :func:`stem` strips by default (one, the first that fits).
STEM_SUFFIXES = ("ing", "ed", "es", "s", "e")


@functools.lru_cache(maxsize=200_000)
def stem(word: str, suffixes: tuple[str, ...] = STEM_SUFFIXES) -> str:
    """A crude stem of ``word`` for matching word forms: lower case, possessive dropped, irregular
    verbs to their base form (:data:`IRREGULAR_FORMS`), then one of the suffixes -ing, -ed, -es,
    -s, -e (or the first of ``suffixes`` that fits) stripped when at least three letters remain ("signed", "signs", "signing" -> "sign";
    "struck", "strikes" -> "strik"). Cached."""
    w = word.lower().replace("’", "'")
    if w.endswith("'s"):
        w = w[:-2]
    if w in IRREGULAR_FORMS:
        w = IRREGULAR_FORMS[w]
    for suf in suffixes:
        if len(w) > len(suf) + 2 and w.endswith(suf):
            return w[: -len(suf)]
    return w


#: A time reference that looks back from the time of writing ("over the past year", "year to date",
#: "in recent weeks"): in a claim written at the cutoff, a period before it.
LOOKING_BACK = re.compile(
    r"\b(?:past|last|previous|prior|preceding|trailing)\s+(?:\w+[- ])?(?:years?|months?|quarters?|weeks?|sessions?|days?)\b"
    r"|\b(?:year[- ]to[- ]date|ytd|so\s+far\s+(?:this|in\s+the)\s+year|this\s+year|in\s+recent\s+(?:weeks|months|years))\b"
    r"|\bsince\s+the\s+(?:start|beginning)\s+of\s+the\s+year\b",
    re.I,
)
_MONTH_WORD = re.compile(
    r"\b(Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|(?-i:May)|June?|July?|Aug(?:ust)?|Sept?(?:ember)?|"
    r"Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\b\.?",
    re.I,
)


def yearless_months(text: str, periods: list[Period] | None = None) -> list[int]:
    """Month numbers (1-12) that ``text`` names without a year ("in October", "Aug. 19", "from
    early December to June"), in order; months inside a dated reference (:func:`find_periods`:
    "October 2025", "Aug. 19, 2024") and upper-case words ("NOV", a ticker) are left out.
    The caller decides the year (from the instance's cutoff or window). ``periods``: the
    text's :func:`find_periods`, when already known."""
    rest = text
    for p in find_periods(text) if periods is None else periods:
        rest = rest.replace(p.text, " ")
    return [MONTH_NUMBERS[m[1][:3].lower()] for m in _MONTH_WORD.finditer(rest) if not m[1].isupper()]
