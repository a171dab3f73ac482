"""Case names and parties of the legal task, normalised for joining and for the overlap checks.

:func:`case_name_key` (a case name's key), :func:`case_parties` (its two sides), :func:`party_key`
(one party's identifying key, None for officials and generic litigants) and the party keys of a case
(:func:`row_parties`, :func:`party_counts`) (docs/tasks.md#legal: train cases sharing a name or a
distinctive party with an eval case are dropped).
"""

from __future__ import annotations

import re
from typing import Any, Mapping

import pandas as pd

_NAME_DROP = {
    "et", "al", "inc", "llc", "llp", "lp", "ltd", "plc", "corp", "corporation", "co", "company", "the", "na",
}
_GENERIC_PARTIES = {
    "united states", "us", "usa", "district of columbia", "puerto rico", "commissioner", "in re", "doe", "john doe",
    "alabama", "alaska", "arizona", "arkansas", "california", "colorado", "connecticut", "delaware", "florida",
    "georgia", "hawaii", "idaho", "illinois", "indiana", "iowa", "kansas", "kentucky", "louisiana", "maine",
    "maryland", "massachusetts", "michigan", "minnesota", "mississippi", "missouri", "montana", "nebraska", "nevada",
    "new hampshire", "new jersey", "new mexico", "new york", "north carolina", "north dakota", "ohio", "oklahoma",
    "oregon", "pennsylvania", "rhode island", "south carolina", "south dakota", "tennessee", "texas", "utah",
    "vermont", "virginia", "washington", "west virginia", "wisconsin", "wyoming",
}



def case_name_key(name: Any) -> str:
    """Normalised case name for overlap checks.

    Lower case; "&" -> "and"; "U.S." -> "united states"; "United States of America" ->
    "united states"; punctuation dropped; "vs."/"v." -> "v"; "et al.", corporate suffixes
    (Inc., LLC, Corp., Co., Ltd.) and "the" removed; whitespace collapsed.
    "Smith v. Acme Widgets, Inc., et al." and "SMITH v. ACME WIDGETS" give the same key.
    """
    s = str(name or "").lower().replace("&", " and ")
    s = re.sub(r"\bu\.\s?s\.(?=[\s,]|$)", " united states ", s)
    s = s.replace(".", "")
    s = re.sub(r"[^\w\s]", " ", s)
    tokens = [t for t in s.split() if t not in _NAME_DROP]
    s = " ".join("v" if t in {"v", "vs"} else t for t in tokens)
    s = s.replace("united states of america", "united states")
    return s


def case_parties(name: Any) -> list[str]:
    """The two sides of a normalised case name (:func:`case_name_key` split at " v ")."""
    key = case_name_key(name)
    parts = key.split(" v ", 1)
    parts = [re.sub(r"\bex rel\b.*$", "", p).strip() for p in parts]
    return [p for p in parts if p]


_OFFICIAL = re.compile(
    r"\b(?:secretary|attorney\s+general|solicitor\s+general|commissioner|director|warden|governor|president|"
    r"administrator|superintendent|sheriff|chair(?:man|woman|person)?|acting|officer|mayor|judge|comptroller|"
    r"treasurer|chief|official\s+capacity|superintendent)\b",
    re.I,
)


def party_key(full_name: Any) -> str | None:
    """Identifying key of one party's full name, or None when it identifies nothing.

    An official sued in that capacity ("Nancy A. Berryhill, Acting Commissioner of Social
    Security", "Jefferson B. Sessions III, Attorney General") gives None: the same official
    is a party to many unrelated cases. Otherwise the name up to its first comma or
    "et al." (so "Coinbase, Inc." -> "coinbase"), with a leading "State of" /
    "Commonwealth of" dropped, normalised like :func:`case_name_key`; the United States,
    the states and other generic litigants give None.
    """
    s = str(full_name or "").strip()
    if not s or _OFFICIAL.search(s):
        return None
    s = re.split(r",|\bet\.?\s+al\b", s, maxsplit=1, flags=re.I)[0]
    key = case_name_key(s)
    key = re.sub(r"^(?:state|commonwealth|people of the state) of\s+", "", key)
    if not key or len(key) <= 2 or key in _GENERIC_PARTIES:
        return None
    return key


def row_parties(r: Mapping[str, Any]) -> set[str]:
    """The :func:`party_key` of a case's ``petitioner`` and ``respondent`` that identify someone."""
    return {k for k in (party_key(r.get("petitioner")), party_key(r.get("respondent"))) if k}


def party_counts(frames: list[pd.DataFrame]) -> dict[str, int]:
    """How many cases of the frames name each party key."""
    counts: dict[str, int] = {}
    for df in frames:
        if df is None or df.empty:
            continue
        for r in df.to_dict("records"):
            for p in row_parties(r):
                counts[p] = counts.get(p, 0) + 1
    return counts
