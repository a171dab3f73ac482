"""CourtListener's precedential status values, and the spellings met for them."""

from __future__ import annotations

from typing import Any

from anachron.frames import is_null

#: CourtListener's precedential status values (the choices of its database field).
PRECEDENTIAL_STATUSES = ("Published", "Unpublished", "Errata", "Separate", "In-chambers", "Relating-to", "Unknown")
#: Other spellings met (v4 search shows display names; court listings use their own), lower
#: case with hyphens and underscores as spaces -> the value of :data:`PRECEDENTIAL_STATUSES`.
_STATUS_ALIASES = {
    **{" ".join(v.lower().replace("-", " ").split()): v for v in PRECEDENTIAL_STATUSES},
    "precedential": "Published",
    "non precedential": "Unpublished",
    "nonprecedential": "Unpublished",
    "not precedential": "Unpublished",
    "separate opinion": "Separate",
    "relating to orders": "Relating-to",
    "unknown status": "Unknown",
}


def normalize_precedential_status(value: Any) -> tuple[str | None, bool]:
    """One of :data:`PRECEDENTIAL_STATUSES` for a status as CourtListener or a court writes it.

    "Published" / "published" / "Precedential" -> "Published"; "Unpublished" /
    "Non-Precedential" -> "Unpublished"; "Separate Opinion" -> "Separate"; "In chambers" ->
    "In-chambers"; "Relating-to orders" -> "Relating-to"; "Unknown Status" -> "Unknown".

    Returns:
        ``(status, recognised)``: ``(None, True)`` for a missing or blank value, ``(None,
        False)`` for a value not in the list (the caller logs and counts it).
    """
    if is_null(value):
        return None, True
    key = " ".join(str(value).strip().lower().replace("-", " ").replace("_", " ").split())
    if not key:
        return None, True
    status = _STATUS_ALIASES.get(key)
    return status, status is not None
