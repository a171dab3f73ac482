"""Amounts of money: the one place that reads "$12.5M", "12,500,000", "€4 million", "1.2 billion dollars".

Two readings share one vocabulary (:data:`SCALES`, :data:`CURRENCIES`) and one number reader
(:func:`read_number`):

* :func:`parse_money`: a whole string that is one amount (a model's predicted AAV, a cell of
  a contract table). Anything else raises :class:`MoneyError` with the reason: words around
  the amount, two amounts or a range ("$1.2m/$1.5m", "$70-72M"), separators whose meaning is
  not clear, two different currencies.
* :func:`scan_money`: every number of a free text (a claim, a transaction note) with the
  currency and unit written around it (:class:`Money`). Which of them count as money is the
  caller's rule (the verifier's figures need a currency or a unit word; a bare "2019" is a
  year); a number whose separators are not clear is skipped, never read.

Conventions (documented choices, not guesses per string):

* Numbers are written the English way: "," groups thousands in threes ("12,500,000"), "." is
  the decimal point, at most once. "12.500.000" (European thousands), "12,5" (a decimal
  comma), "1,234.567,89" and "12,50,000" are rejected as ambiguous.
* A unit letter or word multiplies: k / thousand 1e3; m, mm, mn, mln, mil, million 1e6;
  b, bn, bil, bln, billion 1e9; t, tn, trillion 1e12. "M" is always a million (as in sports
  and financial news); the accounting use of "M" for a thousand ("$12.5M" = $12,500) is
  not recognised.
* A currency is a sign or code before the number ("$", "US$", "USD", "€", "EUR", "£",
  "GBP", "C$", "A$") or a word after it ("dollars", "US dollars", "USD", "euros", "pounds sterling").
  A bare "$" is USD; "pounds" alone is not a currency (a weight: "28 million pounds of
  uranium"), "pounds sterling" is. An amount written without any currency has ``currency`` None; callers
  decide whether to assume one.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

#: Unit words and letters (lower case) -> multiplier.
SCALES: dict[str, float] = {
    "trillion": 1e12, "tn": 1e12, "t": 1e12,
    "billion": 1e9, "bn": 1e9, "bln": 1e9, "bil": 1e9, "b": 1e9,
    "million": 1e6, "mil": 1e6, "mln": 1e6, "mn": 1e6, "mm": 1e6, "m": 1e6,
    "thousand": 1e3, "k": 1e3,
}  # fmt: skip
#: Units spelled out or abbreviated as words (not single letters).
UNIT_WORDS = frozenset({"trillion", "billion", "million", "thousand"})
#: Currency signs and codes written before a number -> ISO 4217 code.
CURRENCY_PREFIXES: dict[str, str] = {
    "us$": "USD", "usd": "USD", "$": "USD", "c$": "CAD", "cad": "CAD", "a$": "AUD", "aud": "AUD",
    "€": "EUR", "eur": "EUR", "£": "GBP", "gbp": "GBP",
}  # fmt: skip
#: Currency words and codes written after a number -> ISO 4217 code.
CURRENCY_SUFFIXES: dict[str, str] = {
    "dollars": "USD", "dollar": "USD", "us dollars": "USD", "usd": "USD", "euros": "EUR", "euro": "EUR",
    "eur": "EUR", "pounds sterling": "GBP", "gbp": "GBP", "cad": "CAD", "aud": "AUD",
}  # fmt: skip
#: Every ISO code a reading can return.
CURRENCIES = frozenset(CURRENCY_PREFIXES.values()) | frozenset(CURRENCY_SUFFIXES.values())

_UNIT_ALT = "|".join(sorted(SCALES, key=len, reverse=True))
_PREFIX_RE = r"(?P<cur>\bUS\s?\$|\bUSD\s?|\bC\$|\bA\$|\bCAD\s?|\bAUD\s?|\bEUR\s?|\bGBP\s?|\$|€|£)"
_SUFFIX_RE = r"(?P<after>\s*(?:US\s+dollars?|dollars?|euros?|pounds\s+sterling|USD|EUR|GBP|CAD|AUD)\b)"
#: A run of digits with "," and "." between them, read and checked by :func:`read_number`.
_DIGITS = r"\d+(?:[.,]\d+)*"
_SCAN = re.compile(
    rf"(?:{_PREFIX_RE}\s?|(?<![\w.,]))(?P<num>{_DIGITS})"
    rf"(?:\s*(?P<unit>{_UNIT_ALT})\b(?!\.\d))?{_SUFFIX_RE}?",
    re.I,
)
_WHOLE = re.compile(
    rf"\s*(?P<sign>[-−])?\s*(?:{_PREFIX_RE}\s*)?(?P<num>{_DIGITS})"
    rf"(?:\s*(?P<unit>{_UNIT_ALT})\b\.?)?{_SUFFIX_RE}?\s*",
    re.I,
)
_THOUSANDS = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?")
_PLAIN = re.compile(r"\d+(?:\.\d+)?")
_SEVERAL = re.compile(r"\d[^\d]*(?:/|-|–|—|\bto\b|\bor\b|\band\b)[^\d]*\d", re.I)


class MoneyError(ValueError):
    """A string that is not exactly one amount of money; ``reason`` says why."""

    def __init__(self, text: Any, reason: str):
        super().__init__(f"{text!r} is not an amount of money: {reason}")
        self.text = text
        self.reason = reason


@dataclass(frozen=True)
class Money:
    """One amount of money as written.

    Attributes:
        value: the amount in units of ``currency`` (dollars, not millions): "$12.5M" -> 12.5e6.
        currency: ISO 4217 code ("USD", "EUR", ...) or None when none is written.
        unit: the unit word or letter as written, lower case ("m", "million", "bn"), or None.
        digits: the number as written, without thousands separators ("12.5", "12500000").
        start, end: offsets of the whole amount (currency and unit included) in the text.
        currency_before: the currency was written before the number ("$", "USD ", "€").
        currency_after: the currency was written after it ("dollars", "USD").
        num_start, num_end: offsets of the number alone.
        unit_end: offset just after the unit (``num_end`` without one), before any currency word.
    """

    value: float
    currency: str | None
    unit: str | None
    digits: str
    start: int = 0
    end: int = 0
    currency_before: bool = False
    currency_after: bool = False
    num_start: int = 0
    num_end: int = 0
    unit_end: int = 0

    @property
    def scale(self) -> float:
        """The unit's multiplier (1.0 without a unit)."""
        return SCALES.get((self.unit or "").rstrip("."), 1.0)

    @property
    def half_unit(self) -> float:
        """Half a unit of the last written digit, in currency units ("$25.5M" -> 50,000;
        "$440 million" -> 500,000; "$27" -> 0.5)."""
        return precision(self.digits, self.scale)[0]

    @property
    def round_half_unit(self) -> float:
        """Like :attr:`half_unit`, but the trailing zeros of an integer without a unit count as
        rounding ("$1,800" -> 50)."""
        return precision(self.digits, self.scale)[1]


def read_number(text: str) -> float:
    """The value of a number written with English separators: "12,500,000" -> 12500000.0,
    "1,234.5" -> 1234.5, "12.5" -> 12.5.

    Raises :class:`MoneyError` for separators whose meaning is not clear: several "."
    ("12.500.000"), a "," after the "." ("1,234.567,89"), a "," not followed by exactly
    three digits ("12,5", "12,50,000"), or no digits at all.
    """
    s = str(text).strip()
    if _PLAIN.fullmatch(s):
        return float(s)
    if _THOUSANDS.fullmatch(s):
        return float(s.replace(",", ""))
    if not re.fullmatch(_DIGITS, s):
        return _fail(text, "no number")
    if s.count(".") > 1:
        return _fail(text, "several '.' in one number (European thousands separators?)")
    if "." in s and "," in s.split(".", 1)[1]:
        return _fail(text, "',' after the decimal point (mixed separator conventions)")
    return _fail(text, "',' not followed by groups of three digits (a decimal comma?)")


def _fail(text: Any, reason: str) -> float:
    raise MoneyError(text, reason)


def precision(digits: str, scale: float = 1.0) -> tuple[float, float]:
    """``(half_unit, round_half_unit)`` of a number written as ``digits`` (no separators) with
    a unit of ``scale``: half a unit of its last written digit ("12.34" -> 0.005; with a unit,
    a whole number is written to the unit: "440" million -> 0.5e6), and the same counting the
    trailing zeros of an integer without a unit as rounding ("1800" -> 50)."""
    if "." in digits:
        half = 0.5 * 10 ** (-len(digits.split(".")[1])) * scale
        return half, half
    if scale != 1.0:
        return 0.5 * scale, 0.5 * scale
    zeros = len(digits) - len(digits.rstrip("0")) if digits.strip("0") else 0
    return 0.5, 0.5 * 10**zeros


def _currency(before: str | None, after: str | None, text: Any) -> str | None:
    b = CURRENCY_PREFIXES[re.sub(r"\s+", "", before).lower()] if before else None
    a = CURRENCY_SUFFIXES[re.sub(r"\s+", " ", after.strip()).lower()] if after else None
    if b and a and a != b:
        raise MoneyError(text, f"two currencies ({before.strip()} and {after.strip()})")
    return b or a


def parse_money(value: Any) -> Money:
    """The amount ``value`` states, as a whole: "$12.5M", "12,500,000", "$12.5 million",
    "12.5 mil", "$3.2bn", "€4 million", "1.2 billion dollars", "$950K", "USD 1.2 billion",
    "-$3M"; an int or float is an amount without currency.

    Raises :class:`MoneyError` (a ``ValueError``) with ``reason`` for: None, booleans, NaN or
    infinite numbers and other types; a blank string; several amounts or a range ("$1.2m/$1.5m",
    "$70-72M", "1 to 2 million"); ambiguous separators (:func:`read_number`); two different
    currencies ("$4 million euros"); any other text ("about $4M", "$4M plus bonuses").
    """
    if isinstance(value, bool) or value is None:
        raise MoneyError(value, "not a number or a string")
    if isinstance(value, (int, float)) or type(value).__module__ == "numpy":
        try:
            v = float(value)
        except (TypeError, ValueError):
            raise MoneyError(value, f"not a number or a string ({type(value).__name__})") from None
        if not math.isfinite(v):
            raise MoneyError(value, "not a finite number")
        return Money(v, None, None, repr(v))
    if not isinstance(value, str):
        raise MoneyError(value, f"not a number or a string ({type(value).__name__})")
    if not value.strip():
        raise MoneyError(value, "blank")
    m = _WHOLE.fullmatch(value)
    if m is None:
        if len(re.findall(r"\d+(?:[.,]\d+)*", value)) > 1 and _SEVERAL.search(value):
            raise MoneyError(value, "several amounts or a range")
        raise MoneyError(value, "text other than one amount with its currency and unit")
    number = read_number(m["num"])
    unit = (m["unit"] or "").lower() or None
    cur = _currency(m["cur"], m["after"], value)
    v = number * SCALES.get(unit or "", 1.0) * (-1 if m["sign"] else 1)
    start = m.start("sign") if m["sign"] else m.start("cur") if m["cur"] else m.start("num")
    return Money(v, cur, unit, m["num"].replace(",", ""), start, len(value.rstrip()), bool(m["cur"]), bool(m["after"]),
                 m.start("num"), m.end("num"), m.end("unit") if unit else m.end("num"))


def scan_money(text: str) -> list[Money]:
    """Every number of ``text``, in order, with the currency and unit written around it
    (:class:`Money`; ``value`` scaled by the unit). A number right after a letter, digit, "."
    or "," is part of another token and skipped ("A320", "v2.1"); so is one whose separators
    are ambiguous ("12.500.000"). A unit needs a word boundary after it ("5 mice" has none);
    callers choose which numbers are amounts (a currency written, a unit word ...)."""
    out = []
    for m in _SCAN.finditer(text):
        try:
            number = read_number(m["num"])
            cur = _currency(m["cur"], m["after"], text)
        except MoneyError:
            continue
        unit = (m["unit"] or "").lower() or None
        end = m.end()
        out.append(Money(
            number * SCALES.get(unit or "", 1.0), cur, unit, m["num"].replace(",", ""),
            m.start("cur") if m["cur"] else m.start("num"), end, bool(m["cur"]), bool(m["after"]),
            m.start("num"), m.end("num"), m.end("unit") if unit else m.end("num"),
        ))
    return out
