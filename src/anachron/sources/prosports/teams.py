"""NBA team names: franchise aliases, Basketball-Reference team codes, the canonical nickname."""

from __future__ import annotations

from typing import Any

from anachron.frames import is_null

#: Franchise aliases -> the nickname used for the franchise now.
TEAM_ALIASES = {"Bobcats": "Hornets", "Trail Blazers": "Blazers", "Sixers": "76ers", "Seventy Sixers": "76ers"}

#: Basketball-Reference team codes -> prosportstransactions nicknames.
BBREF_TEAMS = {
    "ATL": "Hawks", "BOS": "Celtics", "BRK": "Nets", "NJN": "Nets", "CHO": "Hornets", "CHA": "Hornets",
    "CHH": "Hornets", "CHI": "Bulls", "CLE": "Cavaliers", "DAL": "Mavericks", "DEN": "Nuggets",
    "DET": "Pistons", "GSW": "Warriors", "HOU": "Rockets", "IND": "Pacers", "LAC": "Clippers",
    "LAL": "Lakers", "MEM": "Grizzlies", "VAN": "Grizzlies", "MIA": "Heat", "MIL": "Bucks",
    "MIN": "Timberwolves", "NOP": "Pelicans", "NOH": "Pelicans", "NOK": "Pelicans", "NYK": "Knicks",
    "OKC": "Thunder", "SEA": "Thunder", "ORL": "Magic", "PHI": "76ers", "PHO": "Suns", "POR": "Blazers",
    "SAC": "Kings", "SAS": "Spurs", "TOR": "Raptors", "UTA": "Jazz", "WAS": "Wizards",
}  # fmt: skip


def canonical_team(team: Any) -> str | None:
    """Franchise-normalised team nickname ("Bobcats" -> "Hornets"); None for blank."""
    if is_null(team):
        return None
    t = " ".join(str(team).split())
    if not t:
        return None
    return TEAM_ALIASES.get(t, t)
