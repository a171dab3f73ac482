"""The config block ``tasks.stock`` (JSON Schema with defaults; docs/tasks.md#stock).

Read by :func:`anachron.config.load_schema` through the task registry, beside the task's code like
every task's block.
"""

from __future__ import annotations

from typing import Any

_DAY = {"type": "string", "format": "date", "pattern": "^\\d{4}-\\d{2}-\\d{2}$"}

CONFIG_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "default": {},
    "properties": {
        "seed": {"description": "Seed for sampling company groups (TEMPO uses 42).", "type": "integer", "default": 42},
        "windows": {
            "description": "Return windows; cutoff = the day before start.",
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["name", "split", "start", "end", "n"],
                "properties": {
                    "name": {"type": "string", "pattern": "^[A-Za-z0-9_.-]+$"},
                    "split": {"type": "string", "enum": ["train", "eval", "control"]},
                    "start": dict(_DAY),
                    "end": dict(_DAY),
                    "n": {"type": "integer", "minimum": 1, "description": "instances to sample from this window"},
                    "affected_sectors": {
                        "description": "GICS sectors most affected in the window (sampled with affected_share).",
                        "type": "array",
                        "items": {"type": "string"},
                        "default": [],
                    },
                    "affected_share": {"type": "number", "minimum": 0, "maximum": 1, "default": 0.8},
                },
            },
            "default": [
                {"name": "covid-onset", "split": "eval", "start": "2019-12-01", "end": "2020-06-01", "n": 20,
                 "affected_sectors": ["Energy", "Industrials", "Consumer Discretionary", "Financials", "Real Estate"]},
            ],
        },
    },
}
