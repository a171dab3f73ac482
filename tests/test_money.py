"""The one money reader (anachron.money) and the callers that use it."""

from __future__ import annotations

import math

import numpy as np
import pytest

from anachron.money import MoneyError, parse_money, precision, read_number, scan_money
from anachron.sources.prosports.notes import parse_money as prosports_money, parse_note
from anachron.sources.prosports.skips import SKIP_AMBIGUOUS_AMOUNT
from anachron.sources.spotrac.pages import _money as spotrac_money
from anachron.tasks.salary.grounding import money_amounts
from anachron.tasks.salary.task import parse_amount
from anachron.verify.layers.figures import parse_prices, parse_values


@pytest.mark.parametrize(
    "text, value, currency, unit",
    [
        ("$12.5M", 12.5e6, "USD", "m"),
        ("12,500,000", 12.5e6, None, None),
        ("$12.5 million", 12.5e6, "USD", "million"),
        ("12.5 mil", 12.5e6, None, "mil"),
        ("$3.2bn", 3.2e9, "USD", "bn"),
        ("€4 million", 4e6, "EUR", "million"),
        ("1.2 billion dollars", 1.2e9, "USD", "billion"),
        ("$950K", 950e3, "USD", "k"),
        ("USD 1.2 billion", 1.2e9, "USD", "billion"),
        ("US$ 25.5 mln", 25.5e6, "USD", "mln"),
        ("£2.5bn", 2.5e9, "GBP", "bn"),
        ("  $1,020.50 ", 1020.5, "USD", None),
        ("-$3M", -3e6, "USD", "m"),
    ],
)
def test_parse_money_reads_signs_letters_and_words(text, value, currency, unit):
    m = parse_money(text)
    assert m.value == pytest.approx(value)
    assert (m.currency, m.unit) == (currency, unit)


@pytest.mark.parametrize(
    "text, reason",
    [
        ("1,234.567,89", "after the decimal point"),
        ("12.500.000", "several '.'"),
        ("12,5", "decimal comma"),
        ("12,50,000", "groups of three"),
        ("$1.2m/$1.5m", "several amounts or a range"),
        ("$70-72M", "several amounts or a range"),
        ("1 to 2 million", "several amounts or a range"),
        ("$4 million euros", "two currencies"),
        ("about $4M", "text other than one amount"),
        ("$4M plus incentives", "text other than one amount"),
        ("", "blank"),
    ],
)
def test_parse_money_rejects_ambiguous_strings_with_a_reason(text, reason):
    with pytest.raises(MoneyError) as exc:
        parse_money(text)
    assert reason in exc.value.reason
    assert isinstance(exc.value, ValueError)


def test_parse_money_numbers_and_bad_types():
    assert parse_money(12500000).value == 12.5e6
    assert parse_money(np.int64(7)).value == 7.0
    assert parse_money(2.5).currency is None
    for bad in (None, True, float("nan"), math.inf, [1], {"a": 1}):
        with pytest.raises(MoneyError):
            parse_money(bad)


def test_read_number_and_precision():
    assert read_number("12,500,000") == 12.5e6
    assert read_number("1,234.5") == 1234.5
    with pytest.raises(MoneyError):
        read_number("1.234.567")
    assert precision("260.2", 1e9) == pytest.approx((0.05e9, 0.05e9))
    assert precision("1800") == (0.5, 50.0)
    assert precision("440", 1e6) == (0.5e6, 0.5e6)


def test_scan_money_marks_currency_and_unit_and_skips_ambiguous_numbers():
    got = scan_money("Ace paid US$4.5bn, then €3 million and 7 billion dollars in 2019; A320 at 12.500.000")
    assert [(a.value, a.currency, a.unit) for a in got] == [
        (4.5e9, "USD", "bn"), (3e6, "EUR", "million"), (7e9, "USD", "billion"), (2019.0, None, None)
    ]
    assert got[0].currency_before and got[2].currency_after
    assert "US$4.5bn" == "Ace paid US$4.5bn"[got[0].start : got[0].end]
    # "pounds" alone is a weight, "pounds sterling" a currency
    assert scan_money("28 million pounds of ore")[0].currency is None
    assert scan_money("28 million pounds sterling")[0].currency == "GBP"


def test_salary_prediction_uses_the_parser():
    assert parse_amount("$25.5M/yr") == 25.5e6
    assert parse_amount("25.5 mln per year") == 25.5e6
    for bad in ("€25 million", "$1.2m/$1.5m", "12.500.000", "-$3M", "about $4M"):
        with pytest.raises(ValueError):
            parse_amount(bad)


def test_verifier_figures_skip_other_currencies_and_know_every_unit():
    vals = parse_values("Rivet raised C$100 million and £2bn, then $16 bln and 7 billion dollars")
    assert [v.value for v in vals] == [16e9, 7e9]
    assert parse_prices("shares hit $16 bln, then $27.34 and A$5") [0].value == 27.34
    assert len(parse_prices("shares hit $16 bln, then $27.34 and A$5")) == 1


def test_salary_claim_amounts():
    (a,) = money_amounts("a deal worth $1 trillion")
    assert a.value == 1e12
    assert money_amounts("a 3-year, €30 million deal") == []


def test_sources_read_cells_and_notes_with_the_parser():
    assert spotrac_money("$8,200,000") == 8.2e6
    assert spotrac_money("$4.5M") == 4.5e6
    assert spotrac_money("-") is None
    assert spotrac_money("$4,5M") is None  # a decimal comma: not guessed
    assert prosports_money("$70-72M") == (70e6, True)
    assert prosports_money("#36M") == (36e6, False)
    assert prosports_money("$22,5M") is None
    note = parse_note("re-signed unrestricted free agent to a 3-year, $22,5M contract")
    assert note.kind == SKIP_AMBIGUOUS_AMOUNT and note.total_value is None
