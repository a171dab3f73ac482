"""Where the ``scdb`` source's data lives: the release, its download URL, the snapshot file, the default terms."""

from __future__ import annotations

#: Default SCDB release (the snapshot's).
DEFAULT_RELEASE = "2024_01"
#: Download URL of a case-centred, citation-organised release zip.
SCDB_URL_TEMPLATE = "http://scdb.wustl.edu/_brickFiles/{release}/SCDB_{release}_caseCentered_Citation.csv.zip"
#: Snapshot path pattern, relative to the snapshot directory.
SNAPSHOT_PATTERN = "scdb/SCDB_*_caseCentered_Citation.csv"
#: Terms kept when none are given.
DEFAULT_TERMS = tuple(range(2014, 2025))
