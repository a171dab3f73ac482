"""The JSON Schema of the ``sources.courtlistener`` config block."""

from __future__ import annotations

from typing import Any

from anachron.sources.courtlistener.layout import DEFAULT_COURTS, TOKEN_ENV
from anachron.sources.pdf import MAX_CHARS, MAX_PDF_PAGES, PAGE_TIMEOUT

#: JSON Schema of the ``sources.courtlistener`` config block.
CONFIG_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "default": {},
    "description": (
        "CourtListener REST v4 (live mode needs a token in the environment variable named by token_env; "
        "without one the source is an empty table). Snapshot: courts/federal_appellate_opinion_listings.csv."
    ),
    "properties": {
        "token_env": {
            "description": "Name of the environment variable holding the API token (the token itself never goes in config).",
            "type": "string",
            "default": TOKEN_ENV,
        },
        "courts": {
            "description": "CourtListener court ids to search.",
            "type": "array",
            "items": {"type": "string", "pattern": "^[a-z0-9]+$"},
            "minItems": 1,
            "default": list(DEFAULT_COURTS),
        },
        "filed_after": {"description": "Earliest filing date (ISO).", "type": "string", "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$", "default": "2017-01-01"},
        "filed_before": {"description": "Latest filing date (ISO).", "type": "string", "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$", "default": "2024-12-31"},
        "max_cases": {"description": "Most search hits to read (sorted by citation count).", "type": "integer", "minimum": 1, "default": 100},
        "order_by": {"description": "Search ordering.", "type": "string", "default": "citeCount desc"},
        "max_pdf_pages": {"description": "Opinion PDF pages read.", "type": "integer", "minimum": 1, "default": MAX_PDF_PAGES},
        "max_chars": {"description": "Characters of opinion text kept.", "type": "integer", "minimum": 100, "default": MAX_CHARS},
        "max_retries": {"description": "Retries of one request after 429/5xx.", "type": "integer", "minimum": 0, "default": 5},
        "pdf_page_timeout": {"description": "Seconds one PDF page's text extraction may take before the page is skipped (flag 'timeout').", "type": "number", "exclusiveMinimum": 0, "default": PAGE_TIMEOUT},
        "timeout": {"description": "Seconds per HTTP request.", "type": "number", "exclusiveMinimum": 0, "default": 60},
    },
}
