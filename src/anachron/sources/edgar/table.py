"""The ``edgar`` facts table: its columns and the key of a reported period."""

from __future__ import annotations

#: A period: (company, concept, unit, start, end); its reports are the revisions of one value.
KEY_COLUMNS = ["cik", "taxonomy", "concept", "unit", "start", "end"]
#: Output columns, in order (:mod:`anachron.sources.edgar`); the first 15 are parsed from the
#: files (:func:`~anachron.sources.edgar.companyfacts.parse_companyfacts`), the rest added by
#: :func:`~anachron.sources.edgar.revisions.add_revisions`.
COLUMNS = [
    "cik",
    "entity_name",
    "taxonomy",
    "concept",
    "label",
    "unit",
    "val",
    "start",
    "end",
    "fy",
    "fp",
    "form",
    "filed",
    "accn",
    "frame",
    "first_filed",
    "revision",
    "value_changed",
    "restates",
    "derived",
]
