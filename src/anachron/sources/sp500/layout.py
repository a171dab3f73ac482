"""Where the S&P 500 sources' data lives: the ``fja05680/sp500`` CSVs, Wikipedia's list, the snapshot files."""

from __future__ import annotations

#: Raw-file root of the public ``fja05680/sp500`` repository.
RAW_BASE_URL = "https://raw.githubusercontent.com/fja05680/sp500/master/"
MEMBERSHIP_URL = RAW_BASE_URL + "sp500_ticker_start_end.csv"
CHANGES_URL = RAW_BASE_URL + "sp500_changes_since_2019.csv"
#: MediaWiki API of the English Wikipedia, and the page listing the members with their GICS sectors.
WIKIPEDIA_API_URL = "https://en.wikipedia.org/w/api.php"
WIKIPEDIA_PAGE = "List of S&P 500 companies"

#: Snapshot files and pattern, relative to the snapshot directory.
MEMBERSHIP_SNAPSHOT = "sp500/sp500_ticker_start_end.csv"
CHANGES_SNAPSHOT = "sp500/sp500_changes_since_2019.csv"
CONSTITUENTS_PATTERN = "sp500/constituents_*.csv"
