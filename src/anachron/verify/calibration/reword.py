"""Re-wording rules for real dated facts planted in the calibration (docs/verification.md#calibration).

Real facts (news headlines, EDGAR figures as filed: :mod:`anachron.verify.calibration.real`)
carry one date, the day they became public. These rules write that date the ways people and
models write dates, put it in different places of the sentence, and make the declared
``source_date`` honest, missing or falsely early, so that the calibration measures the
verifier on wording it was not written for.

Date formats (:data:`REWORD_FORMATS`; the ``date`` part of a planted claim's style):

========== ===================== =====================================================
format     example (2020-01-28)  what it allows
========== ===================== =====================================================
iso        2020-01-28            the day
abbrev     Jan. 28, 2020         the day (AP month abbreviations)
us_short   1/28/20               month/day/two-digit year; both readings when the
                                 day could be the month too (3/4/20: Mar 4 or Apr 3)
day_first  28/01/2020            day/month/year; both readings likewise
q_short    1Q20                  the calendar quarter
mon_dash   Jan-2020              the month
month_year January 2020          the month
none       (no date in the text) nothing: the declared date or grounding must date it
========== ===================== =====================================================

A written date *carries the truth* (:func:`carries_truth`) when every day it allows is on
the fact's side of the cutoff: after it for a leak, on or before it for a clean fact. A
planter never writes a date that straddles the cutoff: such a claim has no single truth.
"""

from __future__ import annotations

import calendar
import datetime as dt
from typing import Sequence

import numpy as np

from anachron.verify.calibration.planting import lower_first

#: Written date formats of a re-worded claim, in style-label order.
REWORD_FORMATS = ("iso", "abbrev", "us_short", "day_first", "q_short", "mon_dash", "month_year", "none")
#: Formats that write one day (possibly two readings of it); the others write a month or quarter.
DAY_FORMATS = ("iso", "abbrev", "us_short", "day_first")
#: Declared-date modes of a re-worded claim (the ``declared=`` part of its style).
DECLARED_MODES = ("honest", "missing", "false_early")

#: AP style month abbreviations (March-July are written out).
_AP_MONTHS = ("", "Jan.", "Feb.", "March", "April", "May", "June", "July", "Aug.", "Sept.", "Oct.", "Nov.", "Dec.")


def write_date(d: dt.date, fmt: str) -> str:
    """``d`` written in ``fmt`` (one of :data:`REWORD_FORMATS`; "" for ``none``).

    Raises:
        ValueError: an unknown format.
    """
    if fmt == "iso":
        return d.isoformat()
    if fmt == "abbrev":
        return f"{_AP_MONTHS[d.month]} {d.day}, {d.year}"
    if fmt == "us_short":
        return f"{d.month}/{d.day}/{d.year % 100:02d}"
    if fmt == "day_first":
        return f"{d.day:02d}/{d.month:02d}/{d.year}"
    if fmt == "q_short":
        return f"{(d.month - 1) // 3 + 1}Q{d.year % 100:02d}"
    if fmt == "mon_dash":
        return f"{calendar.month_abbr[d.month]}-{d.year}"
    if fmt == "month_year":
        return f"{calendar.month_name[d.month]} {d.year}"
    if fmt == "none":
        return ""
    raise ValueError(f"unknown date format {fmt!r}; known: {REWORD_FORMATS}")


def _swapped(d: dt.date) -> dt.date | None:
    """The other reading of a numeric day/month date (day and month exchanged), if it is a day."""
    if d.day > 12 or d.day == d.month:
        return None
    return dt.date(d.year, d.day, d.month)


def written_interval(d: dt.date, fmt: str) -> tuple[dt.date, dt.date] | None:
    """First and last day that ``d`` written in ``fmt`` allows (inclusive); None for ``none``.

    A numeric day whose day and month can be exchanged (``us_short``, ``day_first``) allows
    both readings: the interval spans them.
    """
    if fmt in ("iso", "abbrev"):
        return d, d
    if fmt in ("us_short", "day_first"):
        other = _swapped(d)
        return (d, d) if other is None else (min(d, other), max(d, other))
    if fmt == "q_short":
        q0 = 3 * ((d.month - 1) // 3) + 1
        return dt.date(d.year, q0, 1), dt.date(d.year, q0 + 2, calendar.monthrange(d.year, q0 + 2)[1])
    if fmt in ("mon_dash", "month_year"):
        return dt.date(d.year, d.month, 1), dt.date(d.year, d.month, calendar.monthrange(d.year, d.month)[1])
    if fmt == "none":
        return None
    raise ValueError(f"unknown date format {fmt!r}; known: {REWORD_FORMATS}")


def carries_truth(d: dt.date, fmt: str, cutoff: dt.date, leak: bool) -> bool:
    """True when every day ``d`` written in ``fmt`` allows is after ``cutoff`` (``leak``) or
    on or before it (clean); True for ``none`` (the text then carries no date)."""
    span = written_interval(d, fmt)
    if span is None:
        return True
    return span[0] > cutoff if leak else span[1] <= cutoff


def pick_format(rng: np.random.Generator, d: dt.date, cutoff: dt.date, leak: bool,
                formats: Sequence[str] = REWORD_FORMATS) -> str:
    """A format of ``formats`` drawn at random among those that carry the truth (:func:`carries_truth`);
    ``iso`` when none does."""
    ok = [f for f in formats if carries_truth(d, f, cutoff, leak)]
    return ok[int(rng.integers(len(ok)))] if ok else "iso"


def place_date(body: str, written: str, fmt: str, position: str) -> str:
    """One sentence: ``body`` with the written date at ``position`` and a final period.

    Positions: ``prefix`` ("On Jan. 28, 2020, ..." / "In 1Q20, ..."), ``suffix`` ("... on
    1/28/20" / "... in Jan-2020"), ``paren`` ("... (28/01/2020)"). With ``fmt == "none"`` the
    body stands alone.
    """
    body = body.strip().rstrip(".").strip()
    if fmt == "none" or not written:
        text = body
    else:
        prep = "On" if fmt in DAY_FORMATS else "In"
        if position == "prefix":
            text = f"{prep} {written}, {lower_first(body)}"
        elif position == "suffix":
            text = f"{body} {prep.lower()} {written}"
        elif position == "paren":
            text = f"{body} ({written})"
        else:
            raise ValueError(f"unknown date position {position!r}")
    return text + "."


def declared_for(rng: np.random.Generator, truth: dt.date, cutoff: dt.date, mode: str) -> str | None:
    """The declared ``source_date`` (ISO) of a re-worded claim in ``mode``: the true day
    (``honest``), None (``missing``), or a day 1-120 days before both the cutoff and the true
    day (``false_early``: for a leak a pre-cutoff date on a post-cutoff fact, as models write)."""
    if mode == "honest":
        return truth.isoformat()
    if mode == "false_early":
        return (min(truth, cutoff) - dt.timedelta(days=int(rng.integers(1, 121)))).isoformat()
    if mode == "missing":
        return None
    raise ValueError(f"unknown declared mode {mode!r}; known: {DECLARED_MODES}")
