"""One Oyez case document (``GET /cases/{term}/{docket}``) read into a row of the ``cases`` table."""

from __future__ import annotations

import json
from typing import Any

from anachron.frames import require_keys
from anachron.sources.base import SourceError
from anachron.sources.dockets import normalize_docket
from anachron.sources.html_text import html_to_text
from anachron.sources.oyez.layout import OYEZ_API
from anachron.sources.oyez.timeline import timeline_dates
from anachron.sources.oyez.votes import decision_votes
from anachron.sources.oyez.winning_party import decide_outcome

#: Keys every case document must have (a missing key is a layout error naming the file).
REQUIRED_KEYS = ("name", "term", "docket_number", "first_party", "second_party", "timeline")


def _citation(cit: Any) -> str | None:
    if not isinstance(cit, dict):
        return None
    vol, page = cit.get("volume"), cit.get("page")
    if vol in (None, "") or page in (None, ""):
        return None
    return f"{vol} U.S. {page}"


def _lower_court(lc: Any) -> str | None:
    if isinstance(lc, dict):
        name = lc.get("name")
        return str(name).strip() if name else None
    if isinstance(lc, str) and lc.strip():
        return lc.strip()
    return None


def parse_case(doc: Any, where: str) -> dict[str, Any]:
    """One row of the ``cases`` table from an Oyez case document.

    ``where`` names the document (file path or URL) in errors. Raises :class:`SourceError`
    naming ``where`` and the key when a key of :data:`REQUIRED_KEYS` is absent (a layout
    error). Values may be null: the caller skips rows without docket or term
    (:func:`~anachron.sources.oyez.table.finish_cases`).
    """
    if not isinstance(doc, dict):
        raise SourceError(f"{where}: not an Oyez case document (expected a JSON object, got {type(doc).__name__}).")
    require_keys(doc, REQUIRED_KEYS, f"{where}: Oyez case document", error=SourceError,
                 hint=f"replace the file with a document from {OYEZ_API}/cases/<term>/<docket>.")
    name = str(doc.get("name") or "").strip()
    pet = str(doc.get("first_party") or "").strip()
    resp = str(doc.get("second_party") or "").strip()
    outcome, note, raw = decide_outcome(doc.get("decisions"), pet, resp, name)
    majority, minority, vote_check = decision_votes(doc.get("decisions") if isinstance(doc.get("decisions"), list) else None)
    try:
        term: int | None = int(str(doc.get("term")).strip())
    except (TypeError, ValueError):
        term = None
    docket = doc.get("docket_number")
    extra = doc.get("additional_docket_numbers") or []
    if not isinstance(extra, list):
        extra = [extra]
    return {
        "term": term,
        "docket": None if docket in (None, "") else str(docket).strip(),
        "docket_key": normalize_docket(docket),
        "name": name,
        "petitioner": pet,
        "respondent": resp,
        "first_party_label": str(doc.get("first_party_label") or "Petitioner"),
        "second_party_label": str(doc.get("second_party_label") or "Respondent"),
        "facts": html_to_text(doc.get("facts_of_the_case")),
        "question": html_to_text(doc.get("question")),
        **timeline_dates(doc.get("timeline")),
        "oyez_outcome": outcome,
        "oyez_outcome_note": note,
        "winning_party": raw,
        "majority_votes": majority,
        "minority_votes": minority,
        "vote_check": vote_check,
        "lower_court": _lower_court(doc.get("lower_court")),
        "citation": _citation(doc.get("citation")),
        "additional_dockets": json.dumps([str(x) for x in extra if x not in (None, "")]),
        "href": str(doc.get("href") or (f"{OYEZ_API}/cases/{term}/{docket}" if term and docket else "")),
    }
