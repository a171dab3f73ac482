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
(:func:`~anachron.sources.prosports.notes.parse_note`). The previous team is the team of
the player's latest earlier transaction (the snapshot file has no trades, so there the
team he left is the one that last recorded a move for him: "player became an
unrestricted free agent", a qualifying offer, a waiver; live pages include trade rows).

Output (:data:`~anachron.sources.signings.SIGNING_COLUMNS`), one row per (player, signing year)::

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
played the following season for one other team only
(:func:`~anachron.sources.prosports.rosters.infer_sign_and_trades`).
Then ``team`` is the receiving team, ``previous_team`` the one that re-signed him and
``team_change`` is True. A sign-and-trade with no later trace stays a re-signing
(a known gap: e.g. a player who missed the next season).

Modules:

* :mod:`~anachron.sources.prosports.reader`: the reader and :func:`fetch`;
* :mod:`~anachron.sources.prosports.config`: the JSON Schema of the config block;
* :mod:`~anachron.sources.prosports.layout`: search page, snapshot files and their columns;
* :mod:`~anachron.sources.prosports.skips`: skip-reason codes;
* :mod:`~anachron.sources.prosports.notes`: transaction notes: contract or skip reason, years, value, status;
* :mod:`~anachron.sources.prosports.players`: player cells: aliases, display names, matching keys;
* :mod:`~anachron.sources.prosports.teams`: team nicknames and Basketball-Reference codes;
* :mod:`~anachron.sources.prosports.contracts`: signings from a transaction table, de-duplicated by player-year;
* :mod:`~anachron.sources.prosports.rosters`: season rosters and the sign-and-trades they show;
* :mod:`~anachron.sources.prosports.contract_lists`: the snapshot's dated contract lists, merged into the signings;
* :mod:`~anachron.sources.prosports.pages`: live search-results pages.
"""

from __future__ import annotations

from anachron.sources.prosports.config import CONFIG_SCHEMA
from anachron.sources.prosports.reader import NBASigningsReader, fetch

__all__ = ["CONFIG_SCHEMA", "NBASigningsReader", "fetch"]
