"""Where the ``nhl`` source's data lives: the Spotrac page, the snapshot files and their columns."""

from __future__ import annotations

#: League written in the ``league`` column.
LEAGUE = "NHL"
#: Source name (config block ``sources.nhl``, provenance records).
SOURCE = "nhl"
#: Spotrac free-agent table of one year (``{year}`` is filled in).
URL_TEMPLATE = "https://www.spotrac.com/nhl/free-agents/_/year/{year}/"
SNAPSHOT_PATTERN = "nhl/spotrac_signed_free_agents_*.csv"
SNAPSHOT_COLUMNS = ["signing_team", "previous_team", "contract_value", "aav", "contract_years", "spotrac_year"]
PLAYER_COLUMNS = ("player_name", "player")
