"""The JSON Schema of the ``sources.nba`` config block."""

from __future__ import annotations

from typing import Any

from anachron.sources.prosports.layout import SEARCH_URL

#: JSON Schema of the ``sources.nba`` config block (the keyword arguments of
#: :func:`~anachron.sources.prosports.reader.fetch`).
CONFIG_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "default": {},
    "description": (
        "NBA signings from prosportstransactions.com notes (live), or from nba/prosports_transactions_*.csv, "
        "nba/actual_contracts_*.csv and nba/bbref_player_season_info.csv in a snapshot."
    ),
    "properties": {
        "start": {
            "description": "First transaction date to fetch live (history before the 2019 signings gives previous teams).",
            "type": "string",
            "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$",
            "default": "2016-07-01",
        },
        "end": {
            "description": "Last transaction date to fetch live; null = today.",
            "type": ["string", "null"],
            "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$",
            "default": None,
        },
        "sign_and_trade_days": {
            "description": "A re-signing followed within this many days by a non-acquisition move to another team "
            "is a sign-and-trade (the NBA bars trading a re-signed player for three months).",
            "type": "integer",
            "minimum": 0,
            "default": 90,
        },
        "status_lookback_days": {
            "description": "How far back (days) an earlier note may supply the unrestricted/restricted status.",
            "type": "integer",
            "minimum": 0,
            "default": 183,
        },
        "use_contract_lists": {
            "description": "Snapshot: merge the dated signings of nba/actual_contracts_*.csv.",
            "type": "boolean",
            "default": True,
        },
        "use_season_rosters": {
            "description": "Snapshot: use nba/bbref_player_season_info.csv for contract-list teams and sign-and-trades.",
            "type": "boolean",
            "default": True,
        },
        "base_url": {"description": "Search-results page URL.", "type": "string", "default": SEARCH_URL},
        "max_pages": {
            "description": "Most result pages to read live.",
            "type": "integer",
            "minimum": 1,
            "default": 5000,
        },
        "pause_s": {
            "description": "Seconds to wait between live pages.",
            "type": "number",
            "minimum": 0,
            "default": 0.0,
        },
    },
}
