"""The shared word lists of anachron.words: the month lists agree with each other and with the
standard library's English names; the three hedge rules stay three different rules."""

from __future__ import annotations

import calendar

from anachron.words import (
    HEDGE_APPROX_PHRASES,
    HEDGE_APPROX_WORDS,
    HEDGE_FORWARD_LOOKING,
    HEDGE_SPECULATIVE,
    MONTH_ALTERNATION,
    MONTH_NAMES,
    MONTH_NUMBERS,
    MONTH_WORDS,
    PERFECT_AUXILIARY_AT_END,
    PERFECT_NEGATED,
    PRESENT_PERFECT,
)


def test_month_lists_agree():
    assert MONTH_NAMES == tuple(calendar.month_name)[1:]
    assert list(MONTH_NUMBERS) == list(MONTH_WORDS) and len(set(MONTH_WORDS)) == len(MONTH_WORDS) == 24
    stdlib = {m.lower(): i for i, m in enumerate(calendar.month_name) if m}
    stdlib.update({m.lower(): i for i, m in enumerate(calendar.month_abbr) if m})
    assert MONTH_NUMBERS == {**stdlib, "sept": 9}
    assert MONTH_ALTERNATION.split("|")[:2] == ["september", "february"] and MONTH_ALTERNATION.endswith("|nov|dec")


def test_hedge_rules_differ():
    # a speculative claim, a forward-looking question, an approximate figure
    assert HEDGE_SPECULATIVE.search("Revenue is expected to rise") and HEDGE_FORWARD_LOOKING.search("Revenue is expected to rise")
    assert HEDGE_FORWARD_LOOKING.search("whether the bill passes") and not HEDGE_SPECULATIVE.search("whether the bill passes")
    assert HEDGE_SPECULATIVE.search("Will Smith will win") and not HEDGE_FORWARD_LOOKING.search("Will Smith won")
    assert "about" in HEDGE_APPROX_WORDS and "more than" in HEDGE_APPROX_PHRASES and not HEDGE_SPECULATIVE.search("about $40")


def test_perfect_rules_differ():
    assert PRESENT_PERFECT.search("the stock has outperformed") and not PERFECT_NEGATED.search("the stock has outperformed")
    assert PERFECT_NEGATED.search("she has never won") and not PRESENT_PERFECT.search("she has never won")
    assert PERFECT_AUXILIARY_AT_END.search("the Court has long ") and not PERFECT_AUXILIARY_AT_END.search("has long held that")
