"""The JSON Schema of the ``sources.nhl`` config block."""

from __future__ import annotations

from typing import Any

from anachron.sources.spotrac.layout import URL_TEMPLATE

#: JSON Schema of the ``sources.nhl`` config block (the keyword arguments of
#: :func:`~anachron.sources.spotrac.reader.fetch`).
CONFIG_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "default": {},
    "description": "NHL signings from Spotrac free-agent tables (live), or nhl/spotrac_signed_free_agents_*.csv.",
    "properties": {
        "years": {
            "description": "Free-agency years (live: pages to fetch; snapshot: rows to keep); null = 2017 to last year "
            "live, every year in a snapshot.",
            "type": ["array", "null"],
            "items": {"type": "integer", "minimum": 1990},
            "default": None,
        },
        "implausible_aav": {
            "description": "A listed AAV under $100,000 (garbled, e.g. 206): 'recompute' it as value / years "
            "(counted as aav_recomputed) or 'drop' the row (counted as implausible_aav).",
            "type": "string",
            "enum": ["recompute", "drop"],
            "default": "recompute",
        },
        "fa_opening_dates": {
            "description": "Free-agency opening date per year overriding the July 1 fallback, e.g. {'2020': '2020-10-09'}.",
            "type": "object",
            "additionalProperties": {"type": "string", "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"},
            "default": {},
        },
        "url_template": {"description": "Page URL with {year}.", "type": "string", "default": URL_TEMPLATE},
        "pause_s": {
            "description": "Seconds to wait between live pages.",
            "type": "number",
            "minimum": 0,
            "default": 0.0,
        },
    },
}
