"""Live Spotrac free-agent pages: the HTML table read into free-agent rows, contract cells in USD."""

from __future__ import annotations

import functools
import logging
import re
from typing import Any

import lxml.html
import pandas as pd

from anachron.dates import to_iso
from anachron.frames import is_null
from anachron.money import MoneyError, parse_money
from anachron.sources.base import SourceError, snapshot_hint
from anachron.sources.spotrac.contracts import ROW_COLUMNS
from anachron.sources.spotrac.layout import SNAPSHOT_PATTERN

log = logging.getLogger(__name__)


def _money(text: Any) -> float | None:
    """A contract cell in USD (:func:`anachron.money.parse_money`): "$8,200,000" -> 8200000.0,
    "$4.5M" -> 4500000.0; "-", "", a cell that is not one dollar amount -> None (logged)."""
    if is_null(text) or str(text).strip() in ("", "-", "—"):
        return None
    try:
        money = parse_money(str(text))
    except MoneyError as exc:
        log.warning("Spotrac: contract cell %r not read: %s", text, exc.reason)
        return None
    return money.value if money.currency in (None, "USD") and money.value >= 0 else None


#: Header keywords -> field (first match wins, checked in this order).
_HEADER_FIELDS: list[tuple[str, re.Pattern[str]]] = [
    ("player", re.compile(r"^player")),
    ("position", re.compile(r"^pos")),
    ("status_code", re.compile(r"^type$|^status$|^fa type")),
    ("previous_team", re.compile(r"^from\b|^prev|^old team|^former")),
    ("team", re.compile(r"^to\b|^signed with|^new team|^team$|^signing team")),
    ("years", re.compile(r"^yrs$|^years?$|^length")),
    ("aav", re.compile(r"^aav|^avg|^average")),
    ("value", re.compile(r"^value|^total|^dollars|^contract value")),
    ("date", re.compile(r"^signed$|^date|^signed on|^signing date")),
]


def parse_free_agent_table(html: str | bytes, year: int, url: str = "") -> pd.DataFrame:
    """Parse a Spotrac free-agent page of ``year`` into rows for
    :func:`~anachron.sources.spotrac.contracts.signings_from_rows`.

    The table is the first whose header names a player column and a value or AAV
    column; columns are found by header name (:data:`_HEADER_FIELDS`), so their order
    and extra columns (age, experience, ...) do not matter. The player's name is the text
    of the link in the player cell when there is one. A "signed" date column, if
    present, is parsed into ISO dates.

    Raises:
        SourceError: when no such table exists on the page.
    """
    doc = lxml.html.fromstring(html or "<html></html>")
    for table in doc.iter("table"):
        head = table.find(".//thead")
        header_row = head.find(".//tr") if head is not None else table.find(".//tr")
        if header_row is None:
            continue
        headers = [
            " ".join(c.text_content().split()).lower() for c in header_row.findall("./th") + header_row.findall("./td")
        ]
        colmap: dict[str, int] = {}
        for i, h in enumerate(headers):
            h_clean = re.sub(r"\s*\(\d+\)\s*$", "", h)
            for field, pat in _HEADER_FIELDS:
                if field not in colmap and pat.search(h_clean):
                    colmap[field] = i
                    break
        if "player" not in colmap or not ({"value", "aav"} & set(colmap)):
            continue
        body = table.find(".//tbody")
        trs = (body if body is not None else table).findall(".//tr")
        rows = []
        for tr in trs:
            if tr is header_row:
                continue
            cells = tr.findall("./td")
            if len(cells) < len(headers):
                continue
            pc = cells[colmap["player"]]
            links = pc.findall(".//a")
            name = " ".join((links[0].text_content() if links else pc.text_content()).split())

            cell = functools.partial(_cell_text, cells, colmap)
            date = cell("date")
            if date:
                date = to_iso(date, lenient=True)
            yrs = cell("years")
            rows.append(
                {
                    "player": name,
                    "position": cell("position"),
                    "status_code": cell("status_code"),
                    "team": cell("team"),
                    "previous_team": cell("previous_team"),
                    "value": _money(cell("value")),
                    "aav": _money(cell("aav")),
                    "years": pd.to_numeric(re.sub(r"[^0-9]", "", yrs or ""), errors="coerce") if yrs else None,
                    "year": int(year),
                    "date": date,
                    "origin": url,
                }
            )
        return pd.DataFrame(rows, columns=ROW_COLUMNS)
    raise SourceError(
        f"{url or 'page'}: no free-agent table with player and value/AAV columns found; Spotrac may have "
        "changed its layout or blocked the request. " + snapshot_hint(SNAPSHOT_PATTERN)
    )


def _cell_text(cells: list, colmap: dict[str, int], field: str) -> str | None:
    """Whitespace-normalised text of ``field``'s cell; None when absent or a dash."""
    if field not in colmap:
        return None
    txt = " ".join(cells[colmap[field]].text_content().split())
    return txt if txt and txt not in ("-", "—", "N/A") else None
