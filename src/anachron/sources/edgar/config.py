"""The JSON Schema of the ``sources.edgar`` config block."""

from __future__ import annotations

from typing import Any

from anachron.sources.edgar.layout import MIN_INTERVAL, USER_AGENT_ENV

#: JSON Schema of the ``sources.edgar`` config block (``enabled`` steers the workflow, the other
#: keys are the keyword arguments of :func:`~anachron.sources.edgar.reader.fetch`).
CONFIG_SCHEMA: dict[str, Any] = {
    "description": (
        "SEC XBRL company facts (point-in-time, with revisions), used for verification and restatements. "
        f"Live fetching needs a User-Agent with a contact e-mail in the environment variable {USER_AGENT_ENV} "
        "(checked before any job starts).\n"
    ),
    "type": "object",
    "additionalProperties": False,
    "default": {},
    "properties": {
        "enabled": {
            "description": (
                f"Fetch or import the facts. null (auto) = when a snapshot is used or {USER_AGENT_ENV} is set; "
                "true = always (live mode then requires the User-Agent before any job starts).\n"
            ),
            "type": ["boolean", "null"],
            "default": None,
        },
        "ciks": {
            "description": "Companies by CIK; null = the four in the snapshot (Apple, NVIDIA, Tesla, Alphabet).",
            "type": ["array", "null"],
            "items": {"type": ["integer", "string"]},
            "default": None,
        },
        "min_interval": {
            "type": "number",
            "minimum": 0.1,
            "default": MIN_INTERVAL,
            "description": "Seconds between live requests (SEC allows 10/s).",
        },
        "derive_q4": {
            "type": "boolean",
            "default": True,
            "description": (
                "Add fourth quarters of monetary flow concepts as fiscal year minus nine months (marked derived) "
                "where no filing reports them."
            ),
        },
    },
}
