"""Salary: the grounded check of the contract being predicted (:class:`ContractGrounding`).

The contract is stated in many wordings ("signed a four-year, $120 million contract", "agreed
to a 4-year pact worth about $30M a season", "got $130 million over three years from
Houston", "chose the Clippers on a three-year deal"). The check reads a claim through three
generic mechanisms rather than phrase lists: dollar amounts with the precision they are
written with (:func:`money_amounts`, read by :func:`anachron.money.scan_money`), the contract length (:func:`contract_years`), and
the new team named (:func:`anachron.names.team_in`: nickname, abbreviation or city) with a
verb of signing or joining (:data:`SIGNING`). :func:`states_contract` is the one decision;
the categoriser's A4 rule (``claims``) asks it too.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from typing import Any, Mapping

from anachron.money import scan_money
from anachron.names import name_in, team_in, team_key, teams_named
from anachron.verify.dates import find_periods
from anachron.verify.layers.grounded import GroundedVerdict
from anachron.words import HEDGE_SPECULATIVE, MONTH_WORDS

#: Units that make a number an amount without a currency ("worth 120 million"); a letter ("12 m")
#: or "thousand" needs "$" or "dollars".
_BARE_UNITS = frozenset({"million", "billion", "mil", "mln", "mn"})
_APPROX = re.compile(
    r"(?:\b(?:about|around|roughly|approximately|approx\.?|nearly|almost|close\s+to|some|over|more\s+than|north\s+of|"
    r"under|less\s+than|just\s+(?:over|under)|upwards\s+of|in\s+the\s+neighbou?rhood\s+of)\s*|~\s*)$",
    re.I,
)
# an amount per year: "$30M a season", "$30 million per year", "$30M/yr", "$30M annually"
_PER_YEAR_AFTER = re.compile(r"^\s*(?:(?:per|a|an|each|every)\s+|/\s*)(?:year|yr|season|annum)\b|^\s*annually\b", re.I)
_PER_YEAR_BEFORE = re.compile(r"\b(?:aav|average\s+annual\s+(?:value|salary)|annual(?:\s+average)?(?:\s+salary|\s+value)?|a\s+year|per\s+year)\b"
                              r"(?:\s+(?:of|at|worth|is|was|:))?\s*$", re.I)

_NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
                 "ten": 10, "eleven": 11, "twelve": 12, "a": 1, "single": 1}
# the contract's length: "four-year", "4-year", "three years", "over two seasons", "5 yrs"
_YEARS = re.compile(
    rf"(?<![\d-])(?P<n>\d{{1,2}}|{'|'.join(w for w in _NUMBER_WORDS if w != 'a')})[-\s](?:years?|yrs?|seasons?)\b(?![-\s]old)",
    re.I,
)

#: Verbs of signing or joining (a finished act; "to sign" and "could sign" are not), the nouns
#: of time spent with a team ("his debut", "stint") and the present of playing for it ("is
#: averaging 16 points for", "in his first season with") that presuppose the joining.
SIGNING = re.compile(
    r"\b(?:signed|signs|re-signed|re-signs|inked|inks|agreed|agrees|joined|joins|chose|chooses|committed|"
    r"commits|landed|lands|acquired|acquires|came\s+to\s+terms|reached\s+(?:a|an)\s+(?:deal|agreement|pact)|"
    r"headed\s+to|moved\s+to|went\s+to|became\s+(?:a|an|the)|left\s+(?:the\s+)?[A-Z][\w.]*(?:\s+[A-Z][\w.]*)?\s+for|"
    r"sign-and-trade|signing|(?:his|the)\s+(?:new\s+)?(?:contract|deal|pact|agreement)\s+with|debut|stint|tenure|"
    r"(?:is|are|has\s+been)\s+(?:averaging|playing|starting|shooting|posting|coming\s+off\s+the\s+bench)|"
    r"plays\s+for|suits\s+up\s+for|first\s+(?:season|year|campaign|game|games)\s+(?:with|for|in))\b",
    re.I,
)
#: Nouns and phrases of a contract's terms.
CONTRACT_TERMS = re.compile(
    r"\b(?:contract|deal|pact|agreement|extension|offer\s+sheet|aav|average\s+annual\s+value|salary|"
    r"per\s+(?:year|season)|a\s+(?:year|season)|annually|over\s+\w+\s+(?:years|seasons)|"
    r"earn(?:s|ed|ing)?|paid|pays?|got|gets|committed|worth)\b",
    re.I,
)
#: Courtship before a signing (meetings, talks, interest, offers): not the signing itself.
_COURTSHIP = re.compile(
    r"\b(?:met|meet(?:s|ing|ings)?|talks?|talked|negotiat\w*|interest(?:ed)?|pursu\w*|court(?:ed|ing)|recruit\w*|"
    r"pitch(?:ed|es)?|offer(?:ed|s)?|linked|target(?:ed|s)?|favou?rites?|frontrunners?|considering|mulling)\b",
    re.I,
)
#: The old contract named as such ("his previous deal", "the expiring contract").
_OLD_DEAL = re.compile(
    r"\b(?:previous|prior|old|former|expiring|expired|last|rookie)\s+(?:\w+[-\s]year\s+|\w+[-\s]scale\s+)?"
    r"(?:contract|deal|pact|agreement|extension)\b",
    re.I,
)
#: The new contract referred to without its team ("his new deal runs four years").
_NEW_DEAL = re.compile(r"\bnew\s+(?:\w+[-\s]year\s+)?(?:contract|deal|pact|agreement)\b", re.I)
#: Marks of an earlier stint ("had signed", "originally", "his rookie deal", "drafted").
_ANTERIOR = re.compile(
    r"\b(?:had\s+(?:\w+\s+)?(?:signed|agreed|joined|inked)|originally|previously|first\s+signed|as\s+a\s+rookie|"
    r"draft(?:ed|s)?|draft\s+rights|"
    r"rookie(?:[-\s]scale)?\s+(?:deal|contract)|earlier\s+in\s+his\s+career|his\s+first\s+stint)\b",
    re.I,
)
_PRONOUN = re.compile(r"\b(?:[Hh]e|[Hh]is|him)\b")
# capitalised words in a row: a name (a person's, unless it is a team, a place or a date)
_CAPITALISED = re.compile(r"\b[A-Z][\w'’.-]*(?:\s+[A-Z][\w'’.-]*)+")
_NOT_A_NAME = frozenset(
    "the a an in on at after before with for his her their its this that as by from to of and but when while".split()
) | frozenset(MONTH_WORDS) | frozenset("nba nhl wnba mlb nfl".split())
#: Verbs of staying with the same team (a re-signing: the new team is the previous one).
RE_SIGNING = re.compile(r"\b(?:re-sign(?:ed|s)|re-upped|extension|extended|stay(?:ed|s)|remain(?:ed|s)|return(?:ed|s))\b", re.I)


#: A stated amount matches the real one within half a unit of its last written digit
#: ("$27 million" for $27.25M) or this share of it.
EXACT_REL_TOL = 0.01
#: A hedged amount ("about $27M"), or one stated with the contract's length or new team ("three
#: years, $63 million" for $62.1M: reports round and include incentives), within this share.
REPORTED_REL_TOL = 0.05
#: A signing more than this long before the instance's signing date is an earlier contract.
PREVIOUS_CONTRACT_GAP = dt.timedelta(days=90)


@dataclass(frozen=True)
class Amount:
    """One dollar amount of a claim: ``value`` in USD, ``half_unit`` (half a unit of its last
    written digit: "$25.5M" -> 50,000), ``approx`` (hedged: "about $25M") and ``per_year``
    ("$25M a season", "an AAV of $25M")."""

    value: float
    half_unit: float
    approx: bool
    per_year: bool


def money_amounts(text: str) -> list[Amount]:
    """Dollar amounts in ``text`` (:class:`Amount`); numbers without "$", "dollars" or a written
    unit such as "million" are not amounts ("3 years", "2019")."""
    out = []
    for m in scan_money(text):
        if m.currency not in (None, "USD") or not (m.currency_before or m.currency_after or m.unit in _BARE_UNITS):
            continue
        before, after = text[max(0, m.start - 40) : m.start], text[m.end : m.end + 20]
        out.append(Amount(
            m.value,
            m.half_unit,
            bool(_APPROX.search(before)),
            bool(_PER_YEAR_AFTER.search(after) or _PER_YEAR_BEFORE.search(before)),
        ))
    return out


def contract_years(text: str) -> set[int]:
    """Contract lengths stated in ``text`` ("four-year" -> 4, "over 3 seasons" -> 3)."""
    out = set()
    for m in _YEARS.finditer(text):
        n = m["n"].lower()
        v = int(n) if n.isdigit() else _NUMBER_WORDS.get(n)
        if v and 1 <= v <= 15:
            out.add(v)
    return out


def _num(v: Any) -> float | None:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if f == f and f > 0 else None


def _amount_match(fact: str, instance: Mapping[str, Any], corroborated: bool) -> str | None:
    """The matched figure ("$30,000,000 AAV") when an amount of ``fact`` is the contract's AAV or
    total value, else None.

    A per-year amount ("$30M a season") is compared with the AAV, and times each stated length
    with the total; any other amount with both, and divided by each stated length with the AAV.
    """
    targets = {"AAV": _num(instance.get("aav")), "total value": _num(instance.get("total_value"))}
    stated_years = contract_years(fact)
    for a in money_amounts(fact):
        share = REPORTED_REL_TOL if (a.approx or corroborated) else EXACT_REL_TOL
        if a.per_year:
            pairs = [("AAV", a.value, a.half_unit)] + [("total value", a.value * y, a.half_unit * y) for y in stated_years]
        else:
            pairs = [("AAV", a.value, a.half_unit), ("total value", a.value, a.half_unit)]
            pairs += [("AAV", a.value / y, a.half_unit / y) for y in stated_years]
        for what, value, half in pairs:
            target = targets[what]
            if target is not None and abs(value - target) <= max(share * target, half):
                return f"${target:,.0f} {what}"
    return None


def _earlier_contract(fact: str, instance: Mapping[str, Any]) -> str | None:
    """Why ``fact`` is about another contract of the player (an earlier one), or None.

    * every date the claim mentions ends more than :data:`PREVIOUS_CONTRACT_GAP` before the
      signing date and before the cutoff ("On July 7, 2017, the Heat signed ..."), or
    * it names a team of the league and not the new ``team`` (e.g. the ``previous_team``), or
    * it calls the contract the old one ("his previous deal", "the expiring contract").
    """
    if _OLD_DEAL.search(fact):
        return "names the player's previous contract"
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


def _speculative(fact: str) -> bool:
    """Whether ``fact`` is hedged ("expected to", "could", "likely":
    :data:`~anachron.words.HEDGE_SPECULATIVE`); a plain future ("he will earn $30M a season")
    states terms already agreed and is not a hedge."""
    return any(m[0].lower() not in {"will", "won't"} for m in HEDGE_SPECULATIVE.finditer(fact))


def other_people(fact: str, instance: Mapping[str, Any]) -> list[str]:
    """Names in ``fact`` of people other than the player: runs of two or more capitalised
    words, leading function words and dates dropped, that are neither the player's name nor a
    team or city of the league ("Lee Morrow" in "the Pacers signed Lee Morrow")."""
    player = str(instance.get("player") or "")
    own = {w.strip(".,").lower() for w in player.split()}
    out = []
    for m in _CAPITALISED.finditer(fact):
        words = [w.strip(".,'’") for w in m[0].split()]
        while words and words[0].lower() in _NOT_A_NAME:
            words = words[1:]
        if len(words) < 2 or any(w.lower() in _NOT_A_NAME or re.sub(r"['’]s$", "", w.lower()) in own for w in words):
            continue
        name = " ".join(words)
        if not teams_named(name, instance.get("league")):
            out.append(name)
    return out


def _names_player(fact: str, instance: Mapping[str, Any], new_team: bool) -> bool:
    """Whether ``fact`` is about the instance's player: named (full name or surname), or only
    referred to as "he"/"his" next to the new team with no other person named."""
    player = str(instance.get("player") or "")
    if not player:
        return False
    if name_in(fact, player, by_surname=True):
        return True
    return new_team and bool(_PRONOUN.search(fact)) and not other_people(fact, instance)


def states_contract(fact: str, instance: Mapping[str, Any]) -> str | None:
    """Why ``fact`` states the contract being predicted, or None.

    ``instance`` is the salary grounding context (``player``, ``league``, ``team``,
    ``previous_team``, ``signing_date``, ``aav``, ``total_value``, ``years``, ``cutoff_date``).
    The claim must be about the player (named, or "he" beside the new team with no other person
    named) and not about an earlier contract (:func:`_earlier_contract`).

    It must not be hedged (:func:`_speculative`). Then either

    * an amount matches the AAV or the total value (:func:`money_amounts`; directly, or
      per-year x stated years, or total / stated years) with contract wording
      (:data:`CONTRACT_TERMS`, :data:`SIGNING`, a stated length) or the new team, within half a unit of its
      last digit or :data:`EXACT_REL_TOL`; within :data:`REPORTED_REL_TOL` when hedged
      ("about $34M") or corroborated by the contract's length or the new team; or
    * without a matching amount, the new team is named (nickname, abbreviation or city), or
      "his new contract" is, with a verb of signing or joining (of staying, :data:`RE_SIGNING`, when the new team is the
      previous one), or with contract terms and the contract's length; not hedged, not
      courtship (talks, meetings, offers), not marked as an earlier stint, no other person
      named (:func:`other_people`), and no stated amount that contradicts the contract.
    """
    if not instance.get("signing_date"):
        return None
    league, team = instance.get("league"), instance.get("team")
    skip = str(instance.get("player") or "")
    new_team = team_in(fact, team, league, skip=skip) if team else False
    if not _names_player(fact, instance, new_team):
        return None
    if _earlier_contract(fact, instance) or _speculative(fact):
        return None
    signing, terms = SIGNING.search(fact), CONTRACT_TERMS.search(fact)
    stated_years = contract_years(fact)
    years = _num(instance.get("years"))
    years_match = years is not None and int(years) in stated_years
    if signing or terms or stated_years or new_team:
        figure = _amount_match(fact, instance, corroborated=years_match or new_team)
        if figure:
            return f"states the contract being predicted ({figure})"
    if not (new_team or _NEW_DEAL.search(fact)) or HEDGE_SPECULATIVE.search(fact) or _COURTSHIP.search(fact) or _ANTERIOR.search(fact) or other_people(fact, instance):
        return None
    if stated_years and years is not None and not years_match:
        return None  # another length: not this contract
    if any(not a.approx for a in money_amounts(fact)):
        return None  # a precise amount that is not this contract's
    if team_key(league, team) is not None and team_key(league, team) == team_key(league, instance.get("previous_team")):
        signing = RE_SIGNING.search(fact)  # a re-signing: joining the team is not news, staying is
    if signing or (terms and years_match):
        return f"states the player's signing with the {team}"
    return None


class ContractGrounding:
    """Grounded checks for the salary task: a claim that states the instance's own contract
    (:func:`states_contract`) is the outcome itself (category A4): leaked, dated at the
    signing date. Any other claim is left to the other layers (None).

    The instance context (``SalaryTask.grounding_context``) gives ``player``, ``league``,
    ``team``, ``previous_team``, ``signing_date``, ``aav``, ``total_value`` and ``years``.
    A player's earlier contract, other players' deals, league-wide figures and the player's
    statistics are not this contract.
    """

    def check(self, fact: str, instance: dict[str, Any]) -> GroundedVerdict | None:
        """A leaked A4 verdict dated at the signing when ``fact`` states this contract, else None."""
        why = states_contract(fact, instance)
        if why is None:
            return None
        day = dt.date.fromisoformat(str(instance["signing_date"])[:10])
        return GroundedVerdict(day, f"{why}, signed {day}", outcome=True, category="A4")
