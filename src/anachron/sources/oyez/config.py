"""The JSON Schema of the ``sources.oyez`` config block."""

from __future__ import annotations

from typing import Any

from anachron.sources.oyez.layout import DEFAULT_TERMS, OYEZ_API

#: JSON Schema of the ``sources.oyez`` config block (live settings; snapshots ignore them).
CONFIG_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "default": {},
    "description": "Oyez API client (live mode); a snapshot reads oyez/cases/*.json instead.",
    "properties": {
        "terms": {
            "description": "October Terms to fetch (the legal task uses 2014-2023; 2024 feeds the control split).",
            "type": "array",
            "items": {"type": "integer", "minimum": 1789},
            "default": list(DEFAULT_TERMS),
        },
        "base_url": {"description": "Oyez API base URL.", "type": "string", "default": OYEZ_API},
        "timeout": {"description": "Seconds per HTTP request.", "type": "number", "exclusiveMinimum": 0, "default": 30},
    },
}
