"""Snapshot mode: rows of real opinion listings (no text, no disposition), filtered to courts and dates."""

from __future__ import annotations

from typing import Any, Callable, Iterable, Mapping

from anachron.dates import to_iso
from anachron.sources.courtlistener.parties import split_case_name


def listing_rows(
    records: Iterable[Mapping[str, str]],
    *,
    courts: set[str],
    lo: str | None,
    hi: str | None,
    status: Callable[[Any], str | None],
) -> tuple[list[dict[str, Any]], dict[str, int], dict[str, int]]:
    """Output rows of the listing CSV's records (strings, blank for missing), in file order.

    Returns ``(rows, skipped, filtered)``: records without a case name or with an unreadable
    ``date_filed`` are skipped (``missing_case_name``, ``bad_date_filed``); those of a court
    not in ``courts`` or filed outside ``[lo, hi]`` (None = open) are filtered out
    (``other_court``, ``outside_date_range``). ``status`` maps a raw precedential status to
    the stored one. Each row has ``disposition`` null and the parties in case-name order.
    """
    skipped: dict[str, int] = {}
    filtered: dict[str, int] = {}
    rows = []
    for rec in records:
        court = rec["court"].strip().lower()
        date = to_iso(rec["date_filed"])
        name = rec["case_name"].strip()
        if not name:
            skipped["missing_case_name"] = skipped.get("missing_case_name", 0) + 1
            continue
        if date is None:
            skipped["bad_date_filed"] = skipped.get("bad_date_filed", 0) + 1
            continue
        if court not in courts:
            filtered["other_court"] = filtered.get("other_court", 0) + 1
            continue
        if (lo and date < lo) or (hi and date > hi):
            filtered["outside_date_range"] = filtered.get("outside_date_range", 0) + 1
            continue
        appellant, appellee = split_case_name(name)
        rows.append(
            {
                "court": court,
                "case_name": name,
                "date_filed": date,
                "docket_number": rec["docket_number"].strip() or None,
                "precedential_status": status(rec["precedential_status"]),
                "download_url": rec["download_url"].strip() or None,
                "cluster_id": None,
                "opinion_id": None,
                "cite_count": None,
                "text": "",
                "text_source": "none",
                "disposition": None,
                "disposition_source": None,
                "disposition_note": "listing only: no opinion text or disposition in the snapshot",
                "outcome": None,
                "appellant": appellant,
                "appellee": appellee,
                "party_source": "case_name_order",
                "origin": "snapshot",
            }
        )
    return rows, skipped, filtered
