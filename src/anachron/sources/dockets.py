"""Supreme Court docket numbers as join keys (Oyez, SCDB, the legal task)."""

from __future__ import annotations

import re
from typing import Any

from anachron.frames import is_null

#: Original-jurisdiction dockets: "141 Orig", "141-orig", "141, ORIG.", "141 Original", the Court's
#: electronic "22O141" (its first two digits, "22" in practice, mark the original docket, not a term), "22O141 ORIG",
#: "Orig. 141"; separators are spaces, commas, dots, dashes or underscores.
_ORIG_DOCKETS = (
    re.compile(r"(?:\d{2}\s*[-_]?\s*o\s*[-_]?\s*)?(\d+)[\s,.\-_–—]*orig(?:inal)?\.?"),
    re.compile(r"\d{2}\s*[-_]?\s*o\s*[-_]?\s*(\d+)"),
    re.compile(r"orig(?:inal)?\.?[\s,\-_]*(?:no\.?\s*)?(\d+)"),
)


def normalize_docket(docket: Any) -> str | None:
    """Canonical docket key for joining Oyez, SCDB and other lists.

    ``"17-1268"`` stays ``"17-1268"``; an original-jurisdiction docket in any of the spellings
    the Court, Oyez and SCDB use (``"126 Orig"``, ``"141-orig"``, ``"142orig"``, ``"No. 142,
    Orig."``, ``"126, ORIG."``, ``"141 Original"``, ``"Orig. 141"``, the Court's ``"22O141"``
    and ``"22O141 ORIG"``) becomes ``"<n>-orig"`` (leading zeros dropped: ``"22O065"`` ->
    ``"65-orig"``). Whitespace, a leading ``"No."`` and trailing punctuation are dropped;
    letters are lower-cased. Returns None for an empty value.
    """
    if is_null(docket):
        return None
    s = str(docket).strip().lower()
    if not s or s in {"nan", "none", "null"}:
        return None
    s = re.sub(r"^no\.?\s*", "", s).strip(" ,;")
    for pattern in _ORIG_DOCKETS:
        m = pattern.fullmatch(s)
        if m:
            return f"{int(m.group(1))}-orig"
    s = re.sub(r"\s+", "", s).strip(".,;")
    return s or None
