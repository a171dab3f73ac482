"""Where the ``edgar`` source's data lives: the companyfacts API, the snapshot files, the SEC's request rules."""

from __future__ import annotations

import re

#: Source name (config block ``sources.edgar``, provenance records).
SOURCE = "edgar"
#: The SEC's XBRL companyfacts API, one JSON per company (10-digit, zero-padded CIK).
COMPANYFACTS_URL = "https://data.sec.gov/api/xbrl/companyfacts/CIK{cik:010d}.json"
#: Snapshot files: the glob, and the layout named in "how to fix" messages.
SNAPSHOT_PATTERN = "edgar/companyfacts/CIK*.json"
SNAPSHOT_LAYOUT = "edgar/companyfacts/CIK##########.json"
#: Environment variable holding the SEC User-Agent (name and contact e-mail).
USER_AGENT_ENV = "ANACHRON_SEC_USER_AGENT"
#: Companies read live when none are named (those of the shared snapshot): Apple, NVIDIA, Tesla, Alphabet.
DEFAULT_CIKS = (320193, 1045810, 1318605, 1652044)
#: Seconds between two SEC requests (SEC allows at most 10 per second).
MIN_INTERVAL = 0.12
#: Name of a snapshot companyfacts file.
CIK_FILE = re.compile(r"^CIK(\d{10})\.json$")
