"""S&P 500 point-in-time membership and GICS sectors.

Sources:

* membership spells and dated index changes from the public ``fja05680/sp500`` repository
  (``sp500_ticker_start_end.csv``: ``ticker,start_date,end_date``, empty end = still a
  member, several spells per ticker possible; ``sp500_changes_since_2019.csv``:
  ``date,add,remove`` with comma-separated tickers). ``end_date`` is the day of the index
  change that removed the ticker: it is no longer a member on that day.
* GICS sectors per member from Wikipedia's "List of S&P 500 companies", either the page
  as it stood on given dates (MediaWiki API: the last revision at or before the day, then
  its parsed HTML) or snapshots ``sp500/constituents_YYYY-MM-DD.csv`` taken from it.

Tickers use the S&P spelling (``BRK.B``) throughout.

A ticker is a member on day D iff one of its spells has ``start_date <= D < end_date``
(:func:`anachron.sources.index_membership.members_as_of`, shared with the price reader and the
stock task); :func:`~anachron.sources.sp500.sectors.sector_as_of` picks a ticker's sector as of a date.

Modules:

* :mod:`~anachron.sources.sp500.reader`: the membership and changes readers, and :func:`fetch_sp500`;
* :mod:`~anachron.sources.sp500.gics_reader`: the GICS sectors reader (snapshots or Wikipedia revisions);
* :mod:`~anachron.sources.sp500.layout`: URLs, Wikipedia page and snapshot files;
* :mod:`~anachron.sources.sp500.fja05680`: the membership-spells and index-changes CSVs;
* :mod:`~anachron.sources.sp500.constituents`: constituents tables' column variants;
* :mod:`~anachron.sources.sp500.wikipedia`: the MediaWiki API's revision query and parsed page;
* :mod:`~anachron.sources.sp500.sectors`: a ticker's sector as of a date, with the rule that chose it.
"""

from __future__ import annotations

from anachron.sources.sp500.constituents import NAME_COLUMNS, SECTOR_COLUMNS, TICKER_COLUMNS, normalize_constituents
from anachron.sources.sp500.fja05680 import changes_long, parse_changes, parse_membership
from anachron.sources.sp500.gics_reader import GICSSectorReader
from anachron.sources.sp500.layout import (
    CHANGES_SNAPSHOT,
    CHANGES_URL,
    CONSTITUENTS_PATTERN,
    MEMBERSHIP_SNAPSHOT,
    MEMBERSHIP_URL,
    RAW_BASE_URL,
    WIKIPEDIA_API_URL,
    WIKIPEDIA_PAGE,
)
from anachron.sources.sp500.reader import SP500ChangesReader, SP500MembershipReader, fetch_sp500, window_cutoffs
from anachron.sources.sp500.sectors import (
    SECTOR_RULE_AT_OR_BEFORE,
    SECTOR_RULE_MISSING,
    SECTOR_RULE_NEAREST_AFTER,
    SECTOR_RULE_NEAREST_BEFORE,
    sector_as_of,
)

__all__ = [
    "CHANGES_SNAPSHOT",
    "CHANGES_URL",
    "CONSTITUENTS_PATTERN",
    "GICSSectorReader",
    "MEMBERSHIP_SNAPSHOT",
    "MEMBERSHIP_URL",
    "NAME_COLUMNS",
    "RAW_BASE_URL",
    "SECTOR_COLUMNS",
    "SECTOR_RULE_AT_OR_BEFORE",
    "SECTOR_RULE_MISSING",
    "SECTOR_RULE_NEAREST_AFTER",
    "SECTOR_RULE_NEAREST_BEFORE",
    "SP500ChangesReader",
    "SP500MembershipReader",
    "TICKER_COLUMNS",
    "WIKIPEDIA_API_URL",
    "WIKIPEDIA_PAGE",
    "changes_long",
    "fetch_sp500",
    "normalize_constituents",
    "parse_changes",
    "parse_membership",
    "sector_as_of",
    "window_cutoffs",
]
