"""Where the ``courtlistener`` source's data lives: API and storage URLs, token variable, courts, snapshot file."""

from __future__ import annotations

#: REST API v4 base URL.
API_BASE = "https://www.courtlistener.com/api/rest/v4"
#: Where CourtListener serves stored files (opinion PDFs at ``/<local_path>``).
STORAGE_BASE = "https://storage.courtlistener.com"
#: Environment variable holding the API token, unless config names another.
TOKEN_ENV = "COURTLISTENER_TOKEN"
#: The federal courts of appeals (CourtListener court ids).
DEFAULT_COURTS = ("ca1", "ca2", "ca3", "ca4", "ca5", "ca6", "ca7", "ca8", "ca9", "ca10", "ca11", "cadc", "cafc")
#: Snapshot file, relative to the snapshot directory.
SNAPSHOT_PATTERN = "courts/federal_appellate_opinion_listings.csv"
LISTING_COLUMNS = ["court", "case_name", "date_filed", "docket_number", "precedential_status", "download_url"]
