"""Where the ``oyez`` source's data lives: the API, the snapshot files, the terms read by default."""

from __future__ import annotations

#: Base URL of the Oyez API.
OYEZ_API = "https://api.oyez.org"
#: Snapshot path pattern, relative to the snapshot directory.
SNAPSHOT_PATTERN = "oyez/cases/*.json"
#: Terms fetched when none are given (the legal task uses 2014–2023, 2024 for control).
DEFAULT_TERMS = tuple(range(2014, 2025))
