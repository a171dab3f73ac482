"""NHL free-agent signings from Spotrac free-agent tables.

Source name ``nhl``. Two ways in, one output (the ``signings`` table of
:data:`anachron.sources.signings.SIGNING_COLUMNS`, ``league = "NHL"``):

* **live** (default): Spotrac's free-agent table for each year
  (``https://www.spotrac.com/nhl/free-agents/_/year/{year}/``), an HTML table with a
  player column and (by header name) position, type (UFA/RFA), from/previous team,
  to/signing team, years, total value and AAV, and sometimes a signing date;
* **snapshot**: ``nhl/spotrac_signed_free_agents_*.csv`` with columns ``player_name``
  (or ``player``), ``signing_team, previous_team, contract_value, aav, contract_years,
  spotrac_year`` and optionally ``position, ufa_rfa_type``.

Dates: the tables carry no signing date, so ``signing_date`` is the league's
free-agency opening day, July 1 of the year (``date_rule`` = "free-agency opening
fallback"), as the TEMPO paper does (App. D). Free agents cannot sign with a new club
before that day, so the fallback is never later than the real signing; in 2020–2022 the
market opened later (the fallback is then conservative: a cutoff before the real one).
Pass ``fa_opening_dates={year: "YYYY-MM-DD"}`` to use other days.

AAV checks (:func:`check_aav`): a listed AAV under $100,000 is not a salary (the snapshot
has values such as 206 or 705 where the real AAV was a round $2,000,000 or $700,000);
a listed AAV more than 5% away from value / years is inconsistent. With
``implausible_aav="recompute"`` (default) a garbled value under $100,000 is replaced by
value / years — AAV's definition — and counted as ``aav_recomputed``; with ``"drop"``
the row is dropped as ``implausible_aav``. Inconsistent values (both plausible) and rows
without a positive value or length are always dropped, with their reason.
"""

from __future__ import annotations

import datetime as dt
import functools
import logging
import os
import re
import time
from collections import Counter
from pathlib import Path
from typing import Any, Iterable, Mapping

import lxml.html
import pandas as pd

from anachron.dates import to_iso
from anachron.frames import is_null, text_or_empty, text_or_none
from anachron.money import MoneyError, parse_money
from anachron.sources.base import (
    SourceError,
    SourceReader,
    check_columns,
    find_snapshot_files,
    read_csv_checked,
    snapshot_hint,
)
from anachron.sources.player_names import normalize_name
from anachron.sources.signings import SIGNING_COLUMNS, finish_signings

log = logging.getLogger(__name__)

LEAGUE = "NHL"
SOURCE = "nhl"
#: Spotrac free-agent table of one year (``{year}`` is filled in).
URL_TEMPLATE = "https://www.spotrac.com/nhl/free-agents/_/year/{year}/"
SNAPSHOT_PATTERN = "nhl/spotrac_signed_free_agents_*.csv"
SNAPSHOT_COLUMNS = ["signing_team", "previous_team", "contract_value", "aav", "contract_years", "spotrac_year"]
PLAYER_COLUMNS = ("player_name", "player")

#: ``date_rule`` of a signing dated by the free-agency opening day.
DATE_RULE_FALLBACK = "free-agency opening fallback"
DATE_RULE_LISTED = "listed signing date"

#: A listed AAV below this (USD) is not a salary.
MIN_PLAUSIBLE_AAV = 100_000.0
#: Largest relative gap between a listed AAV and value / years that still counts as consistent.
AAV_TOLERANCE = 0.05

# Reasons (manifest ``skipped_by_reason`` / ``repaired_by_reason``).
SKIP_NO_CONTRACT_VALUE = "no_contract_value"
SKIP_IMPLAUSIBLE_AAV = "implausible_aav"
SKIP_INCONSISTENT_AAV = "aav_inconsistent"
SKIP_NO_PLAYER = "no_player"
SKIP_NO_TEAM = "no_team"
SKIP_UNSIGNED = "unsigned"
SKIP_BAD_YEAR = "bad_year"
REPAIR_AAV = "aav_recomputed"
DUP_ROW = "duplicate_row"
DUP_PLAYER_YEAR = "duplicate_player_year"

_STATUS = {"UFA": "unrestricted", "RFA": "restricted"}

#: JSON Schema of the ``sources.nhl`` config block (the keyword arguments of :func:`fetch`).
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


def fa_opening_date(year: int, overrides: Mapping[Any, str] | None = None) -> str:
    """ISO date the NHL free-agency period opened in ``year``: July 1 unless overridden."""
    if overrides:
        for k, v in overrides.items():
            if int(k) == int(year):
                return pd.Timestamp(v).date().isoformat()
    return dt.date(int(year), 7, 1).isoformat()


def check_aav(
    listed: Any, value: Any, years: Any, *, mode: str = "recompute"
) -> tuple[float | None, str | None, str | None]:
    """Decide a signing's AAV from the listed AAV, total value and years.

    Returns ``(aav, skip_reason, repair_reason)``: ``aav`` is None exactly when the row
    must be dropped, with ``skip_reason`` one of ``no_contract_value`` (value or years
    missing or not positive), ``implausible_aav`` (listed AAV under $100,000 and
    ``mode="drop"``, or no usable AAV at all), ``aav_inconsistent`` (listed AAV plausible
    but more than 5% from value / years). ``repair_reason`` is ``aav_recomputed`` when a
    garbled listed AAV was replaced by value / years.

    Raises:
        ValueError: for an unknown ``mode`` (use "recompute" or "drop").
    """
    if mode not in ("recompute", "drop"):
        raise ValueError(f"implausible_aav must be 'recompute' or 'drop', got {mode!r}")
    v = pd.to_numeric(value, errors="coerce")
    y = pd.to_numeric(years, errors="coerce")
    a = pd.to_numeric(listed, errors="coerce")
    if pd.isna(v) or pd.isna(y) or v <= 0 or y < 1:
        return None, SKIP_NO_CONTRACT_VALUE, None
    implied = float(v) / float(y)
    if pd.isna(a) or a < MIN_PLAUSIBLE_AAV:
        if mode == "drop" or implied < MIN_PLAUSIBLE_AAV:
            return None, SKIP_IMPLAUSIBLE_AAV, None
        return implied, None, REPAIR_AAV
    if abs(float(a) - implied) > AAV_TOLERANCE * implied:
        return None, SKIP_INCONSISTENT_AAV, None
    return float(a), None, None


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


def signings_from_rows(
    rows: pd.DataFrame,
    *,
    implausible_aav: str = "recompute",
    fa_opening_dates: Mapping[Any, str] | None = None,
) -> tuple[pd.DataFrame, Counter, Counter]:
    """Turn free-agent rows into signings; returns ``(signings, skipped, repaired)``.

    ``rows`` columns: ``player, position, status_code (UFA/RFA), team, previous_team,
    value, aav, years, year, date (ISO or None), origin``. Rows are checked with
    :func:`check_aav`; exact repeats of (player, year, team, value, years) — the snapshot
    lists a player once per position he is filed under — count as ``duplicate_row``;
    a second signing of the same player in the same year as ``duplicate_player_year``.
    """
    skipped: Counter = Counter()
    repaired: Counter = Counter()
    out = []
    seen_rows: set[tuple] = set()
    seen_player_year: set[tuple] = set()
    for r in rows.itertuples(index=False):
        name = " ".join(text_or_empty(r.player).split())
        if not name:
            skipped[SKIP_NO_PLAYER] += 1
            continue
        year = pd.to_numeric(r.year, errors="coerce")
        if pd.isna(year):
            skipped[SKIP_BAD_YEAR] += 1
            continue
        year = int(year)
        team = text_or_none(r.team)
        prev = text_or_none(r.previous_team)
        if team is None:
            skipped[SKIP_UNSIGNED] += 1
            continue
        row_key = (normalize_name(name), year, team, r.value, r.years)
        if row_key in seen_rows:
            skipped[DUP_ROW] += 1
            continue
        seen_rows.add(row_key)
        aav, skip, repair = check_aav(r.aav, r.value, r.years, mode=implausible_aav)
        if aav is None:
            skipped[skip] += 1
            continue
        py = (normalize_name(name), year)
        if py in seen_player_year:
            skipped[DUP_PLAYER_YEAR] += 1
            continue
        seen_player_year.add(py)
        if repair:
            repaired[repair] += 1
        listed_date = r.date if isinstance(r.date, str) and r.date else None
        status = _STATUS.get(str(r.status_code).strip().upper()) if isinstance(r.status_code, str) else None
        years = int(pd.to_numeric(r.years))
        value = float(pd.to_numeric(r.value))
        note = f"{years} years, ${value:,.0f}; listed AAV {r.aav}"
        if repair:
            note += f" (implausible; AAV = value / years = ${aav:,.0f})"
        if isinstance(r.position, str) and r.position:
            note += f"; position {r.position}"
        out.append(
            {
                "league": LEAGUE,
                "player": name,
                "signing_date": listed_date or fa_opening_date(year, fa_opening_dates),
                "team": team,
                "previous_team": prev,
                "team_change": pd.NA if prev is None else prev != team,
                "years": years,
                "total_value": value,
                "aav": aav,
                "status": status,
                "sign_and_trade": False,
                "re_signing": pd.NA if prev is None else prev == team,
                "date_rule": DATE_RULE_LISTED if listed_date else DATE_RULE_FALLBACK,
                "origin": r.origin,
                "note": note,
            }
        )
    table = (
        finish_signings(pd.DataFrame(out, columns=SIGNING_COLUMNS))
        if out
        else finish_signings(pd.DataFrame(columns=SIGNING_COLUMNS))
    )
    return table, skipped, repaired


# ---------------------------------------------------------------------------------------------
# Live tables
# ---------------------------------------------------------------------------------------------

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
    """Parse a Spotrac free-agent page of ``year`` into rows for :func:`signings_from_rows`.

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
        return pd.DataFrame(rows, columns=_ROW_COLUMNS)
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


_ROW_COLUMNS = [
    "player",
    "position",
    "status_code",
    "team",
    "previous_team",
    "value",
    "aav",
    "years",
    "year",
    "date",
    "origin",
]


# ---------------------------------------------------------------------------------------------
# Reader and fetch()
# ---------------------------------------------------------------------------------------------


class NHLSigningsReader(SourceReader):
    """NHL free-agent signings (one ``signings`` table), live from Spotrac or from a snapshot.

    Parameters:
        years: free-agency years to fetch live (default 2017 through last year); in
            snapshot mode, rows of other years are left out (None keeps all).
        session: HTTP session (tests replay recorded pages); None builds one with retries.
        snapshot_dir: directory with :data:`SNAPSHOT_PATTERN`; None falls back to
            ``$ANACHRON_SNAPSHOT_DIR`` and then to live fetching.
        implausible_aav: "recompute" (default) or "drop" (:func:`check_aav`).
        fa_opening_dates: ``{year: ISO date}`` overriding the July 1 fallback.
        url_template: the page URL with ``{year}``.
        pause_s: seconds to wait between live pages.

    After :meth:`read`: :attr:`manifest`, :attr:`skipped_by_reason`,
    :attr:`repaired_by_reason`.
    """

    source = SOURCE
    snapshot_layout = SNAPSHOT_PATTERN

    def __init__(
        self,
        years: Iterable[int] | None = None,
        *,
        session: Any = None,
        snapshot_dir: str | os.PathLike[str] | None = None,
        implausible_aav: str = "recompute",
        fa_opening_dates: Mapping[Any, str] | None = None,
        url_template: str = URL_TEMPLATE,
        pause_s: float = 0.0,
    ) -> None:
        super().__init__(session=session, snapshot_dir=snapshot_dir)
        self.years = None if years is None else sorted({int(y) for y in years})
        if implausible_aav not in ("recompute", "drop"):
            raise ValueError(f"implausible_aav must be 'recompute' or 'drop', got {implausible_aav!r}")
        self.implausible_aav = implausible_aav
        self.fa_opening_dates = dict(fa_opening_dates or {})
        self.url_template = url_template
        self.pause_s = float(pause_s)
        self.skipped_by_reason: Counter = Counter()
        self.repaired_by_reason: Counter = Counter()

    def _signings(self, rows: pd.DataFrame) -> pd.DataFrame:
        """Check and de-duplicate the rows of either mode; returns the ``signings`` table."""
        table, skipped, repaired = signings_from_rows(
            rows, implausible_aav=self.implausible_aav, fa_opening_dates=self.fa_opening_dates
        )
        self.skipped_by_reason = Counter({k: int(v) for k, v in sorted(skipped.items()) if v})
        self.repaired_by_reason = Counter({k: int(v) for k, v in sorted(repaired.items()) if v})
        log.info("NHL signings: %d (skipped %s, repaired %s)", len(table), dict(skipped), dict(repaired))
        return table

    def _manifest_extra(self, table: pd.DataFrame) -> dict[str, Any]:
        return {
            "repaired_by_reason": dict(self.repaired_by_reason),
            "implausible_aav": self.implausible_aav,
            "date_rules": {k: int(v) for k, v in table["date_rule"].value_counts().items()},
            "rows": int(len(table)),
        }

    def _read_live(self, session: Any) -> pd.DataFrame:
        years = self.years or list(range(2017, dt.date.today().year))
        frames = []
        for i, year in enumerate(years):
            url = self.url_template.format(year=year)
            resp = self._get(session, url, what=f"Spotrac NHL free agents {year}")
            rows = parse_free_agent_table(resp.content, year, url)
            frames.append(rows)
            self._record_bytes(url, resp.content, len(rows), year=year)
            if self.pause_s and i + 1 < len(years):
                time.sleep(self.pause_s)
        return self._signings(pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=_ROW_COLUMNS))

    def _read_snapshot(self, snap: Path) -> pd.DataFrame:
        frames = []
        for path in find_snapshot_files(snap, SNAPSHOT_PATTERN):
            rel = path.relative_to(snap).as_posix()
            raw = read_csv_checked(
                path, SNAPSHOT_COLUMNS, name=str(path), dtype="str", keep_default_na=False, na_values=["", "NA"]
            )
            player_col = next((c for c in PLAYER_COLUMNS if c in raw.columns), None)
            if player_col is None:
                check_columns(raw, ["player_name"], str(path))
            if self.years is not None:
                raw = raw[pd.to_numeric(raw["spotrac_year"], errors="coerce").isin(self.years)]
            frames.append(
                pd.DataFrame(
                    {
                        "player": raw[player_col],
                        "position": raw["position"] if "position" in raw.columns else None,
                        "status_code": raw["ufa_rfa_type"] if "ufa_rfa_type" in raw.columns else None,
                        "team": raw["signing_team"],
                        "previous_team": raw["previous_team"],
                        "value": raw["contract_value"],
                        "aav": raw["aav"],
                        "years": raw["contract_years"],
                        "year": raw["spotrac_year"],
                        "date": None,
                        "origin": [f"snapshot:{rel}#row={i + 2}" for i in raw.index],
                    }
                )
            )
            self._record_file(path, len(raw))
        return self._signings(pd.concat(frames, ignore_index=True))


def fetch(
    *, snapshot_dir: str | os.PathLike[str] | None = None, session: Any = None, **params: Any
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The ``nhl`` source: NHL free-agent signings and their manifest.

    ``params`` are :class:`NHLSigningsReader` keyword arguments (``years``,
    ``implausible_aav``, ``fa_opening_dates``, ``url_template``, ``pause_s``).

    Returns:
        ``(signings, manifest)``: the table of
        :data:`~anachron.sources.signings.SIGNING_COLUMNS` and ``{"sources": [...],
        "skipped_by_reason": {...}, "repaired_by_reason": {...}, "implausible_aav": mode,
        "date_rule": ..., "rows": n}``.

    Raises:
        SourceError: when a page or file cannot be fetched or read (a missing column names
            the file and the column).
        ValueError: for a bad ``implausible_aav``; TypeError for an unknown parameter.
    """
    return NHLSigningsReader(session=session, snapshot_dir=snapshot_dir, **params).fetch()
