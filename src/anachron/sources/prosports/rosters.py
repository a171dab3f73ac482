"""Season rosters (Basketball-Reference season rows) and the sign-and-trades they show."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Iterable

import pandas as pd

from anachron.sources.base import read_csv_checked
from anachron.sources.player_names import normalize_name
from anachron.sources.prosports.layout import SEASON_COLUMNS
from anachron.sources.prosports.notes import ACQUISITION_RE
from anachron.sources.prosports.players import player_keys
from anachron.sources.prosports.teams import BBREF_TEAMS, canonical_team

_BBREF_MULTI = re.compile(r"^(?:TOT|\dTM)$")


class SeasonTeams:
    """Which team(s) a player played for in a season (Basketball-Reference season rows).

    ``season`` is the year the season ends (2023 = 2022-23). Multi-team aggregate rows
    (``TOT``, ``2TM``) are ignored. A player traded during a season has several teams;
    their order in the file is alphabetical, not chronological, so the first or last of
    them cannot be told.
    """

    def __init__(self, table: pd.DataFrame | None) -> None:
        self._teams: dict[tuple[str, int], set[str]] = {}
        if table is None:
            return
        for season, player, team in zip(table["season"], table["player"], table["team"]):
            code = str(team).strip()
            season_n = pd.to_numeric(season, errors="coerce")
            if _BBREF_MULTI.match(code) or pd.isna(season_n):
                continue
            key = (normalize_name(player), int(season_n))
            self._teams.setdefault(key, set()).add(BBREF_TEAMS.get(code, code))

    def __bool__(self) -> bool:
        return bool(self._teams)

    def teams(self, keys: Iterable[str], season: int) -> set[str]:
        """The teams (nicknames) any of ``keys`` played for in ``season``; empty if none."""
        found: set[str] = set()
        for k in keys:
            found |= self._teams.get((k, int(season)), set())
        return found


def read_season_rosters(path: Path, since: pd.Timestamp) -> pd.DataFrame:
    """Read ``bbref_player_season_info.csv`` (``season, player, team``; other columns are not read).

    Keeps the seasons ending in ``since``'s year or later (the first transaction's; every
    season when ``since`` is NaT), for :class:`SeasonTeams`.

    Raises:
        SourceError: naming the file and the missing column.
    """
    table = read_csv_checked(
        path,
        SEASON_COLUMNS,
        name=str(path),
        usecols=SEASON_COLUMNS,
        dtype={"player": "str", "team": "str"},
    )
    if pd.notna(since):
        table = table[pd.to_numeric(table["season"], errors="coerce") >= since.year]
    return table


def single_team(teams: set[str]) -> str | None:
    """The team when ``teams`` holds exactly one, else None."""
    return next(iter(teams)) if len(teams) == 1 else None


def _offseason_year(day: pd.Timestamp) -> int | None:
    """The offseason a signing belongs to: its year for June..December, None mid-season."""
    return int(day.year) if day.month >= 6 else None


def infer_sign_and_trades(signings: pd.DataFrame, tx: pd.DataFrame, seasons: SeasonTeams) -> int:
    """Flag re-signings followed by a season played for one other team only (in place).

    An offseason re-signing with team A in year Y whose player then played season Y+1
    (ending in Y+1) for a single team T != A, with no acquisition note ("signed",
    "claimed") of the player by T in between, was traded right after re-signing: the NBA
    bars trading a re-signed player for three months (and until mid-December), so the
    trade was a sign-and-trade. Sets ``sign_and_trade``, ``team`` = T, ``previous_team``
    = A, ``team_change`` = True. Returns the number of rows changed.
    """
    if not seasons or signings.empty:
        return 0
    txx = tx.assign(_date=pd.to_datetime(tx["date"], errors="coerce"), _team=[canonical_team(t) for t in tx["team"]])
    acq = txx[txx["notes"].astype("str").str.match(ACQUISITION_RE) & txx["_date"].notna() & txx["player"].notna()]
    acq_keys: dict[str, list[tuple[pd.Timestamp, str]]] = {}
    for raw, d, t in zip(acq["player"], acq["_date"], acq["_team"]):
        for k in player_keys(raw):
            acq_keys.setdefault(k, []).append((d, t))
    changed = 0
    for idx in signings.index:
        if (
            not signings.at[idx, "re_signing"]
            or signings.at[idx, "sign_and_trade"]
            or pd.isna(signings.at[idx, "team"])
        ):
            continue
        day = pd.Timestamp(signings.at[idx, "signing_date"])
        year = _offseason_year(day)
        if year is None:
            continue
        keys = signings.at[idx, "_keys"]
        nxt = single_team(seasons.teams(keys, year + 1))
        team = signings.at[idx, "team"]
        if nxt is None or nxt == team:
            continue
        season_end = pd.Timestamp(year=year + 1, month=6, day=30)
        if any(day < d <= season_end and t == nxt for k in keys for d, t in acq_keys.get(k, [])):
            continue
        signings.at[idx, "previous_team"] = team
        signings.at[idx, "team"] = nxt
        signings.at[idx, "team_change"] = True
        signings.at[idx, "sign_and_trade"] = True
        signings.at[idx, "note"] = (
            f"{signings.at[idx, 'note']} [sign-and-trade inferred: played {year}-{str(year + 1)[-2:]} for {nxt} only]"
        )
        changed += 1
    return changed
