"""The shared date helpers (anachron.dates) and the readings their callers rely on."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd
import pytest

from anachron.dates import is_iso_day, to_date, to_iso
from anachron.retrieval.search import as_iso_day

D = dt.date(2020, 1, 5)


@pytest.mark.parametrize(
    "value",
    [D, dt.datetime(2020, 1, 5, 23), pd.Timestamp("2020-01-05 23:00"), np.datetime64("2020-01-05"),
     "2020-01-05", " 2020-01-05\n", "2020-01-05T23:00:00", "2020-01-05T23:00:00-05:00", "2020-01-05 and more"],
)
def test_strict_reads_dates_and_leading_iso_days(value):
    assert to_date(value) == D and to_iso(value) == "2020-01-05"


@pytest.mark.parametrize(
    "value",
    [None, "", "  ", float("nan"), np.nan, pd.NaT, pd.NA, np.datetime64("NaT"), "nan", "null", "2020-02-30",
     "2020-1-5", "20200105", "2020-W01-1", "2020-01", "Jan 5, 2020", "garbage", 20200105, 1.5, True, [], {}],
)
def test_strict_gives_none_for_the_rest(value):
    assert to_date(value) is None and to_iso(value) is None


def test_lenient_reads_what_pandas_reads():
    for value in ("Jan 5, 2020", "5 Jan 2020", "01/05/2020", "2020-01-05 23:00", "2020-01-05"):
        assert to_date(value, lenient=True) == D
    for value in (None, "", "garbage", "2020-02-30", float("nan"), pd.NaT, 5, 2024, True, []):
        assert to_date(value, lenient=True) is None  # a number is no date (not nanoseconds since 1970)


def test_utc_only_moves_aware_instants_in_lenient_mode():
    late = "2020-01-05T23:00:00-05:00"  # 04:00 UTC the next day
    assert to_iso(late, lenient=True, utc=True) == "2020-01-06"
    assert to_iso(late, lenient=True) == "2020-01-05"
    assert to_iso(late) == to_iso(late, utc=True) == "2020-01-05"  # strict: the day as written
    rfc = "Sun, 05 Jan 2020 23:00:00 -0500"
    assert to_iso(rfc) is None and to_iso(rfc, lenient=True) == "2020-01-05"
    aware = pd.Timestamp("2020-01-05 23:00", tz="America/New_York")
    assert to_iso(aware, lenient=True, utc=True) == "2020-01-06" and to_iso(aware) == "2020-01-05"
    assert to_iso("2020-01-05T12:00:00", lenient=True, utc=True) == "2020-01-05"  # naive: as written


def test_is_iso_day_is_exact():
    assert is_iso_day("2020-01-05")
    for value in (" 2020-01-05", "2020-01-05\n", "2020-01-05T00:00", "2020-02-30", "2020-W01-1", "20200105", D, None):
        assert not is_iso_day(value)


def test_as_iso_day_raises_where_to_iso_gives_none():
    assert as_iso_day(" 2020-01-05T10:00") == as_iso_day(pd.Timestamp("2020-01-05 23:00")) == "2020-01-05"
    for bad in (None, pd.NaT, "Jan 5, 2020", "2020-02-30", 20200105):
        with pytest.raises(ValueError, match="is not a date"):
            as_iso_day(bad)
