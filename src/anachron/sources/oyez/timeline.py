"""An Oyez case's timeline (Granted, Argued, Decided) read as calendar days in the Court's time zone."""

from __future__ import annotations

import datetime as dt
from typing import Any
from zoneinfo import ZoneInfo

#: The Court's local time zone; timeline timestamps are dated in it.
COURT_TZ = ZoneInfo("America/New_York")


def local_date(seconds: Any, tz: ZoneInfo = COURT_TZ) -> str | None:
    """ISO date (``YYYY-MM-DD``) of unix ``seconds`` in the Court's time zone, or None.

    The calendar day in ``tz`` (America/New_York by default), not in UTC: 2020-06-15 02:30
    UTC is 2020-06-14 22:30 EDT and is dated ``"2020-06-14"``.
    """
    if seconds is None or isinstance(seconds, bool):
        return None
    try:
        value = float(seconds)
    except (TypeError, ValueError):
        return None
    if value != value:  # NaN
        return None
    return dt.datetime.fromtimestamp(value, tz).date().isoformat()


def timeline_dates(timeline: Any, tz: ZoneInfo = COURT_TZ) -> dict[str, str | None]:
    """``{"granted_date", "argued_date", "decided_date"}`` from an Oyez ``timeline``.

    ``timeline`` is a list of ``{"event": "Granted"|"Argued"|"Reargued"|"Decided"|...,
    "dates": [unix seconds, ...]}`` (entries may be null). Each date is the first of its
    event's ``dates``, dated in ``tz`` (:func:`local_date`); None when the event is absent.
    """
    out: dict[str, str | None] = {"granted_date": None, "argued_date": None, "decided_date": None}
    keys = {"granted": "granted_date", "argued": "argued_date", "decided": "decided_date"}
    for entry in timeline or []:
        if not isinstance(entry, dict):
            continue
        key = keys.get(str(entry.get("event") or "").strip().lower())
        dates = entry.get("dates") or []
        if key is None or out[key] is not None or not dates:
            continue
        firsts = [d for d in (local_date(x, tz) for x in dates) if d is not None]
        if firsts:
            out[key] = min(firsts)
    return out
