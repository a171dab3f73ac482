"""Legal: the claim rules for the instance's own outcome (categories A4 and A5).

A claim states the outcome (A4) when it gives the deciding court's ruling in this case:
decision words ("ruled", "reversed", "a 5-4 decision") with the case's name (full or short
"X v. Y", matched on a distinctive party word) or with a party / "the petitioner" and the
court named; not a lower or state court's ruling (the last court named before the decision
word), not another case cited, not hedged, not dated entirely before the cutoff. For an
appellate case the deciding court is the court of appeals itself. A consequence (A5,
"following the ruling, ...") about a lower court or another case is not this case's.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from anachron.names import name_in, names_in
from anachron.tasks.legal.grounding import LOWER_COURT
from anachron.verify.features import HEDGE, all_before, as_list, context_cutoff

#: Nouns naming a court outcome ("following the ruling", "praised the decision").
OUTCOME_NOUNS = r"ruling|decision|judgment|verdict|opinion|holding|outcome"

_DECISION = re.compile(
    r"\b(ruled|rules|held|holds|decided|reversed|affirmed|vacated|remanded|sided with|struck down|upheld|"
    r"dissent(?:ed|ing)?|opinion of the court|in favou?r of|found for|ruling for|[0-9]-[0-9] (?:vote|decision|"
    r"ruling|majority))\b",
    re.I,
)
_SUPREME = re.compile(
    r"\b(U\.?S\.? Supreme Court|(?-i:[Tt]he) Supreme Court|Supreme Court of the United States|justices?|SCOTUS)\b", re.I
)
_THE_COURT = re.compile(r"\b[Tt]he (?:Court|Justices|majority|high court)\b(?!\s+of\s+Appeals|\s+below)")
_CASE_REF = re.compile(
    r"\b(this case|the case|this dispute|the petitioners?|the respondents?|the appellants?|the appellees?)\b", re.I
)
_CASE_CITE = re.compile(r"\b([A-Z][\w.&'-]*(?:\s+[A-Z][\w.&'-]*)*)\s+v\.?s?\.?\s+([A-Z][\w.&'-]*(?:\s+[A-Z][\w.&'-]*)*)")

_GENERIC_PARTY = {"united", "states", "state", "people", "commissioner", "department", "city", "county", "board",
                  "in", "re", "ex", "rel", "the", "of", "america", "u.s", "us", "commonwealth", "inc", "co", "corp"}


def _party_tokens(name: str) -> set[str]:
    return {t.strip(".,'()").lower() for t in name.split()} - {""}


def _case_cites(text: str, case_name: str) -> tuple[bool, bool]:
    """``(this_case, other_case)``: whether ``text`` cites this case by an "X v. Y" name (full or
    short, matched on a distinctive party word) and whether it cites another case (a precedent)."""
    own = _party_tokens(case_name)
    this = other = False
    for m in _CASE_CITE.finditer(text):
        if case_name and (m[0].lower() in case_name.lower() or case_name.lower() in m[0].lower()):
            this = True
            continue
        first = m[1].split()[-1].strip(".,'()").lower()
        second = m[2].split()[0].strip(".,'()").lower()
        if case_name and ((first in own and first not in _GENERIC_PARTY) or (second in own and second not in _GENERIC_PARTY)):
            this = True
            continue
        other = True
    return this, other


def _other_case_cited(text: str, case_name: str) -> bool:
    """True if ``text`` cites an "X v. Y" case other than ``case_name`` (a precedent)."""
    return _case_cites(text, case_name)[1]


def _decided_by_lower_court(text: str) -> bool:
    """True if every decision word in ``text`` belongs to a lower court: the last court named before
    it is a lower court (and no "by the Court" follows it), not the Supreme Court / "the Court"."""
    lower = [m.span() for m in LOWER_COURT.finditer(text)]
    top: list[tuple[int, int]] = []
    for pat in (_SUPREME, _THE_COURT):
        for m in pat.finditer(text):
            a, b = m.span()
            if any(la < b and a < lb and lb > b for la, lb in lower):
                continue  # part of a longer lower-court name ("the Supreme Court of Georgia")
            lower = [(la, lb) for la, lb in lower if not (a <= la and lb <= b)]
            top.append((a, b))
    courts = sorted([(a, True) for a, _ in lower] + [(a, False) for a, _ in top])
    if not any(low for _, low in courts):
        return False
    for d in _DECISION.finditer(text):
        after = text[d.end() : d.end() + 40]
        if re.match(r"\s+by\s+(?:the\s+)?(?:U\.?S\.?\s+)?(?:Supreme\s+)?Court\b", after):
            return False
        before = [low for s, low in courts if s < d.start()]
        if before and not before[-1]:
            return False
        if not before and not any(low for s, low in courts if s > d.start()):
            return False
    return True


def targets_this_case(text: str, context: Mapping[str, Any]) -> bool:
    """True if ``text`` is about this case's deciding court (not a lower court, not a precedent)."""
    case_name = str(context.get("case_name") or "")
    court = str(context.get("court") or "")
    supreme_case = not court or "supreme" in court.lower()
    if _other_case_cited(text, case_name):
        return False
    if supreme_case:
        court_named = bool(_SUPREME.search(text) or _THE_COURT.search(text))
        if _decided_by_lower_court(text):
            return False
    else:
        court_words = re.sub(r"(?i)\b(united states|u\.s\.|court of appeals for the|court of appeals|for the)\b", " ", court)
        court_words = " ".join(court_words.split())
        own = re.compile(re.escape(court_words), re.I) if court_words else None
        court_named = bool(_THE_COURT.search(text)) or (own is not None and own.search(text) is not None)
        lower = re.compile(r"\b(district court|trial court|bankruptcy court|tax court)\b", re.I)
        if lower.search(text) and not court_named:
            return False
        if _SUPREME.search(text) and not court_named:
            return False
    if name_in(text, case_name) or _case_cites(text, case_name)[0]:
        return True
    parties = [str(context.get(k) or "") for k in ("petitioner", "respondent")] + as_list(context.get("parties"))
    if names_in(text, parties) or _CASE_REF.search(text):
        return court_named
    return False


def outcome_rule(text: str, context: Mapping[str, Any]) -> str | None:
    """``A4:legal:ruling-in-this-case``, or None (see the module docstring)."""
    if not _DECISION.search(text) or HEDGE.search(text) or all_before(text, context_cutoff(context)):
        return None
    return "A4:legal:ruling-in-this-case" if targets_this_case(text, context) else None


def is_consequence(text: str, context: Mapping[str, Any]) -> bool:
    """Not a consequence of this case's outcome when the claim is not about this case and names
    a lower court or cites another case ("Following the Tenth Circuit's ruling, ...")."""
    return targets_this_case(text, context) or not (
        LOWER_COURT.search(text) or _other_case_cited(text, str(context.get("case_name") or ""))
    )
