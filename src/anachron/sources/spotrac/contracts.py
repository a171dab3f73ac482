"""Free-agent rows checked (AAV, duplicates) into the ``signings`` table, dated by the free-agency opening day."""

from __future__ import annotations

import datetime as dt
from collections import Counter
from typing import Any, Mapping

import pandas as pd

from anachron.frames import text_or_empty, text_or_none
from anachron.sources.player_names import normalize_name
from anachron.sources.signings import SIGNING_COLUMNS, finish_signings
from anachron.sources.spotrac.aav import check_aav
from anachron.sources.spotrac.layout import LEAGUE
from anachron.sources.spotrac.skips import DUP_PLAYER_YEAR, DUP_ROW, SKIP_BAD_YEAR, SKIP_NO_PLAYER, SKIP_UNSIGNED

#: ``date_rule`` of a signing dated by the free-agency opening day.
DATE_RULE_FALLBACK = "free-agency opening fallback"
DATE_RULE_LISTED = "listed signing date"

_STATUS = {"UFA": "unrestricted", "RFA": "restricted"}

#: Columns of the free-agent rows both modes produce (the input of :func:`signings_from_rows`).
ROW_COLUMNS = [
    "player",
    "position",
    "status_code",
    "team",
    "previous_team",
    "value",
    "aav",
    "years",
    "year",
    "date",
    "origin",
]


def fa_opening_date(year: int, overrides: Mapping[Any, str] | None = None) -> str:
    """ISO date the NHL free-agency period opened in ``year``: July 1 unless overridden."""
    if overrides:
        for k, v in overrides.items():
            if int(k) == int(year):
                return pd.Timestamp(v).date().isoformat()
    return dt.date(int(year), 7, 1).isoformat()


def signings_from_rows(
    rows: pd.DataFrame,
    *,
    implausible_aav: str = "recompute",
    fa_opening_dates: Mapping[Any, str] | None = None,
) -> tuple[pd.DataFrame, Counter, Counter]:
    """Turn free-agent rows into signings; returns ``(signings, skipped, repaired)``.

    ``rows`` columns: ``player, position, status_code (UFA/RFA), team, previous_team,
    value, aav, years, year, date (ISO or None), origin`` (:data:`ROW_COLUMNS`). Rows are
    checked with :func:`~anachron.sources.spotrac.aav.check_aav`; exact repeats of (player,
    year, team, value, years) — the snapshot lists a player once per position he is filed
    under — count as ``duplicate_row``;
    a second signing of the same player in the same year as ``duplicate_player_year``.
    """
    skipped: Counter = Counter()
    repaired: Counter = Counter()
    out = []
    seen_rows: set[tuple] = set()
    seen_player_year: set[tuple] = set()
    for r in rows.itertuples(index=False):
        name = " ".join(text_or_empty(r.player).split())
        if not name:
            skipped[SKIP_NO_PLAYER] += 1
            continue
        year = pd.to_numeric(r.year, errors="coerce")
        if pd.isna(year):
            skipped[SKIP_BAD_YEAR] += 1
            continue
        year = int(year)
        team = text_or_none(r.team)
        prev = text_or_none(r.previous_team)
        if team is None:
            skipped[SKIP_UNSIGNED] += 1
            continue
        row_key = (normalize_name(name), year, team, r.value, r.years)
        if row_key in seen_rows:
            skipped[DUP_ROW] += 1
            continue
        seen_rows.add(row_key)
        aav, skip, repair = check_aav(r.aav, r.value, r.years, mode=implausible_aav)
        if aav is None:
            skipped[skip] += 1
            continue
        py = (normalize_name(name), year)
        if py in seen_player_year:
            skipped[DUP_PLAYER_YEAR] += 1
            continue
        seen_player_year.add(py)
        if repair:
            repaired[repair] += 1
        listed_date = r.date if isinstance(r.date, str) and r.date else None
        status = _STATUS.get(str(r.status_code).strip().upper()) if isinstance(r.status_code, str) else None
        years = int(pd.to_numeric(r.years))
        value = float(pd.to_numeric(r.value))
        note = f"{years} years, ${value:,.0f}; listed AAV {r.aav}"
        if repair:
            note += f" (implausible; AAV = value / years = ${aav:,.0f})"
        if isinstance(r.position, str) and r.position:
            note += f"; position {r.position}"
        out.append(
            {
                "league": LEAGUE,
                "player": name,
                "signing_date": listed_date or fa_opening_date(year, fa_opening_dates),
                "team": team,
                "previous_team": prev,
                "team_change": pd.NA if prev is None else prev != team,
                "years": years,
                "total_value": value,
                "aav": aav,
                "status": status,
                "sign_and_trade": False,
                "re_signing": pd.NA if prev is None else prev == team,
                "date_rule": DATE_RULE_LISTED if listed_date else DATE_RULE_FALLBACK,
                "origin": r.origin,
                "note": note,
            }
        )
    table = (
        finish_signings(pd.DataFrame(out, columns=SIGNING_COLUMNS))
        if out
        else finish_signings(pd.DataFrame(columns=SIGNING_COLUMNS))
    )
    return table, skipped, repaired
