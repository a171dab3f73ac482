"""Matching keys of person names (players), shared by the sports readers, the salary task and the corpus."""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from anachron.frames import text_or_empty

#: A parenthesised part of a name ("(James)", "(b. 1997-01-02)").
PARENTHESES = re.compile(r"\([^)]*\)")
_SUFFIX = re.compile(r"\b(?:jr|sr|ii|iii|iv|v)\b\.?", re.I)


def normalize_name(name: Any) -> str:
    """Matching key of one name: no accents, parentheses, punctuation or Jr./III suffixes, lower case.

    "Nikola Vučević" -> "nikola vucevic"; "Gary Trent Jr." -> "gary trent".
    """
    s = text_or_empty(name)
    s = unicodedata.normalize("NFKD", PARENTHESES.sub(" ", s))
    s = "".join(ch for ch in s if not unicodedata.combining(ch)).lower()
    s = s.replace("'", "").replace("’", "").replace(".", " ").replace("-", " ")
    s = _SUFFIX.sub(" ", s)
    s = re.sub(r"[^a-z0-9 ]+", " ", s)
    return " ".join(s.split())
