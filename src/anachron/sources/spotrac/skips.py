"""Skip and repair reasons of the ``nhl`` source: fixed codes, counted in the manifest's
``skipped_by_reason`` and ``repaired_by_reason``."""

from __future__ import annotations

SKIP_NO_CONTRACT_VALUE = "no_contract_value"
SKIP_IMPLAUSIBLE_AAV = "implausible_aav"
SKIP_INCONSISTENT_AAV = "aav_inconsistent"
SKIP_NO_PLAYER = "no_player"
SKIP_NO_TEAM = "no_team"
SKIP_UNSIGNED = "unsigned"
SKIP_BAD_YEAR = "bad_year"
REPAIR_AAV = "aav_recomputed"
DUP_ROW = "duplicate_row"
DUP_PLAYER_YEAR = "duplicate_player_year"
