"""The salary cutoff rule: the day before the contract could first be known."""

import datetime as dt

import pytest

from anachron.tasks.salary.windows import (
    NEGOTIATING_WINDOWS,
    RULE_EARLY,
    RULE_LATE_ANNOUNCED,
    RULE_LATE_SIGNED,
    RULE_WINDOW,
    WindowError,
    salary_cutoff,
    window_table,
)

D = dt.date
W = window_table()


def test_a_signing_inside_the_window_takes_the_eve_of_its_opening():
    # 2019: agreed from June 30, signed from July 6
    c = salary_cutoff("NBA", D(2019, 7, 7), "signing", W)
    assert (c.day, c.rule, c.window.opens) == (D(2019, 6, 29), RULE_WINDOW, D(2019, 6, 30))
    # 2020's window opened on Nov 20; a signing in January 2021 belongs to it
    c = salary_cutoff("NBA", D(2021, 1, 5), "signing", W)
    assert (c.day, c.window.year) == (D(2020, 11, 19), 2020)
    # an announcement on the window's first evening
    assert salary_cutoff("nba", D(2022, 6, 30), "announcement", W).day == D(2022, 6, 29)


def test_a_signing_far_outside_the_window_keeps_its_own_date():
    # a February signing is an in-season deal: its date less the report lead
    c = salary_cutoff("NBA", D(2020, 2, 20), "signing", W)
    assert (c.day, c.rule, c.window.year) == (D(2020, 2, 12), RULE_LATE_SIGNED, 2019)
    c = salary_cutoff("NBA", D(2023, 10, 15), "announcement", W)
    assert (c.day, c.rule) == (D(2023, 10, 14), RULE_LATE_ANNOUNCED)
    # the report lead never reaches back before the window
    c = salary_cutoff("NBA", D(2019, 9, 30), "signing", W, span_days=90, report_lead_days=200)
    assert c.day == D(2019, 6, 29)


def test_an_announcement_before_the_window_is_its_own_eve():
    c = salary_cutoff("NBA", D(2023, 6, 25), "announcement", W)
    assert (c.day, c.rule, c.window.year) == (D(2023, 6, 24), RULE_EARLY, 2023)
    # a signing (not an announcement) dated before the window belongs to the season before
    c = salary_cutoff("NBA", D(2023, 6, 25), "signing", W)
    assert c.window.year == 2022 and c.rule == RULE_LATE_SIGNED


def test_an_undated_signing_takes_its_year_window():
    # the NHL source dates every signing July 1; in 2020 the market opened on October 9
    c = salary_cutoff("NHL", D(2020, 7, 1), "fallback", W)
    assert (c.day, c.rule) == (D(2020, 10, 8), RULE_WINDOW)
    assert salary_cutoff("NHL", D(2019, 7, 1), "fallback", W).day == D(2019, 6, 30)


def test_a_league_year_missing_from_the_table_is_an_error_with_a_reason():
    with pytest.raises(WindowError) as e:
        salary_cutoff("NFL", D(2022, 3, 16), "signing", W)
    assert e.value.reason == "no_negotiating_window" and "NFL" in e.value.detail
    with pytest.raises(WindowError):
        salary_cutoff("NBA", D(2040, 7, 3), "signing", W)


def test_config_overrides_and_bad_days():
    w = window_table({"nfl": {"2022": "2022-03-14"}})
    assert salary_cutoff("NFL", D(2022, 3, 16), "signing", w).day == D(2022, 3, 13)
    with pytest.raises(ValueError, match="negotiating_windows.NBA.2024"):
        window_table({"NBA": {"2024": "June 30"}})


def test_the_table_is_complete_and_ordered():
    for league in ("NBA", "NHL"):
        years = sorted(y for lg, y in NEGOTIATING_WINDOWS if lg == league)
        assert years == list(range(years[0], years[-1] + 1)), league
        assert years[-1] >= 2025
    for (league, year), (opens, signing, source) in NEGOTIATING_WINDOWS.items():
        assert opens <= signing and source
        assert D.fromisoformat(opens).year == year
