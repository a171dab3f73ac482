"""Where the ``nba`` source's data lives: the search page, the snapshot files and their columns."""

from __future__ import annotations

#: League written in the ``league`` column.
LEAGUE = "NBA"
#: Source name (config block ``sources.nba``, provenance records).
SOURCE = "nba"
#: Search-results page of prosportstransactions.com (basketball).
SEARCH_URL = "https://www.prosportstransactions.com/basketball/Search/SearchResults.php"
#: Rows per search-results page on the site.
PAGE_SIZE = 25

TRANSACTIONS_PATTERN = "nba/prosports_transactions_*.csv"
CONTRACTS_PATTERN = "nba/actual_contracts_*.csv"
SEASONS_FILE = "nba/bbref_player_season_info.csv"
SNAPSHOT_LAYOUT = f"{TRANSACTIONS_PATTERN} (and optionally {CONTRACTS_PATTERN}, {SEASONS_FILE})"

TRANSACTION_COLUMNS = ["date", "team", "player", "notes"]
CONTRACT_COLUMNS = ["player", "Years", "Total Value", "date"]
SEASON_COLUMNS = ["season", "player", "team"]
