"""Wikipedia's "List of S&P 500 companies" as it stood on a day: the MediaWiki API's revision
query and parsed page, and the constituents table in it."""

from __future__ import annotations

import io
from typing import Any

import pandas as pd

from anachron.sources.base import SourceError


def revision_query(page: str, day: str) -> dict[str, Any]:
    """API parameters for the last revision of ``page`` at or before the end of ``day`` (ISO date)."""
    return {
        "action": "query",
        "prop": "revisions",
        "titles": page,
        "rvlimit": 1,
        "rvdir": "older",
        "rvstart": f"{day}T23:59:59Z",
        "rvprop": "ids|timestamp",
        "format": "json",
        "formatversion": 2,
    }


def latest_revision(response: Any, what: str, hint: str) -> tuple[int, str | None]:
    """``(revid, revision timestamp)`` from the answer to :func:`revision_query`.

    Raises :class:`SourceError` naming ``what`` (and ending with ``hint``) when the answer
    holds no revision (the page may not have existed then) or is not JSON.
    """
    try:
        pages = response.json()["query"]["pages"]
        page = pages[0] if isinstance(pages, list) else next(iter(pages.values()))
        rev = page["revisions"][0]
        return int(rev["revid"]), rev.get("timestamp")
    except (ValueError, KeyError, IndexError, TypeError, StopIteration) as exc:
        raise SourceError(
            f"{what}: no revision found in the API answer ({type(exc).__name__}: {exc}); "
            "the page may not have existed then. " + hint
        ) from exc


def parse_query(revid: int) -> dict[str, Any]:
    """API parameters for the parsed HTML of revision ``revid``."""
    return {"action": "parse", "oldid": revid, "prop": "text", "format": "json", "formatversion": 2}


def revision_table(response: Any, what: str, hint: str) -> tuple[pd.DataFrame, str]:
    """``(first table, page HTML)`` of the answer to :func:`parse_query`.

    The first HTML table is read with :func:`pandas.read_html`; a two-row header is reduced
    to its last row. Raises :class:`SourceError` naming ``what`` (and ending with ``hint``)
    when the answer has no page text or no table can be parsed.
    """
    try:
        text = response.json()["parse"]["text"]
        html = text["*"] if isinstance(text, dict) else text
        tables = pd.read_html(io.StringIO(html))
    except (ValueError, KeyError, TypeError, ImportError) as exc:
        raise SourceError(f"{what}: no HTML table could be parsed ({type(exc).__name__}: {exc}). {hint}") from exc
    table = tables[0]
    if isinstance(table.columns, pd.MultiIndex):
        table.columns = [c[-1] for c in table.columns]
    return table, html
