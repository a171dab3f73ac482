"""Calendar days of values: the one place that turns dates, timestamps and strings into days.

Accepted values: ``datetime.date`` (itself), ``datetime.datetime``, :class:`pandas.Timestamp`
and ``numpy.datetime64`` (their date), and strings. None, NaN, NaT, ``pd.NA``, a blank
string, a number or any other type, and what cannot be read give None. Nothing here raises.

Two readings, chosen by the caller with ``lenient``:

* strict (default): a string (surrounding whitespace ignored) that starts with an ISO day
  ``YYYY-MM-DD`` (``"2020-01-05"``, ``"2020-01-05T23:00:00-05:00"``) gives that day, as
  written; anything after it is ignored. Other strings are no date. A datetime gives its
  date as written.
* lenient: whatever :class:`pandas.Timestamp` reads (``"Jan 5, 2020"``, ``"2020-01-05 23:00"``,
  ``"Sun, 05 Jan 2020 23:00:00 -0500"``). With ``utc``, an instant with a time zone (string
  or datetime) gives its UTC day (``"2020-01-05T23:00:00-05:00"`` -> 2020-01-06); without,
  the day as written.

Claim text ("Q3 2019", "March 2020") is parsed by :mod:`anachron.verify.dates`, not here.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

import numpy as np
import pandas as pd

_ISO_PREFIX = re.compile(r"\d{4}-\d{2}-\d{2}")


def to_date(value: Any, *, lenient: bool = False, utc: bool = False) -> dt.date | None:
    """The calendar day of ``value``, or None (see the module docstring for what is read).

    Args:
        value: a date, datetime, Timestamp, ``numpy.datetime64``, string, or anything else (None).
        lenient: read strings with :class:`pandas.Timestamp` instead of requiring a leading ISO day.
        utc: lenient mode only: an aware instant gives its UTC day.
    """
    if isinstance(value, np.datetime64):
        value = pd.Timestamp(value)
    if value is pd.NaT:
        return None
    if isinstance(value, str):
        value = value.strip()
        if not value:
            return None
    elif not isinstance(value, dt.date):
        return None
    if lenient:
        try:
            ts = pd.Timestamp(value)
        except (ValueError, TypeError, OverflowError):
            return None
        if ts is pd.NaT:
            return None
        if utc and ts.tzinfo is not None:
            ts = ts.tz_convert("UTC")
        return ts.date()
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    m = _ISO_PREFIX.match(value)
    if m is None:
        return None
    try:
        return dt.date.fromisoformat(m[0])
    except ValueError:
        return None


def to_iso(value: Any, *, lenient: bool = False, utc: bool = False) -> str | None:
    """:func:`to_date` of ``value`` as ``"YYYY-MM-DD"``, or None."""
    day = to_date(value, lenient=lenient, utc=utc)
    return None if day is None else day.isoformat()


def is_iso_day(value: Any) -> bool:
    """True when ``value`` is a string that is exactly a real ISO day ``YYYY-MM-DD`` (no spaces)."""
    return isinstance(value, str) and _ISO_PREFIX.fullmatch(value) is not None and to_date(value) is not None
