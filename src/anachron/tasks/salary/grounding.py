"""Salary: the grounded check of the contract being predicted (:class:`ContractGrounding`)."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from anachron.names import name_in, team_key, teams_named
from anachron.verify.dates import find_periods
from anachron.verify.layers.grounded import GroundedVerdict

_MONEY = re.compile(r"\$\s?(\d+(?:,\d{3})*(?:\.\d+)?)\s*(million|mil|m|billion|bn|b|k)?\b", re.I)
_CONTRACT_WORDS = re.compile(r"\b(sign(?:ed|s|ing)?|contract|deal|agree(?:d|ment)|extension|re-signed|inked|aav|per year|annually)\b", re.I)


def _money_values(text: str) -> list[tuple[float, float, bool]]:
    """Dollar amounts in ``text`` in USD with their precision: ``(value, half_unit, approx)``.

    ``half_unit`` is half a unit of the last digit written ("$25.5M" -> (25_500_000, 50_000));
    ``approx`` is True when the amount is hedged ("about $25M", "roughly $25M", "~$25M").
    """
    scale = {"million": 1e6, "mil": 1e6, "m": 1e6, "billion": 1e9, "bn": 1e9, "b": 1e9, "k": 1e3}
    out = []
    for m in _MONEY.finditer(text):
        digits = m[1].replace(",", "")
        decimals = len(digits.split(".")[1]) if "." in digits else 0
        k = scale.get((m[2] or "").lower(), 1.0)
        approx = bool(_APPROX.search(text[max(0, m.start() - 25) : m.start()]))
        out.append((float(digits) * k, 0.5 * 10 ** (-decimals) * k, approx))
    return out


_APPROX = re.compile(r"(?:\b(?:about|around|roughly|approximately|nearly|almost|close\s+to|some|over|more\s+than|under|less\s+than)\s*|~\s*)$", re.I)


#: A stated contract amount matches the real one within half a unit of its last written digit
#: ("$27 million" for $27.25M) or this share of it; hedged amounts ("about $27M") within ``rel_tol``.
EXACT_REL_TOL = 0.01
#: A signing more than this long before the instance's signing date is an earlier contract.
PREVIOUS_CONTRACT_GAP = dt.timedelta(days=90)


class ContractGrounding:
    """Grounded checks for the salary task: a claim that states the instance's own contract.

    The instance context (``SalaryTask.grounding_context``) gives ``player``, ``league``,
    ``team``, ``previous_team``, ``signing_date``, ``aav``, ``total_value`` and ``years``. A
    claim naming the player (:func:`anachron.names.name_in`: full name, or a surname of 4+
    letters; "Jr."/"III" ignored), with
    contract words and a dollar amount matching the AAV or total value, is the outcome itself
    (category A4): leaked, dated at the signing date. An amount matches within the precision
    it is written with (half a unit of its last digit: "$27 million" matches $27.25M, "$7.25M"
    does not match $7M) or 1% (:data:`EXACT_REL_TOL`); a hedged amount ("about $27M") within
    ``rel_tol``.

    A player's earlier contract can have a similar amount; the claim is then not this one
    and the check does not apply (the rules layer dates it) when

    * every date the claim mentions ends more than :data:`PREVIOUS_CONTRACT_GAP` before the
      signing date and before the cutoff ("On July 7, 2017, the Heat signed ..."), or
    * it names a team of the league and not the new ``team`` (e.g. the ``previous_team``).
    """

    def __init__(self, rel_tol: float = 0.05):
        self.rel_tol = rel_tol

    def _earlier_contract(self, fact: str, instance: dict[str, Any]) -> str | None:
        """Why ``fact`` is about another contract of the player, or None."""
        signing = dt.date.fromisoformat(str(instance["signing_date"])[:10])
        cutoff_raw = instance.get("cutoff_date")
        cutoff = dt.date.fromisoformat(str(cutoff_raw)[:10]) if cutoff_raw else signing
        periods = find_periods(fact)
        limit = min(cutoff, signing - PREVIOUS_CONTRACT_GAP)
        if periods and all(p.end < limit for p in periods):
            return f"dated {periods[-1].text}, before the cutoff"
        league = instance.get("league")
        new_team = team_key(league, instance.get("team"))
        if new_team is not None:
            named = teams_named(fact, league, skip=str(instance.get("player") or ""))
            if named and new_team not in named:
                return f"names another team ({', '.join(sorted(named))})"
        return None

    def check(self, fact: str, instance: dict[str, Any]) -> GroundedVerdict | None:
        """A leaked A4 verdict dated at the signing when ``fact`` states this contract, else None."""
        player = instance.get("player")
        if not player or not name_in(fact, player, by_surname=True) or not _CONTRACT_WORDS.search(fact):
            return None
        targets = [v for v in (instance.get("aav"), instance.get("total_value")) if v and v == v]
        for stated, half_unit, approx in _money_values(fact):
            for target in targets:
                tol = self.rel_tol * float(target) if approx else max(half_unit, EXACT_REL_TOL * float(target))
                if abs(stated - float(target)) <= tol:
                    if self._earlier_contract(fact, instance):
                        return None
                    day = dt.date.fromisoformat(str(instance["signing_date"])[:10])
                    return GroundedVerdict(
                        day,
                        f"states the contract being predicted (${float(target):,.0f}, signed {day})",
                        outcome=True,
                        category="A4",
                    )
        return None
