"""The JSON Schema of the ``sources.scdb`` config block."""

from __future__ import annotations

from typing import Any

from anachron.sources.scdb.layout import DEFAULT_RELEASE, DEFAULT_TERMS

#: JSON Schema of the ``sources.scdb`` config block.
CONFIG_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "default": {},
    "description": "Supreme Court Database release (live: the release zip; snapshot: scdb/SCDB_*_caseCentered_Citation.csv).",
    "properties": {
        "release": {
            "description": "SCDB release, e.g. 2024_01 (terms through 2023).",
            "type": "string",
            "pattern": "^[0-9]{4}_[0-9]{2}$",
            "default": DEFAULT_RELEASE,
        },
        "url": {
            "description": "Release zip URL; null builds it from `release` (SCDB_URL_TEMPLATE).",
            "type": ["string", "null"],
            "default": None,
        },
        "terms": {
            "description": "October Terms to keep.",
            "type": "array",
            "items": {"type": "integer", "minimum": 1789},
            "default": list(DEFAULT_TERMS),
        },
        "timeout": {"description": "Seconds for the download.", "type": "number", "exclusiveMinimum": 0, "default": 120},
    },
}
