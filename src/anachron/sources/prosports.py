"""NBA free-agent contracts from dated transaction notes (prosportstransactions.com).

Source name ``nba``. Two ways in, one output:

* **live** (default): the search-results pages of prosportstransactions.com
  (``/basketball/Search/SearchResults.php``, player movement, 25 rows a page, paged with
  ``start=``), each a table ``Date | Team | Acquired | Relinquished | Notes``;
* **snapshot**: ``nba/prosports_transactions_*.csv`` (the same notes flattened to
  ``date,team,player,notes[,season]``) plus the dated signings in
  ``nba/actual_contracts_*.csv`` (``player,Years,Total Value,date[,source]``) and, when
  present, ``nba/bbref_player_season_info.csv`` (``season,player,team``) to tell the
  teams of signings the transaction notes do not cover (the 2023 offseason).

Each contract note ("signed unrestricted free agent to a 4-year $136.5M contract") becomes
one signing; every other note (two-way, 10-day, rest-of-season, qualifying offer, waived,
released, options, extensions, draft picks, ...) is skipped and counted by reason
(:func:`parse_note`). The previous team is the team of the player's latest earlier
transaction (the snapshot file has no trades, so there the team he left is the one that
last recorded a move for him: "player became an unrestricted free agent", a qualifying
offer, a waiver; live pages include trade rows).

Output (:data:`SIGNING_COLUMNS`), one row per (player, signing year)::

    league          str      "NBA"
    player          str      display name (the last alias of "A / B", no "(b. ...)" tags)
    signing_date    str      ISO date of the note or the earlier announcement; None if unknown
    team            str      team nickname that signed him ("Heat"); None if unknown
    previous_team   str      team of his latest earlier transaction; None if unknown
    team_change     boolean  previous_team != team (franchise-normalised); <NA> if either unknown
    years           Int64    contract length in years
    total_value     float64  total value, USD
    aav             float64  total_value / years, USD
    status          str      "unrestricted" / "restricted" / None
    sign_and_trade  bool     signed and traded (stated in the note or inferred, see below)
    re_signing      boolean  signed by the team he was with ("re-signed"); <NA> if unknown
    date_rule       str      how signing_date was chosen
    origin          str      "snapshot:<file>#row=<n>" or the page URL (several joined by " + ")
    note            str      the transaction note (or a summary of the contract row)

Sign-and-trades (the snapshot's notes have no trades, so most show up there as a plain
"re-signed ..." with the old team): flagged when the note says so ("sign-and-trade",
"signed and traded") or a contract list's source link does; or inferred when a re-signing
is followed, within ``sign_and_trade_days`` (default 90, the NBA's three-month bar on
trading a re-signed player), by a transaction of the player with another team that is not
an acquisition (not "signed ..."/"claimed ..."); or, with season rosters, when the player
played the following season for one other team only (:func:`infer_sign_and_trades`).
Then ``team`` is the receiving team, ``previous_team`` the one that re-signed him and
``team_change`` is True. A sign-and-trade with no later trace stays a re-signing
(a known gap: e.g. a player who missed the next season).
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import re
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable
from urllib.parse import urljoin

import lxml.html
import pandas as pd

from anachron.money import scan_money
from anachron.sources.base import (
    SourceError,
    SourceReader,
    check_columns,
    find_snapshot_files,
    read_csv_checked,
    snapshot_hint,
)
from anachron.sources.player_names import PARENTHESES, normalize_name
from anachron.sources.signings import SIGNING_COLUMNS, finish_signings

log = logging.getLogger(__name__)

LEAGUE = "NBA"
SOURCE = "nba"
#: Search-results page of prosportstransactions.com (basketball).
SEARCH_URL = "https://www.prosportstransactions.com/basketball/Search/SearchResults.php"
#: Rows per search-results page on the site.
PAGE_SIZE = 25

TRANSACTIONS_PATTERN = "nba/prosports_transactions_*.csv"
CONTRACTS_PATTERN = "nba/actual_contracts_*.csv"
SEASONS_FILE = "nba/bbref_player_season_info.csv"
SNAPSHOT_LAYOUT = f"{TRANSACTIONS_PATTERN} (and optionally {CONTRACTS_PATTERN}, {SEASONS_FILE})"

TRANSACTION_COLUMNS = ["date", "team", "player", "notes"]
CONTRACT_COLUMNS = ["player", "Years", "Total Value", "date"]
SEASON_COLUMNS = ["season", "player", "team"]

# --- skip reasons (fixed codes; counted in the manifest's ``skipped_by_reason``) -------------
SKIP_TWO_WAY = "two_way"
SKIP_TEN_DAY = "ten_day"
SKIP_REST_OF_SEASON = "rest_of_season"
SKIP_EXHIBIT = "exhibit_or_camp"
SKIP_QUALIFYING_OFFER = "qualifying_offer"
SKIP_CLAIMED = "claimed_off_waivers"
SKIP_WAIVED = "waived"
SKIP_RELEASED = "released"
SKIP_OPTION = "contract_option"
SKIP_GUARANTEE = "guarantee"
SKIP_FA_STATUS = "free_agent_status"
SKIP_RETIRED = "retired"
SKIP_OTHER_LEAGUE = "other_league"
SKIP_DRAFT_PICK = "draft_pick"
SKIP_EXTENSION = "extension"
SKIP_CONVERSION = "conversion"
SKIP_NO_YEARS = "no_years"
SKIP_NO_AMOUNT = "no_amount"
SKIP_AMBIGUOUS_AMOUNT = "ambiguous_amount"  # "$22,5M": a decimal comma? (anachron.money.read_number)
SKIP_IMPLAUSIBLE = "implausible_amount"
SKIP_NOT_CONTRACT = "not_a_contract"
SKIP_NO_PLAYER = "no_player"
SKIP_NO_TEAM = "no_team"
SKIP_BAD_DATE = "bad_date"
SKIP_NO_CONTRACT_VALUE = "no_contract_value"
DUP_ROW = "duplicate_row"
DUP_PLAYER_YEAR = "duplicate_player_year"

CONTRACT = "contract"

#: Ordered rules: the first pattern that matches a note names its skip reason.
_SKIP_RULES: list[tuple[str, re.Pattern[str]]] = [
    (SKIP_TWO_WAY, re.compile(r"two[- ]way", re.I)),
    (SKIP_TEN_DAY, re.compile(r"\b(?:10|ten)[- ]day\b", re.I)),
    (SKIP_REST_OF_SEASON, re.compile(r"remainder of (?:the )?season|rest[- ]of[- ](?:the[- ])?season", re.I)),
    (SKIP_EXHIBIT, re.compile(r"\bexhibit\s*\d+|\bsummer contract\b|\btraining camp\b", re.I)),
    (SKIP_QUALIFYING_OFFER, re.compile(r"qualifying offer", re.I)),
    (SKIP_CLAIMED, re.compile(r"claimed off waivers", re.I)),
    (SKIP_WAIVED, re.compile(r"\bwaived\b", re.I)),
    (SKIP_RELEASED, re.compile(r"\breleased\b|\bbought out\b", re.I)),
    (SKIP_OPTION, re.compile(r"\b(?:exercised|declined|picked up)\b.*\boption\b", re.I)),
    (SKIP_GUARANTEE, re.compile(r"^team (?:partially |fully )?guaranteed\b", re.I)),
    (
        SKIP_FA_STATUS,
        re.compile(
            r"became (?:an? )?(?:unrestricted |restricted )?free agent|\brenounced\b|lost restricted free agent", re.I
        ),
    ),
    (SKIP_RETIRED, re.compile(r"\bretire", re.I)),
    (SKIP_OTHER_LEAGUE, re.compile(r"^signed (?:with|by)\b", re.I)),
    (SKIP_DRAFT_PICK, re.compile(r"round pick|\bundrafted\b|\bdraft pick\b|\brookie scale\b", re.I)),
    (SKIP_EXTENSION, re.compile(r"\bextension\b", re.I)),
    (SKIP_CONVERSION, re.compile(r"^convert", re.I)),
]
_SIGNED = re.compile(r"^\s*(?P<re>re-?)?signed\b", re.I)
_YEARS = re.compile(r"\b(?P<years>\d{1,2})(?:/\d{1,2})?[- ]years?\b", re.I)
#: "#36M": a typo on the site for "$36M".
_HASH_DOLLAR = re.compile(r"#(?=\s?\d)")
#: A figure whose separators :func:`anachron.money.read_number` refuses ("$22,5M", "$1.2.3M").
_AMBIGUOUS_AMOUNT = re.compile(r"[$#]\s?\d+(?:,\d{1,2}(?!\d)|,\d{4,}|\.\d+[.,]\d)")
#: Between the two ends of a range ("$70-72M", "$3/5M").
_RANGE_SEP = re.compile(r"\s*[-/]\s*")
#: A second figure after a slash ("$3M/$5M", "$3M / 2 years, $5M").
_SECOND_FIGURE = re.compile(r"\s*/\s*(?:\d+[- ]years?,?\s*)?\$")
_SIGN_AND_TRADE = re.compile(r"sign(?:ed)?[- ]and[- ]trade(?:d)?", re.I)
_SNT_TEAM = re.compile(
    r"sign(?:ed)?[- ]and[- ]trade(?:d)?\s+(?:with|to)\s+(?:the\s+)?(?P<team>[0-9]*[A-Z][A-Za-z0-9]*(?:\s+[A-Z][A-Za-z]+)?)"
)
_UNRESTRICTED = re.compile(r"\bunrestricted free agent", re.I)
_RESTRICTED = re.compile(r"(?<!un)restricted free agent", re.I)
_ACQUISITION = re.compile(r"^\s*(?:signed|claimed)\b", re.I)

#: Plausible bounds of a contract (USD, years).
MIN_TOTAL_VALUE = 100_000.0
MAX_YEARS = 10

#: Franchise aliases -> the nickname used for the franchise now.
TEAM_ALIASES = {"Bobcats": "Hornets", "Trail Blazers": "Blazers", "Sixers": "76ers", "Seventy Sixers": "76ers"}

#: Basketball-Reference team codes -> prosportstransactions nicknames.
BBREF_TEAMS = {
    "ATL": "Hawks", "BOS": "Celtics", "BRK": "Nets", "NJN": "Nets", "CHO": "Hornets", "CHA": "Hornets",
    "CHH": "Hornets", "CHI": "Bulls", "CLE": "Cavaliers", "DAL": "Mavericks", "DEN": "Nuggets",
    "DET": "Pistons", "GSW": "Warriors", "HOU": "Rockets", "IND": "Pacers", "LAC": "Clippers",
    "LAL": "Lakers", "MEM": "Grizzlies", "VAN": "Grizzlies", "MIA": "Heat", "MIL": "Bucks",
    "MIN": "Timberwolves", "NOP": "Pelicans", "NOH": "Pelicans", "NOK": "Pelicans", "NYK": "Knicks",
    "OKC": "Thunder", "SEA": "Thunder", "ORL": "Magic", "PHI": "76ers", "PHO": "Suns", "POR": "Blazers",
    "SAC": "Kings", "SAS": "Spurs", "TOR": "Raptors", "UTA": "Jazz", "WAS": "Wizards",
}  # fmt: skip
_BBREF_MULTI = re.compile(r"^(?:TOT|\dTM)$")


#: JSON Schema of the ``sources.nba`` config block (the keyword arguments of :func:`fetch`).
CONFIG_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "default": {},
    "description": (
        "NBA signings from prosportstransactions.com notes (live), or from nba/prosports_transactions_*.csv, "
        "nba/actual_contracts_*.csv and nba/bbref_player_season_info.csv in a snapshot."
    ),
    "properties": {
        "start": {
            "description": "First transaction date to fetch live (history before the 2019 signings gives previous teams).",
            "type": "string",
            "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$",
            "default": "2016-07-01",
        },
        "end": {
            "description": "Last transaction date to fetch live; null = today.",
            "type": ["string", "null"],
            "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$",
            "default": None,
        },
        "sign_and_trade_days": {
            "description": "A re-signing followed within this many days by a non-acquisition move to another team "
            "is a sign-and-trade (the NBA bars trading a re-signed player for three months).",
            "type": "integer",
            "minimum": 0,
            "default": 90,
        },
        "status_lookback_days": {
            "description": "How far back (days) an earlier note may supply the unrestricted/restricted status.",
            "type": "integer",
            "minimum": 0,
            "default": 183,
        },
        "use_contract_lists": {
            "description": "Snapshot: merge the dated signings of nba/actual_contracts_*.csv.",
            "type": "boolean",
            "default": True,
        },
        "use_season_rosters": {
            "description": "Snapshot: use nba/bbref_player_season_info.csv for contract-list teams and sign-and-trades.",
            "type": "boolean",
            "default": True,
        },
        "base_url": {"description": "Search-results page URL.", "type": "string", "default": SEARCH_URL},
        "max_pages": {
            "description": "Most result pages to read live.",
            "type": "integer",
            "minimum": 1,
            "default": 5000,
        },
        "pause_s": {
            "description": "Seconds to wait between live pages.",
            "type": "number",
            "minimum": 0,
            "default": 0.0,
        },
    },
}


# ---------------------------------------------------------------------------------------------
# Note parsing
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ParsedNote:
    """What one transaction note says.

    Attributes:
        kind: :data:`CONTRACT` or a skip-reason code (``two_way``, ``waived``, ...).
        years: contract length (contracts only).
        total_value: total value in USD (contracts only); for a range ("$70-72M") or two
            figures ("$73M / $78M", base / with incentives or option) the first, lower one.
        status: "unrestricted" / "restricted" when the note names it, else None.
        re_signing: the note reads "re-signed".
        sign_and_trade: the note states a sign-and-trade.
        sign_and_trade_team: the other team named with the sign-and-trade, if any.
        value_rule: "exact", or "first of several figures" when the note gives a range or
            alternatives.
    """

    kind: str
    years: int | None = None
    total_value: float | None = None
    status: str | None = None
    re_signing: bool = False
    sign_and_trade: bool = False
    sign_and_trade_team: str | None = None
    value_rule: str | None = None

    @property
    def is_contract(self) -> bool:
        return self.kind == CONTRACT


def parse_money(text: str) -> tuple[float, bool] | None:
    """The first dollar amount in ``text`` in USD, and whether it was one of several figures.

    "$136.5M" -> 136_500_000; "$898K" -> 898_000; "$1,620,564" -> 1_620_564;
    "$70-72M" and "$3/5M" take the lower bound (a range: flag True); so does "$3M/$5M" (the
    first figure). "#36M" (a typo on the site) reads as "$36M". Amounts are read by
    :func:`anachron.money.scan_money`; one with ambiguous separators is not an amount. Returns
    None when no amount is present.
    """
    text = _HASH_DOLLAR.sub("$", text)
    amounts = scan_money(text)
    for i, m in enumerate(amounts):
        if not (m.currency_before and m.currency == "USD"):
            continue
        nxt = amounts[i + 1] if i + 1 < len(amounts) else None
        if m.unit is None and nxt is not None and not nxt.currency_after and _RANGE_SEP.fullmatch(text[m.end : nxt.start]):
            return m.value * nxt.scale, True  # a range: the lower bound, in the upper bound's unit
        return m.value, bool(_SECOND_FIGURE.match(text, m.end))
    return None


def parse_note(note: Any) -> ParsedNote:
    """Classify one prosportstransactions note; parse it when it is a contract signing.

    A contract is a note that starts with "signed"/"re-signed" and states a length in
    years and a dollar amount before the word "contract", e.g.
    "signed unrestricted free agent to a 4-year $136.5M contract" or
    "re-signed restricted free agent to a 3-year, $10M contract". Everything else gets a
    skip code, tested in this order: two-way, 10-day, rest-of-season, Exhibit 9/10 or camp
    deals, qualifying offers, waiver claims, waivers, releases, option decisions,
    guarantees, free-agent status changes, retirements, signings abroad, draft-pick and
    rookie deals, extensions, conversions; then signings without years (``no_years``) or
    without an amount (``no_amount``) or with one whose separators are ambiguous
    (``ambiguous_amount``: "$22,5M"), implausible amounts (total under $100K, over 10
    years) and any other note (``not_a_contract``).

    Never raises; a missing or blank note is ``not_a_contract``.
    """
    text = "" if note is None or (isinstance(note, float) and pd.isna(note)) else str(note).strip()
    if not text:
        return ParsedNote(SKIP_NOT_CONTRACT)
    status = "unrestricted" if _UNRESTRICTED.search(text) else "restricted" if _RESTRICTED.search(text) else None
    snt = bool(_SIGN_AND_TRADE.search(text))
    snt_team_m = _SNT_TEAM.search(text)
    snt_team = canonical_team(snt_team_m["team"]) if snt_team_m else None
    signed = _SIGNED.match(text)
    re_signing = bool(signed and signed["re"])
    for reason, pattern in _SKIP_RULES:
        if pattern.search(text):
            return ParsedNote(reason, status=status, re_signing=re_signing, sign_and_trade=snt)
    if signed is None:
        return ParsedNote(SKIP_NOT_CONTRACT, status=status, sign_and_trade=snt)
    ym = _YEARS.search(text)
    if ym is None:
        return ParsedNote(SKIP_NO_YEARS, status=status, re_signing=re_signing, sign_and_trade=snt)
    years = int(ym["years"])
    end = text.lower().find("contract", ym.end())
    segment = text[ym.end() : end if end != -1 else len(text)]
    money = parse_money(segment)
    if money is None:
        reason = SKIP_AMBIGUOUS_AMOUNT if _AMBIGUOUS_AMOUNT.search(segment) else SKIP_NO_AMOUNT
        return ParsedNote(reason, years=years, status=status, re_signing=re_signing, sign_and_trade=snt)
    value, several = money
    if not (1 <= years <= MAX_YEARS) or value < MIN_TOTAL_VALUE:
        return ParsedNote(SKIP_IMPLAUSIBLE, years=years, total_value=value, status=status, re_signing=re_signing)
    return ParsedNote(
        CONTRACT,
        years=years,
        total_value=value,
        status=status,
        re_signing=re_signing,
        sign_and_trade=snt,
        sign_and_trade_team=snt_team,
        value_rule="first of several figures" if several else "exact",
    )


# ---------------------------------------------------------------------------------------------
# Names and teams
# ---------------------------------------------------------------------------------------------

def player_aliases(raw: Any) -> list[str]:
    """The aliases of a prosports player cell ("Edrice Adebayo / Bam Adebayo"), cleaned, in order."""
    s = "" if raw is None or (isinstance(raw, float) and pd.isna(raw)) else str(raw)
    out = []
    for part in s.replace("•", "/").split("/"):
        part = " ".join(PARENTHESES.sub(" ", part).split())
        if part:
            out.append(part)
    return out


def display_name(raw: Any) -> str:
    """The name to show: the last alias ("Bam Adebayo"), without "(James)" / "(b. ...)" tags."""
    aliases = player_aliases(raw)
    return aliases[-1] if aliases else ""


def player_keys(raw: Any) -> frozenset[str]:
    """Normalised keys of every alias of a player cell (used to match other tables)."""
    return frozenset(k for k in (normalize_name(a) for a in player_aliases(raw)) if k)


def canonical_team(team: Any) -> str | None:
    """Franchise-normalised team nickname ("Bobcats" -> "Hornets"); None for blank."""
    if team is None or (isinstance(team, float) and pd.isna(team)):
        return None
    t = " ".join(str(team).split())
    if not t:
        return None
    return TEAM_ALIASES.get(t, t)


# ---------------------------------------------------------------------------------------------
# Contracts from a transaction table
# ---------------------------------------------------------------------------------------------


def _empty_signings() -> pd.DataFrame:
    return finish_signings(pd.DataFrame({c: [] for c in SIGNING_COLUMNS}))


def _team_change(prev: str | None, team: str | None) -> Any:
    if prev is None or team is None:
        return pd.NA
    return prev != team


def contracts_from_transactions(
    tx: pd.DataFrame,
    *,
    sign_and_trade_days: int = 90,
    status_lookback_days: int = 183,
) -> tuple[pd.DataFrame, Counter]:
    """Signings parsed from a long transaction table; returns ``(signings, skipped_by_reason)``.

    Args:
        tx: one row per (date, team, player, note): columns ``date`` (ISO string or
            datetime), ``team``, ``player``, ``notes`` and ``origin`` (where the row came
            from, e.g. ``snapshot:<file>#row=12`` or the page URL).
        sign_and_trade_days: a re-signing followed within this many days by a
            non-acquisition transaction of the player with another team is a
            sign-and-trade (module docstring).
        status_lookback_days: when the contract note does not say "unrestricted" /
            "restricted", the latest such status note of the player at most this many days
            earlier supplies it.

    Returns:
        ``signings`` with :data:`SIGNING_COLUMNS` (not yet de-duplicated by player-year)
        and a :class:`collections.Counter` of skipped notes by reason; exact duplicate
        rows count as ``duplicate_row``.

    Raises:
        SourceError: when ``tx`` lacks a required column.
    """
    check_columns(tx, TRANSACTION_COLUMNS + ["origin"], "transaction table")
    skipped: Counter = Counter()
    df = tx.copy()
    dup = df.duplicated(subset=TRANSACTION_COLUMNS, keep="first")
    skipped[DUP_ROW] += int(dup.sum())
    df = df.loc[~dup]
    dates = pd.to_datetime(df["date"], errors="coerce")
    bad = dates.isna()
    skipped[SKIP_BAD_DATE] += int(bad.sum())
    df = df.loc[~bad].assign(_date=dates[~bad].dt.normalize())
    no_player = df["player"].isna() | (df["player"].astype("str").str.strip() == "")
    skipped[SKIP_NO_PLAYER] += int(no_player.sum())
    df = df.loc[~no_player]
    df = df.assign(
        _player=df["player"].astype("str").str.strip(),
        _team=[canonical_team(t) for t in df["team"]],
        _parsed=[parse_note(n) for n in df["notes"]],
    )
    df = df.reset_index(drop=True)
    df["_seq"] = range(len(df))
    # Same-day rows: a player's "Relinquished" row (the team he left) before his "Acquired" row.
    role = df["role"] if "role" in df.columns else pd.Series(None, index=df.index, dtype="object")
    df["_role"] = role.map({"relinquished": 0, "acquired": 2}).fillna(1)
    df = df.sort_values(["_player", "_date", "_role", "_seq"], kind="mergesort")

    rows: list[dict[str, Any]] = []
    for player, hist in df.groupby("_player", sort=False):
        hist = hist.reset_index(drop=True)
        for i, r in hist.iterrows():
            p: ParsedNote = r["_parsed"]
            if not p.is_contract:
                skipped[p.kind] += 1
                continue
            team = r["_team"]
            if team is None:
                skipped[SKIP_NO_TEAM] += 1
                continue
            day = r["_date"]
            earlier = hist[
                ((hist["_date"] < day) | ((hist["_date"] == day) & ~hist["_parsed"].map(lambda q: q.is_contract)))
                & hist["_team"].notna()
                & (hist.index != i)
            ]
            prev = earlier["_team"].iloc[-1] if len(earlier) else None
            status = p.status
            if status is None:
                lookback = earlier[earlier["_date"] >= day - pd.Timedelta(days=status_lookback_days)]
                for q in reversed(lookback["_parsed"].tolist()):
                    if q.status is not None:
                        status = q.status
                        break
            snt = p.sign_and_trade
            note = str(r["notes"])
            if p.re_signing:
                later = hist[(hist["_date"] > day) & hist["_team"].notna()]
                if snt and p.sign_and_trade_team and p.sign_and_trade_team != team:
                    prev, team = team, p.sign_and_trade_team
                elif len(later):
                    nxt = later.iloc[0]
                    within = (nxt["_date"] - day).days <= sign_and_trade_days
                    if nxt["_team"] != team and within and not _ACQUISITION.match(str(nxt["notes"])):
                        prev, team, snt = team, nxt["_team"], True
                        note += f" [sign-and-trade inferred: with {team} on {nxt['_date'].date().isoformat()}]"
                    elif snt:
                        prev, team = team, None
                elif snt:
                    prev, team = team, None
            change = True if (snt and prev is not None) else _team_change(prev, team)
            rows.append(
                {
                    "league": LEAGUE,
                    "player": display_name(player),
                    "signing_date": day.date().isoformat(),
                    "team": team,
                    "previous_team": prev,
                    "team_change": change,
                    "years": p.years,
                    "total_value": p.total_value,
                    "aav": p.total_value / p.years,
                    "status": status,
                    "sign_and_trade": snt,
                    "re_signing": p.re_signing,
                    "date_rule": "transaction date",
                    "origin": r["origin"],
                    "note": note,
                    "_keys": player_keys(player),
                    "_raw": player,
                }
            )
    out = pd.DataFrame(rows)
    if out.empty:
        return _empty_signings().assign(_keys=pd.Series(dtype="object"), _raw=pd.Series(dtype="object")), skipped
    return out, skipped


def dedup_player_year(signings: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """Keep the earliest signing per (player key, calendar year of the signing); count the rest.

    Rows without a date use the year in ``_year`` when present. Returns ``(kept, n_removed)``.
    """
    if signings.empty:
        return signings, 0
    df = signings.copy()
    year = pd.to_datetime(df["signing_date"], errors="coerce").dt.year
    if "_year" in df.columns:
        year = year.fillna(df["_year"])
    key = (
        df["_keys"].map(lambda ks: min(ks) if ks else "") if "_keys" in df.columns else df["player"].map(normalize_name)
    )
    df = df.assign(_k=key, _y=year, _o=df["signing_date"].fillna("9999-12-31"))
    df = df.sort_values(["_k", "_y", "_o"], kind="mergesort")
    dup = df.duplicated(subset=["_k", "_y"], keep="first")
    return df.loc[~dup].drop(columns=["_k", "_y", "_o"]), int(dup.sum())


# ---------------------------------------------------------------------------------------------
# Dated contract lists and season rosters (snapshot)
# ---------------------------------------------------------------------------------------------


def read_contract_list(path: Path, rel: str) -> tuple[pd.DataFrame, Counter]:
    """Read one ``actual_contracts_*.csv``: rows ``player, Years, Total Value, date[, source]``.

    Returns ``(rows, skipped)`` with columns ``player, years, total_value, date, source,
    origin, _year`` (``_year`` from the date, else from the file name). Rows with no
    positive years or value are skipped as ``no_contract_value``.

    Raises:
        SourceError: naming the file and the missing column.
    """
    raw = read_csv_checked(path, CONTRACT_COLUMNS, name=str(path), dtype={"player": "str", "date": "str"})
    skipped: Counter = Counter()
    m = re.search(r"(\d{4})", path.name)
    file_year = int(m.group(1)) if m else None
    rows = []
    for i, r in raw.iterrows():
        name = r["player"]
        if name is None or (isinstance(name, float) and pd.isna(name)) or not str(name).strip():
            skipped[SKIP_NO_PLAYER] += 1
            continue
        years = pd.to_numeric(r["Years"], errors="coerce")
        value = pd.to_numeric(r["Total Value"], errors="coerce")
        if pd.isna(years) or pd.isna(value) or years < 1 or value <= 0:
            skipped[SKIP_NO_CONTRACT_VALUE] += 1
            continue
        if years > MAX_YEARS or value < MIN_TOTAL_VALUE:
            skipped[SKIP_IMPLAUSIBLE] += 1
            continue
        date = (
            pd.to_datetime(r["date"], errors="coerce") if isinstance(r["date"], str) and r["date"].strip() else pd.NaT
        )
        src = r.get("source") if "source" in raw.columns else None
        src = None if src is None or (isinstance(src, float) and pd.isna(src)) else str(src)
        rows.append(
            {
                "player": str(name).strip(),
                "years": int(years),
                "total_value": float(value),
                "date": None if pd.isna(date) else date.date().isoformat(),
                "source": src,
                "origin": f"snapshot:{rel}#row={i + 2}",
                "_year": date.year if not pd.isna(date) else file_year,
            }
        )
    return pd.DataFrame(rows, columns=["player", "years", "total_value", "date", "source", "origin", "_year"]), skipped


class SeasonTeams:
    """Which team(s) a player played for in a season (Basketball-Reference season rows).

    ``season`` is the year the season ends (2023 = 2022-23). Multi-team aggregate rows
    (``TOT``, ``2TM``) are ignored. A player traded during a season has several teams;
    their order in the file is alphabetical, not chronological, so the first or last of
    them cannot be told.
    """

    def __init__(self, table: pd.DataFrame | None) -> None:
        self._teams: dict[tuple[str, int], set[str]] = {}
        if table is None:
            return
        for season, player, team in zip(table["season"], table["player"], table["team"]):
            code = str(team).strip()
            season_n = pd.to_numeric(season, errors="coerce")
            if _BBREF_MULTI.match(code) or pd.isna(season_n):
                continue
            key = (normalize_name(player), int(season_n))
            self._teams.setdefault(key, set()).add(BBREF_TEAMS.get(code, code))

    def __bool__(self) -> bool:
        return bool(self._teams)

    def teams(self, keys: Iterable[str], season: int) -> set[str]:
        """The teams (nicknames) any of ``keys`` played for in ``season``; empty if none."""
        found: set[str] = set()
        for k in keys:
            found |= self._teams.get((k, int(season)), set())
        return found


def _one(teams: set[str]) -> str | None:
    return next(iter(teams)) if len(teams) == 1 else None


def _describe(teams: set[str]) -> str:
    return "no rows" if not teams else next(iter(teams)) if len(teams) == 1 else "one of " + "/".join(sorted(teams))


def _offseason_year(day: pd.Timestamp) -> int | None:
    """The offseason a signing belongs to: its year for June..December, None mid-season."""
    return int(day.year) if day.month >= 6 else None


def infer_sign_and_trades(signings: pd.DataFrame, tx: pd.DataFrame, seasons: SeasonTeams) -> int:
    """Flag re-signings followed by a season played for one other team only (in place).

    An offseason re-signing with team A in year Y whose player then played season Y+1
    (ending in Y+1) for a single team T != A, with no acquisition note ("signed",
    "claimed") of the player by T in between, was traded right after re-signing: the NBA
    bars trading a re-signed player for three months (and until mid-December), so the
    trade was a sign-and-trade. Sets ``sign_and_trade``, ``team`` = T, ``previous_team``
    = A, ``team_change`` = True. Returns the number of rows changed.
    """
    if not seasons or signings.empty:
        return 0
    txx = tx.assign(_date=pd.to_datetime(tx["date"], errors="coerce"), _team=[canonical_team(t) for t in tx["team"]])
    acq = txx[txx["notes"].astype("str").str.match(_ACQUISITION) & txx["_date"].notna() & txx["player"].notna()]
    acq_keys: dict[str, list[tuple[pd.Timestamp, str]]] = {}
    for raw, d, t in zip(acq["player"], acq["_date"], acq["_team"]):
        for k in player_keys(raw):
            acq_keys.setdefault(k, []).append((d, t))
    changed = 0
    for idx in signings.index:
        if (
            not signings.at[idx, "re_signing"]
            or signings.at[idx, "sign_and_trade"]
            or pd.isna(signings.at[idx, "team"])
        ):
            continue
        day = pd.Timestamp(signings.at[idx, "signing_date"])
        year = _offseason_year(day)
        if year is None:
            continue
        keys = signings.at[idx, "_keys"]
        nxt = _one(seasons.teams(keys, year + 1))
        team = signings.at[idx, "team"]
        if nxt is None or nxt == team:
            continue
        season_end = pd.Timestamp(year=year + 1, month=6, day=30)
        if any(day < d <= season_end and t == nxt for k in keys for d, t in acq_keys.get(k, [])):
            continue
        signings.at[idx, "previous_team"] = team
        signings.at[idx, "team"] = nxt
        signings.at[idx, "team_change"] = True
        signings.at[idx, "sign_and_trade"] = True
        signings.at[idx, "note"] = (
            f"{signings.at[idx, 'note']} [sign-and-trade inferred: played {year}-{str(year + 1)[-2:]} for {nxt} only]"
        )
        changed += 1
    return changed


def merge_contract_lists(
    signings: pd.DataFrame,
    lists: pd.DataFrame,
    tx: pd.DataFrame,
    seasons: SeasonTeams,
) -> tuple[pd.DataFrame, int]:
    """Add the dated contract-list rows to the note-derived signings.

    A list row whose player (any alias) and year match a note signing is the same
    contract: it is merged (counted as a duplicate) — the earlier of the two dates becomes
    ``signing_date`` (an announcement precedes the official signing; ``date_rule`` says
    which), the note's teams and figures are kept, and a "sign-and-trade" in the list's
    source link sets the flag. Other list rows become new signings, with teams from the
    season rosters (:class:`SeasonTeams`): ``team`` is the player's team in the season
    after the offseason and ``previous_team`` his team in the season that ended before it
    (else the team of his latest transaction before the date). A player with several
    teams in a season has no single team (None); ``team_change`` is still True when none
    of his teams after the offseason is among his teams before it, False when both are
    the same single team, and <NA> otherwise.

    Returns ``(signings, n_merged_duplicates)``.
    """
    if lists.empty:
        return signings, 0
    out = signings.copy()
    years_of = pd.to_datetime(out["signing_date"], errors="coerce").dt.year if len(out) else pd.Series(dtype="float64")
    by_key: dict[tuple[str, int], int] = {}
    for idx, keys, y in zip(out.index, out["_keys"], years_of):
        if pd.isna(y):
            continue
        for k in keys:
            by_key.setdefault((k, int(y)), idx)
    tx_by_key: dict[str, list[pd.DataFrame]] = {}
    if len(tx):
        txx = tx.assign(
            _date=pd.to_datetime(tx["date"], errors="coerce"), _team=[canonical_team(t) for t in tx["team"]]
        )
        txx = txx[txx["_date"].notna() & txx["_team"].notna() & txx["player"].notna()]
        for raw, g in txx.groupby("player"):
            for k in player_keys(raw):
                tx_by_key.setdefault(k, []).append(g)
    merged = 0
    new_rows = []
    for _, r in lists.iterrows():
        keys = player_keys(r["player"])
        year = None if pd.isna(r["_year"]) else int(r["_year"])
        source = r["source"] if isinstance(r["source"], str) and r["source"] else None
        date = r["date"] if isinstance(r["date"], str) and r["date"] else None
        snt = bool(source and _SIGN_AND_TRADE.search(source))
        hit = next((by_key[(k, year)] for k in keys if year is not None and (k, year) in by_key), None)
        if hit is not None:
            merged += 1
            if date and date < out.at[hit, "signing_date"]:
                out.at[hit, "signing_date"] = date
                out.at[hit, "date_rule"] = "announcement date (contract list)"
            out.at[hit, "origin"] = f"{out.at[hit, 'origin']} + {r['origin']}"
            if snt:
                out.at[hit, "sign_and_trade"] = True
            continue
        after = seasons.teams(keys, year + 1) if year is not None else set()
        before = seasons.teams(keys, year) if year is not None else set()
        prev_why = f"season roster ({_describe(before)})" if before else "season roster (no rows)"
        if not before:
            frames = [g for k in keys for g in tx_by_key.get(k, [])]
            if frames and date:
                hist = pd.concat(frames)
                hist = hist[hist["_date"] < pd.Timestamp(date)].sort_values("_date", kind="mergesort")
                if len(hist):
                    before = {hist["_team"].iloc[-1]}
                    prev_why = f"latest transaction ({hist['_team'].iloc[-1]})"
        team, prev = _one(after), _one(before)
        if after and before and not (after & before):
            change: Any = True
        elif team is not None and prev is not None:
            change = team != prev
        else:
            change = pd.NA
        re_signing: Any = pd.NA if (team is None or prev is None) else (team == prev)
        new_rows.append(
            {
                "league": LEAGUE,
                "player": display_name(r["player"]),
                "signing_date": date,
                "team": team,
                "previous_team": prev,
                "team_change": change,
                "years": r["years"],
                "total_value": r["total_value"],
                "aav": r["total_value"] / r["years"],
                "status": None,
                "sign_and_trade": snt,
                "re_signing": re_signing,
                "date_rule": "announcement date (contract list)" if date else "missing",
                "origin": r["origin"],
                "note": (
                    f"contract list: {r['years']} years, ${r['total_value']:,.0f}"
                    f"; team: season roster ({_describe(after)}); previous team: {prev_why}"
                    + (f"; source {source}" if source else "")
                ),
                "_keys": keys,
                "_raw": r["player"],
                "_year": year,
            }
        )
    if new_rows:
        out = pd.concat([out, pd.DataFrame(new_rows)], ignore_index=True)
    return out, merged


# ---------------------------------------------------------------------------------------------
# Live pages
# ---------------------------------------------------------------------------------------------

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


# ---------------------------------------------------------------------------------------------
# Reader and fetch()
# ---------------------------------------------------------------------------------------------


class NBASigningsReader(SourceReader):
    """NBA free-agent signings (one ``signings`` table), live or from a snapshot.

    Parameters:
        start, end: ISO dates of the transactions to fetch live (inclusive). The default
            start, 2016-07-01, gives three offseasons of history before the 2019 signings
            (previous teams); the default end is today. Snapshot mode reads whole files.
        session: HTTP session (tests pass one replaying recorded pages); None builds one
            with retries.
        snapshot_dir: directory with :data:`SNAPSHOT_LAYOUT`; None falls back to
            ``$ANACHRON_SNAPSHOT_DIR`` and then to live fetching.
        sign_and_trade_days, status_lookback_days: see :func:`contracts_from_transactions`.
        use_contract_lists: merge ``nba/actual_contracts_*.csv`` (snapshot mode).
        use_season_rosters: use ``nba/bbref_player_season_info.csv`` (snapshot mode) for
            the teams of contract-list signings and to infer sign-and-trades
            (:func:`infer_sign_and_trades`).
        pause_s: seconds to wait between live pages.

    After :meth:`read`: :attr:`manifest` (provenance records), :attr:`skipped_by_reason`
    (Counter of skipped notes and rows, duplicates included) and :attr:`duplicates`
    (``{"duplicate_row": n, "duplicate_player_year": n, "merged_contract_list": n}``).
    """

    source = SOURCE
    snapshot_layout = SNAPSHOT_LAYOUT

    def __init__(
        self,
        start: str = "2016-07-01",
        end: str | None = None,
        *,
        session: Any = None,
        snapshot_dir: str | os.PathLike[str] | None = None,
        sign_and_trade_days: int = 90,
        status_lookback_days: int = 183,
        use_contract_lists: bool = True,
        use_season_rosters: bool = True,
        base_url: str = SEARCH_URL,
        max_pages: int = 5000,
        pause_s: float = 0.0,
    ) -> None:
        super().__init__(session=session, snapshot_dir=snapshot_dir)
        self.start = pd.Timestamp(start).date().isoformat()
        self.end = pd.Timestamp(end).date().isoformat() if end else dt.date.today().isoformat()
        if self.end < self.start:
            raise ValueError(f"end {self.end} is before start {self.start}")
        self.sign_and_trade_days = int(sign_and_trade_days)
        self.status_lookback_days = int(status_lookback_days)
        self.use_contract_lists = bool(use_contract_lists)
        self.use_season_rosters = bool(use_season_rosters)
        self.base_url = base_url
        self.max_pages = int(max_pages)
        self.pause_s = float(pause_s)
        self.skipped_by_reason: Counter = Counter()
        self.duplicates: dict[str, int] = {}
        self.inferred_sign_and_trades = 0

    def _read_live(self, session: Any) -> pd.DataFrame:
        """All player-movement transactions dated ``start..end`` (inclusive) from the site.

        Pages are requested with ``start=0, 25, 50, ...`` until the stated page count is
        reached, or (no count stated) until a page without rows or without a "Next" link
        that is shorter than :data:`PAGE_SIZE`; one manifest record per page (URL, sha256,
        rows). Raises :class:`SourceError` on HTTP failure, a page without the results
        table, or ``max_pages`` exceeded.
        """
        params = {
            "Player": "",
            "Team": "",
            "BeginDate": self.start,
            "EndDate": self.end,
            "PlayerMovementChkBx": "yes",
            "Submit": "Search",
        }
        frames = []
        for page in range(self.max_pages):
            params["start"] = str(page * PAGE_SIZE)
            what = f"prosportstransactions NBA search {self.start}..{self.end} (rows from {params['start']})"
            resp = self._get(session, self.base_url, params=params, what=what)
            url = resp.url or self.base_url
            rows, n_pages, next_url = parse_search_page(resp.content, url)
            self._record_bytes(url, resp.content, len(rows), page=page + 1)
            frames.append(rows)
            if n_pages is not None:
                if page + 1 >= n_pages:
                    break
            elif rows.empty or (next_url is None and len(rows) < PAGE_SIZE):
                break
            if self.pause_s:
                time.sleep(self.pause_s)
        else:
            raise SourceError(
                f"prosportstransactions: more than {self.max_pages} pages for {self.start}..{self.end}; "
                "narrow the dates or raise max_pages."
            )
        tx = (
            pd.concat(frames, ignore_index=True)
            if frames
            else pd.DataFrame(columns=["date", "team", "player", "notes", "origin"])
        )
        return self._signings(tx, pd.DataFrame(), SeasonTeams(None), Counter())

    def _signings(self, tx: pd.DataFrame, lists: pd.DataFrame, seasons: SeasonTeams, skipped: Counter) -> pd.DataFrame:
        """Parse, merge and de-duplicate (both modes); returns the ``signings`` table."""
        signings, tx_skipped = contracts_from_transactions(
            tx, sign_and_trade_days=self.sign_and_trade_days, status_lookback_days=self.status_lookback_days
        )
        skipped.update(tx_skipped)
        self.inferred_sign_and_trades = infer_sign_and_trades(signings, tx, seasons)
        signings, merged = merge_contract_lists(signings, lists, tx, seasons)
        signings, dups = dedup_player_year(signings)
        skipped[DUP_PLAYER_YEAR] += dups + merged
        self.duplicates = {
            DUP_ROW: int(skipped[DUP_ROW]),
            DUP_PLAYER_YEAR: int(dups),
            "merged_contract_list": int(merged),
        }
        self.skipped_by_reason = Counter({k: int(v) for k, v in sorted(skipped.items()) if v})
        out = finish_signings(signings)
        log.info("NBA signings: %d (skipped %s)", len(out), dict(self.skipped_by_reason))
        return out

    def _manifest_extra(self, table: pd.DataFrame) -> dict[str, Any]:
        return {
            "duplicates": self.duplicates,
            "sign_and_trades": {
                "flagged": int(table["sign_and_trade"].sum()),
                "inferred_from_rosters": self.inferred_sign_and_trades,
            },
            "rows": int(len(table)),
        }

    def _read_snapshot(self, snap: Path) -> pd.DataFrame:
        frames, skipped = [], Counter()
        for path in find_snapshot_files(snap, TRANSACTIONS_PATTERN):
            rel = path.relative_to(snap).as_posix()
            raw = read_csv_checked(
                path, TRANSACTION_COLUMNS, name=str(path), dtype="str", keep_default_na=False, na_values=[""]
            )
            raw = raw.assign(origin=[f"snapshot:{rel}#row={i + 2}" for i in range(len(raw))])
            frames.append(raw[TRANSACTION_COLUMNS + ["origin"]])
            self._record_file(path, len(raw), kind="transactions")
        tx = pd.concat(frames, ignore_index=True)
        lists = pd.DataFrame()
        if self.use_contract_lists:
            parts = []
            for path in sorted(p for p in snap.glob(CONTRACTS_PATTERN) if p.is_file()):
                rel = path.relative_to(snap).as_posix()
                rows, sk = read_contract_list(path, rel)
                skipped.update(sk)
                parts.append(rows)
                self._record_file(path, len(rows), kind="contract_list")
            lists = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
        seasons = SeasonTeams(None)
        season_path = snap / SEASONS_FILE
        if self.use_season_rosters and season_path.is_file():
            table = read_csv_checked(
                season_path,
                SEASON_COLUMNS,
                name=str(season_path),
                usecols=SEASON_COLUMNS,
                dtype={"player": "str", "team": "str"},
            )
            first = pd.to_datetime(tx["date"], errors="coerce").min()
            if pd.notna(first):
                table = table[pd.to_numeric(table["season"], errors="coerce") >= first.year]
            seasons = SeasonTeams(table)
            self._record_file(season_path, len(table), kind="season_rosters")
        return self._signings(tx, lists, seasons, skipped)


def fetch(
    *, snapshot_dir: str | os.PathLike[str] | None = None, session: Any = None, **params: Any
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The ``nba`` source: NBA free-agent signings and their manifest.

    ``params`` are :class:`NBASigningsReader` keyword arguments (``start``, ``end``,
    ``sign_and_trade_days``, ``status_lookback_days``, ``use_contract_lists``,
    ``use_season_rosters``, ``base_url``, ``max_pages``, ``pause_s``).

    Returns:
        ``(signings, manifest)``: the table of :data:`SIGNING_COLUMNS` and
        ``{"sources": [...], "skipped_by_reason": {...}, "duplicates": {...}, "rows": n}``.

    Raises:
        SourceError: when a page or file cannot be fetched or read (a missing column names
            the file and the column).
        TypeError: for an unknown parameter.
    """
    return NBASigningsReader(session=session, snapshot_dir=snapshot_dir, **params).fetch()
