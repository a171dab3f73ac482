"""Supreme Court docket numbers as join keys (Oyez, SCDB, the legal task)."""

from __future__ import annotations

import re
from typing import Any

from anachron.frames import is_null

#: Brackets that may wrap a token of an original docket ("141 (Orig.)", "(141 Orig)", "[22O141]").
_BRACKETS = re.compile(r"[()\[\]{}]")
#: One original-jurisdiction marker: "orig", "orig.", "original", "original." (lower case), as a
#: word of its own or glued to the number ("142orig"), never inside a longer word ("origin").
_ORIG_MARKER = re.compile(r"(?<![a-z])orig(?:inal)?(?![a-z])\.?")
#: The Court's electronic original docket "22O141": two digits (in practice "22"; they mark the
#: original docket, not a term), the letter O, the number (leading zeros allowed).
_COURT_ORIG = re.compile(r"\d{2}\s*[-_]?\s*o\s*[-_]?\s*(\d+)")
#: A leading "No." / "No".
_NO_PREFIX = re.compile(r"^no\.?\s*")
#: Separators and punctuation around the tokens of a docket (spaces, commas, dots, dashes, underscores).
_SEPARATORS = " \t\n,.;:-_–—"


def _original_number(s: str) -> int | None:
    """The number of an original-jurisdiction docket spelled ``s`` (lower case, stripped), else None.

    The mechanism, independent of the order and repetition of the tokens: brackets
    become spaces, every orig/original marker (:data:`_ORIG_MARKER`) is taken out and
    counted, separators and a leading ``"no."`` are dropped; what is left must be the
    Court's ``"22O<n>"`` (with or without a marker) or a bare ``<n>`` with at least one
    marker. Anything else left over (``"17-1268"``, a second number, a year) means an
    ordinary docket: None.
    """
    s = _BRACKETS.sub(" ", s)
    rest, markers = _ORIG_MARKER.subn(" ", s)
    rest = _NO_PREFIX.sub("", rest.strip(_SEPARATORS)).strip(_SEPARATORS)
    m = _COURT_ORIG.fullmatch(rest)
    if m:
        return int(m.group(1))
    if markers and rest.isdigit() and rest.isascii():
        return int(rest)
    return None


def normalize_docket(docket: Any) -> str | None:
    """Canonical docket key (``str``) for joining Oyez, SCDB and other lists.

    ``"17-1268"`` stays ``"17-1268"``. An original-jurisdiction docket becomes
    ``"<n>-orig"`` (leading zeros dropped: ``"22O065"`` -> ``"65-orig"``) in any of the
    spellings the Court, Oyez and SCDB use: a marker ``Orig``/``Orig.``/``Original`` (any
    case) after or before the number (``"126 Orig"``, ``"141-orig"``, ``"142orig"``,
    ``"No. 142, Orig."``, ``"126, ORIG."``, ``"141 Original"``, ``"Orig. 141"``), the Court's
    electronic ``"22O141"`` with or without a marker (``"22O141 ORIG"``), the marker or the
    whole docket in parentheses or brackets (``"141 (Orig.)"``, ``"22O141 (ORIG)"``,
    ``"(141 Orig)"``, ``"No. 141 (Original)"``), and the marker repeated (``"141 ORIG ORIG"``,
    ``"22O141 ORIG. ORIG"``, ``"141, Orig., Orig."``); separators are spaces, commas, dots,
    dashes or underscores. ``"22 Orig."`` is ``"22-orig"`` (two digits and a marker, not the
    Court's ``"22O"`` prefix).

    Any other docket is kept as written, except that whitespace, a leading ``"No."`` and
    trailing ``.,;`` are dropped and letters lower-cased (``"A-123"`` -> ``"a-123"``);
    its parentheses stay (``"17-1268 (2019)"`` -> ``"17-1268(2019)"``, ``"20-1199 (ORIG)"``
    -> ``"20-1199(orig)"``: a marker only makes an original docket beside a bare number).
    Returns None for an empty value (None, NaN, ``""``, ``"nan"``, ``"none"``, ``"null"``,
    ``"No."``). Never raises.
    """
    if is_null(docket):
        return None
    s = str(docket).strip().lower()
    if not s or s in {"nan", "none", "null"}:
        return None
    s = _NO_PREFIX.sub("", s).strip(" ,;")
    n = _original_number(s)
    if n is not None:
        return f"{n}-orig"
    s = re.sub(r"\s+", "", s).strip(".,;")
    return s or None
