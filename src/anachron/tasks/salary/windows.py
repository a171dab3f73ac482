"""Free-agency negotiating windows and the salary task's cutoff rule (docs/tasks.md#salary).

A free agent's new contract can first be known when his league's negotiating window opens:
NBA deals are agreed (and reported) from the window's first evening, days before the moratorium
ends and they can be signed (2019: agreed from June 30, signed from July 6; 2020: Nov 20 and
Nov 22; 2021: Aug 2 and Aug 6). A cutoff the day before the *signing* therefore lets the
contract be public on the cutoff day. The point-in-time cutoff is the day before the window
opened, unless the source dates the contract's announcement earlier.

:data:`NEGOTIATING_WINDOWS` holds, per league and offseason, the first day a free agent could
agree terms with another club (``opens``) and the first day he could sign (``signing``); every
row names its source. Dates are US Eastern calendar days (the NBA's window opens at 6 p.m. ET
since 2019; the NHL's market at noon ET).

Sources: NBA: the league's annual free-agency announcements (NBA Communications; 2011: the
post-lockout calendar of the 2011 CBA, negotiations and signings from Dec 9; 2012–2018: July 1
at 12:01 a.m. ET, moratorium to early July; 2019 on: June 30 at 6 p.m. ET, moved by the Board of
Governors in 2018; 2020 and 2021: the COVID-19 calendars announced by the NBA and NBPA). NHL:
the CBA's July 1 opening (Art. 10.1), 2013: July 5 (lockout-shortened 2012–13 season), 2020:
Oct 9 and 2021: July 28 (the NHL/NHLPA return-to-play and 2021 calendars), 2022: July 13 (the
late 2021–22 season). The NHL's pre-2020 "interview period" (late June) allowed talks, not
agreements, so the window is the July opening.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any, Mapping

#: (league, offseason year) -> (window opens, signings allowed from, source).
NEGOTIATING_WINDOWS: dict[tuple[str, int], tuple[str, str, str]] = {
    ("NBA", 2011): ("2011-12-09", "2011-12-09", "2011 CBA post-lockout calendar"),
    **{("NBA", y): (f"{y}-07-01", f"{y}-07-{d:02d}", "NBA free-agency calendar (July 1, 12:01 a.m. ET)")
       for y, d in ((2012, 11), (2013, 10), (2014, 10), (2015, 9), (2016, 7), (2017, 6), (2018, 6))},
    ("NBA", 2019): ("2019-06-30", "2019-07-06", "NBA free-agency calendar (June 30, 6 p.m. ET)"),
    ("NBA", 2020): ("2020-11-20", "2020-11-22", "NBA/NBPA 2020-21 season calendar (Nov 20, 6 p.m. ET)"),
    ("NBA", 2021): ("2021-08-02", "2021-08-06", "NBA/NBPA 2021 offseason calendar (Aug 2, 6 p.m. ET)"),
    **{("NBA", y): (f"{y}-06-30", f"{y}-07-06", "NBA free-agency calendar (June 30, 6 p.m. ET)")
       for y in range(2022, 2026)},
    **{("NHL", y): (f"{y}-07-01", f"{y}-07-01", "NHL CBA Art. 10.1 (July 1, noon ET)")
       for y in (2012, *range(2014, 2020), 2023, 2024, 2025)},
    ("NHL", 2013): ("2013-07-05", "2013-07-05", "NHL 2013 calendar (lockout-shortened season)"),
    ("NHL", 2020): ("2020-10-09", "2020-10-09", "NHL/NHLPA return-to-play calendar"),
    ("NHL", 2021): ("2021-07-28", "2021-07-28", "NHL 2021 offseason calendar"),
    ("NHL", 2022): ("2022-07-13", "2022-07-13", "NHL 2022 offseason calendar"),
}

#: Cutoff rules (the instance label's ``cutoff_rule``; the manifest counts instances per rule).
RULE_WINDOW = "negotiating window"
RULE_EARLY = "announcement before the window"
RULE_LATE_ANNOUNCED = "late signing: announcement date"
RULE_LATE_SIGNED = "late signing: signing date less the report lead"
#: A contract dated at most this many days after the window opened was negotiable from its
#: first day (NBA deals agreed on the first evening are often signed weeks later, after the cap
#: sequencing); later ones are in-season or end-of-offseason signings, dated by themselves.
WINDOW_SPAN_DAYS = 90
#: A contract dated at most this many days before the window opened belongs to that offseason
#: (an agreement reported early); earlier ones are signings of the season before.
EARLY_DAYS = 30
#: A late signing known only by its signing (transaction) date may have been agreed and reported
#: this many days earlier.
LATE_REPORT_LEAD_DAYS = 7


@dataclass(frozen=True)
class Window:
    """One offseason's negotiating window: ``opens`` (first day terms can be agreed), ``signing``."""

    league: str
    year: int
    opens: dt.date
    signing: dt.date
    source: str


@dataclass(frozen=True)
class Cutoff:
    """A salary instance's cutoff (the last admissible day), its rule and the window it used."""

    day: dt.date
    rule: str
    window: Window | None


class WindowError(ValueError):
    """A signing the window table cannot date (``reason`` is the exclusion reason code)."""

    def __init__(self, reason: str, detail: str):
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


def dated_by(date_rule: Any) -> str:
    """What a source's signing date is, from its ``date_rule``: ``"fallback"`` (no date: the
    league's opening day), ``"announcement"`` (the contract's first report) or ``"signing"``."""
    rule = str(date_rule or "").lower()
    if "fallback" in rule:
        return "fallback"
    return "announcement" if "announce" in rule else "signing"


def window_table(overrides: Mapping[str, Mapping[Any, str]] | None = None) -> dict[tuple[str, int], Window]:
    """The window table: :data:`NEGOTIATING_WINDOWS` updated by ``overrides``.

    Args:
        overrides: league -> {year: ISO day the window opens} (the config key
            ``tasks.salary.negotiating_windows``); an override's signing day is its opening day.

    Raises:
        ValueError: a year or a day that does not parse (the message names the entry).
    """
    out = {
        k: Window(k[0], k[1], dt.date.fromisoformat(o), dt.date.fromisoformat(s), src)
        for k, (o, s, src) in NEGOTIATING_WINDOWS.items()
    }
    for league, years in (overrides or {}).items():
        for year, day in (years or {}).items():
            try:
                y, d = int(year), dt.date.fromisoformat(str(day))
            except (TypeError, ValueError):
                raise ValueError(f"tasks.salary.negotiating_windows.{league}.{year}: {day!r} is not an ISO day") from None
            out[(str(league).upper(), y)] = Window(str(league).upper(), y, d, d, "config negotiating_windows")
    return out


def salary_cutoff(
    league: str,
    day: dt.date,
    dated_by: str,
    windows: Mapping[tuple[str, int], Window],
    *,
    span_days: int = WINDOW_SPAN_DAYS,
    early_days: int = EARLY_DAYS,
    report_lead_days: int = LATE_REPORT_LEAD_DAYS,
) -> Cutoff:
    """The cutoff of a signing: the day before its contract could first be known.

    ``dated_by`` says what ``day`` is: ``"announcement"`` (the contract's first report),
    ``"signing"`` (the transaction) or ``"fallback"`` (no date: the source put the league's
    opening day, so the offseason is ``day``'s year). The signing's offseason is the latest window that opened on or before
    ``day`` (for an announcement: on or before ``day`` + ``early_days``, an agreement reported
    early); then

    * an announcement before the window opened: ``day`` − 1 (:data:`RULE_EARLY`);
    * a date within ``span_days`` after the opening, or a fallback date: the opening − 1
      (:data:`RULE_WINDOW`: terms could be agreed and reported from the first day);
    * later: ``day`` − 1 for an announcement (:data:`RULE_LATE_ANNOUNCED`), ``day`` − 1 −
      ``report_lead_days`` for a signing date (:data:`RULE_LATE_SIGNED`), never before the
      opening − 1.

    Raises:
        WindowError: reason ``no_negotiating_window`` when the table lacks the window of
            ``day``'s year (a date before it could belong to it or to the year before) or, for
            a date before that year's window, the previous year's.
    """
    lg = league.upper()
    w = windows.get((lg, day.year))
    if w is None:
        raise WindowError("no_negotiating_window", f"no {lg} negotiating window for {day.year} in the window table")
    if dated_by == "fallback":
        return Cutoff(w.opens - dt.timedelta(days=1), RULE_WINDOW, w)
    lead = dt.timedelta(days=early_days if dated_by == "announcement" else 0)
    if day + lead < w.opens:
        w = windows.get((lg, day.year - 1))
        if w is None:
            raise WindowError(
                "no_negotiating_window", f"{day} is before the {lg} {day.year} window and {day.year - 1} has none"
            )
    before = w.opens - dt.timedelta(days=1)
    if day < w.opens:
        return Cutoff(day - dt.timedelta(days=1), RULE_EARLY, w)
    if (day - w.opens).days <= span_days:
        return Cutoff(before, RULE_WINDOW, w)
    if dated_by == "announcement":
        return Cutoff(day - dt.timedelta(days=1), RULE_LATE_ANNOUNCED, w)
    return Cutoff(max(before, day - dt.timedelta(days=1 + report_lead_days)), RULE_LATE_SIGNED, w)
