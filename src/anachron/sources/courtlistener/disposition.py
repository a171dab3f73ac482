"""The disposition an appellate opinion states (affirmed, reversed, ...), and which side it favours."""

from __future__ import annotations

import re
from typing import Any

from anachron.frames import is_null

#: Disposition -> which side prevails (petitioner = appellant).
OUTCOME_BY_DISPOSITION = {
    "reversed": "petitioner",
    "vacated": "petitioner",
    "granted": "petitioner",  # petition for review of an agency order granted
    "affirmed": "respondent",
    "denied": "respondent",  # petition for review denied: the agency order stands
}


_MIXED = re.compile(
    r"\b(?:affirm(?:ed)?|revers(?:e|ed)|vacat(?:e|ed)|modifi(?:ed)|dismiss(?:ed)?|grant(?:ed)?|den(?:y|ied))\s+in\s+part\b", re.I
)
_LEAD = r"(?:therefore|thus|accordingly|now|hereby|must|will|respectfully|also|otherwise)\s+"


def _phrases(stem: str, past: str) -> list[re.Pattern[str]]:
    return [
        re.compile(rf"\bwe\s+(?:{_LEAD})*{stem}\b", re.I),
        re.compile(rf"\b(?:is|are|be|been|stands?)\s+(?:hereby\s+|therefore\s+|accordingly\s+)?{past}\b", re.I),
        re.compile(rf"\bjudgments?\s+{past}\b", re.I),
        re.compile(rf"\b{past.upper()}\b"),  # the disposition line: "AFFIRMED.", "REVERSED AND REMANDED."
        re.compile(rf"^\s*{past}(?:\s+and\s+remanded)?\s*\.?\s*$", re.I | re.M),
    ]


_PATTERNS = {
    "affirmed": _phrases("affirm", "affirmed"),
    "reversed": _phrases("reverse", "reversed"),
    "vacated": _phrases("vacate", "vacated"),
    # A petition for review of an agency order: denied = the agency (respondent) prevails.
    "denied": [
        re.compile(r"\bpetitions?\s+(?:for\s+review\s+)?(?:is\s+|are\s+)?(?:hereby\s+|therefore\s+)?denied\b", re.I),
        re.compile(rf"\bwe\s+(?:{_LEAD})*deny\s+(?:the|his|her|their|its)\s+(?:\w+\s+)?petitions?\b", re.I),
        re.compile(r"\bPETITIONS?\s+(?:FOR\s+REVIEW\s+)?DENIED\b"),
    ],
    "granted": [
        re.compile(r"\bpetitions?\s+(?:for\s+review\s+)?(?:is\s+|are\s+)?(?:hereby\s+|therefore\s+)?granted\b", re.I),
        re.compile(rf"\bwe\s+(?:{_LEAD})*grant\s+(?:the|his|her|their|its)\s+(?:\w+\s+)?petitions?\b", re.I),
        re.compile(r"\bPETITIONS?\s+(?:FOR\s+REVIEW\s+)?GRANTED\b"),
    ],
    "dismissed": [
        re.compile(r"\b(?:appeal|petition)s?\s+(?:is\s+|are\s+)?(?:hereby\s+)?dismissed\b", re.I),
        re.compile(rf"\bwe\s+(?:{_LEAD})*dismiss\s+the\s+(?:appeal|petition)", re.I),
        re.compile(r"\bDISMISSED\b"),
    ],
}


def classify_disposition(text: Any) -> tuple[str | None, str]:
    """The court's disposition as stated in an opinion (or a cluster's disposition field).

    Returns ``(disposition, note)``: disposition is ``"affirmed"``, ``"reversed"``,
    ``"vacated"``, ``"denied"`` / ``"granted"`` (a petition for review of an agency order),
    ``"mixed"`` (a part disposition, or statements for both sides), ``"dismissed"``, or
    None when no disposition statement is found; ``note`` quotes the
    matched phrase or says why there is none. Disposition statements are phrases such as
    "we affirm", "the judgment is reversed", "VACATED AND REMANDED", or a line that is just
    "Affirmed."; a lower court's ruling described in the facts ("the district court
    reversed the agency") is not one of them.
    """
    if is_null(text):
        return None, "no text"
    s = str(text)
    if not s.strip():
        return None, "no text"
    m = _MIXED.search(s)
    if m:
        return "mixed", f"part disposition: {m.group(0)!r}"
    found: dict[str, str] = {}
    for label, patterns in _PATTERNS.items():
        for p in patterns:
            hit = p.search(s)
            if hit:
                found[label] = hit.group(0).strip()
                break
    winners = {"reversed", "vacated", "granted"} & set(found)
    losers = {"affirmed", "denied"} & set(found)
    if winners and losers:
        return "mixed", "both " + " and ".join(repr(found[k]) for k in sorted(winners | losers))
    for label in ("reversed", "vacated", "granted", "affirmed", "denied"):
        if label in found:
            return label, f"matched {found[label]!r}"
    if "dismissed" in found:
        return "dismissed", f"matched {found['dismissed']!r}"
    return None, "no disposition statement found"


def disposition_outcome(disposition: Any) -> str | None:
    """``"petitioner"`` (appellant) for reversed/vacated/granted, ``"respondent"`` for affirmed/denied, else None."""
    return OUTCOME_BY_DISPOSITION.get(str(disposition)) if disposition is not None else None
