"""Search-results pages of prosportstransactions.com (live mode): their rows, page count and "Next" link."""

from __future__ import annotations

import re
from urllib.parse import urljoin

import lxml.html
import pandas as pd

from anachron.sources.base import SourceError, snapshot_hint
from anachron.sources.prosports.layout import SEARCH_URL, SNAPSHOT_LAYOUT

_PAGES = re.compile(r"page\s+\d+\s+of\s+(\d+)", re.I)
#: Columns of the long rows parsed from live pages (``role``: "acquired" / "relinquished").
LIVE_COLUMNS = ["date", "team", "player", "notes", "role", "origin"]


def parse_search_page(html: str | bytes, url: str = "") -> tuple[pd.DataFrame, int | None, str | None]:
    """Parse one search-results page into long rows; return ``(rows, n_pages, next_url)``.

    ``rows`` has one row per player named in the Acquired or Relinquished cell
    (``"• A • B"`` is two players): ``date, team, player, notes, role`` ("acquired" /
    "relinquished": the player joined or left ``team``), ``origin`` (= ``url``). ``n_pages`` is the total the page states ("Page 1 of 12"), else None;
    ``next_url`` is the absolute URL of a "Next" link, else None.

    Raises:
        SourceError: when the page has no table with Date/Team/Notes headers (an error
            page or an anti-bot challenge instead of results).
    """
    doc = lxml.html.fromstring(html if isinstance(html, (bytes, str)) and html else "<html></html>")
    table = None
    header: list[str] = []
    for t in doc.iter("table"):
        trs = t.findall(".//tr")
        if not trs:
            continue
        cells = [" ".join(c.text_content().split()).lower() for c in trs[0].findall("./td") + trs[0].findall("./th")]
        if {"date", "team", "notes"} <= set(cells):
            table, header = t, cells
            break
    if table is None:
        raise SourceError(
            f"{url or 'page'}: no transactions table (Date/Team/Acquired/Relinquished/Notes) found; the site may "
            "have changed or answered with an anti-bot challenge page. " + snapshot_hint(SNAPSHOT_LAYOUT)
        )
    col = {name: header.index(name) for name in header}
    rows = []
    for tr in table.findall(".//tr")[1:]:
        cells = tr.findall("./td") + tr.findall("./th")
        if len(cells) < len(header):
            continue
        text = [" ".join(c.text_content().split()) for c in cells]
        date, team, notes = text[col["date"]], text[col["team"]], text[col["notes"]]
        for role in ("acquired", "relinquished"):
            if role not in col:
                continue
            for name in text[col[role]].split("•"):
                name = name.strip()
                if name:
                    rows.append(
                        {
                            "date": date,
                            "team": team or None,
                            "player": name,
                            "notes": notes,
                            "role": role,
                            "origin": url,
                        }
                    )
    m = _PAGES.search(doc.text_content())
    n_pages = int(m.group(1)) if m else None
    next_url = None
    for a in doc.iter("a"):
        if a.text_content().strip().lower() in ("next", "next >", "next page", ">") and a.get("href"):
            next_url = urljoin(url or SEARCH_URL, a.get("href"))
            break
    return pd.DataFrame(rows, columns=LIVE_COLUMNS), n_pages, next_url
