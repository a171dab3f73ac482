"""Whole-word and ticker matching (:func:`anachron.names.has_word`, :func:`anachron.names.has_symbol`):
the same answers as the regular expressions they stand for, on ASCII and non-ASCII text."""

from __future__ import annotations

import itertools
import re

from anachron.names import company_mention, has_symbol, has_word

TEXTS = [
    "Apple reported revenue of $64B.",
    "APPLE and apple-pie; pineapple",
    "Shares of Nestlé rose; NESTLÉ fell; nestlé",
    "The Kelvin sign \u212a and long s \u017f: \u212aELLOGG, \u017fOLVAY, Kellogg",
    "XOM (NYSE: XOM) beat XOMA; T and AT&T; BRK.B",
    "Exxon's quarter, ExxonMobil, exxon",
    "",
    "İstanbul Holding, istanbul",
]
WORDS = ["Apple", "apple", "APPLE", "Nestlé", "nestlé", "Kellogg", "KELLOGG", "Solvay", "XOM", "T", "AT", "B",
         "Exxon", "exxon", "ExxonMobil", "İstanbul", "istanbul", "pie", "quarter", "s", "k", "BRK.B"]


def test_has_word_answers_as_the_word_pattern():
    """Case-sensitive and case-insensitive, including the case folds only ``re.I`` knows (Kelvin
    sign for k, long s for s, dotted capital I), which the ASCII shortcut must not decide."""
    hits = 0
    for text, word, ignore_case in itertools.product(TEXTS, WORDS, (False, True)):
        want = re.search(rf"\b{re.escape(word)}\b", text, re.I if ignore_case else 0) is not None
        assert has_word(text, word, ignore_case=ignore_case) == want, (text, word, ignore_case)
        hits += want
    assert hits > 20
    # the folds that are not ASCII lower-casing really occur here
    assert has_word(TEXTS[3], "kellogg", ignore_case=True) and has_word(TEXTS[3], "solvay", ignore_case=True)


def test_has_symbol_answers_as_the_symbol_pattern():
    for text, symbol, before in itertools.product(TEXTS, WORDS, ("[A-Za-z0-9]", "[A-Za-z0-9.]")):
        want = re.search(rf"(?<!{before}){re.escape(symbol)}(?![A-Za-z0-9])", text) is not None
        assert has_symbol(text, symbol, before) == want, (text, symbol, before)


def test_company_mention_among_many_companies():
    """More companies than ``re`` caches (512 patterns) tried on one claim: the three it names
    are found by name, symbol and first word, no other."""
    n = 1000
    names = {f"Q{i:03d}": f"Zentor{i:03d} Industries Inc." for i in range(n)}
    text = "Zentor123 Industries beat estimates while Q456 fell and Zentor789 Holdings rose"
    found = {t: company_mention(text, t, [name]) for t, name in names.items()}
    assert {t: s for t, s in found.items() if s} == {"Q123": 1, "Q456": 2, "Q789": 1}
