"""Salary: the claim rules for the instance's own outcome (categories A4 and A5).

A claim states the outcome (A4) when the grounded check says it states this contract
(:func:`anachron.tasks.salary.grounding.states_contract`: the same decision, so the two layers
agree), or, more broadly, when it names the player (:func:`anachron.names.name_in`, surname
allowed) with contract words, is not hedged, not dated entirely before the cutoff, not about
the previous team alone, and carries a sum, the new team, a post-cutoff date or a signing
verb. A consequence (A5, "after signing with ...") about the previous team alone is the
history of the earlier contract, not this one's.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from anachron.names import name_in, team_in
from anachron.tasks.salary.grounding import states_contract
from anachron.verify.features import all_before, context_cutoff, periods_after
from anachron.words import HEDGE_SPECULATIVE

#: Nouns naming a contract outcome ("following the signing", "praised the deal").
OUTCOME_NOUNS = r"contract|signing|deal|agreement|move|outcome"

_CONTRACT = re.compile(
    r"\b(sign(?:ed|s|ing) with|agreed to|agreed on|agreement with|inked|re-signed|aav|average annual value|"
    r"per (?:year|season)|annually|a year|contract|deal|offer sheet|extension)\b",
    re.I,
)
_SIGNING = re.compile(r"\b(sign(?:ed|s|ing)|agreed|inked|re-signed|join(?:ed|s|ing))\b", re.I)
_MONEY = re.compile(r"\$\s?[0-9]|[0-9](?:\.[0-9]+)?\s*(?:million|billion|m\b|mm\b)", re.I)


def _team(text: str, context: Mapping[str, Any], key: str) -> bool:
    """Whether ``text`` names the context's ``team`` or ``previous_team`` (the player's name masked)."""
    return team_in(text, context.get(key), context.get("league"), skip=str(context.get("player") or ""))


def outcome_rule(text: str, context: Mapping[str, Any]) -> str | None:
    """``A4:salary:the-contract``, or None (see the module docstring)."""
    if states_contract(text, context):
        return "A4:salary:the-contract"
    player = str(context.get("player") or "")
    if not name_in(text, player, by_surname=True) or not _CONTRACT.search(text) or HEDGE_SPECULATIVE.search(text):
        return None
    cutoff = context_cutoff(context)
    if all_before(text, cutoff):
        return None
    if _team(text, context, "previous_team") and not _team(text, context, "team"):
        return None
    if _MONEY.search(text) or _team(text, context, "team") or periods_after(text, cutoff) or _SIGNING.search(text):
        return "A4:salary:the-contract"
    return None


def is_consequence(text: str, context: Mapping[str, Any]) -> bool:
    """Not a consequence of this contract when the claim names the previous team and not the new one."""
    return not (_team(text, context, "previous_team") and not _team(text, context, "team"))
