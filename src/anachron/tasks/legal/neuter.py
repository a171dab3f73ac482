"""The legal task's anonymiser for the entity-neutered probe (docs/metrics.md#probes).

The parties become "Petitioner" and "Respondent", the case "Petitioner v. Respondent", the docket
"withheld"; inside the facts, the question and the decision under review each party's names are
replaced by its role, consistently. Court, term and cutoff stay.

A party's forms (:mod:`anachron.tasks.neutering`): its full name, its name up to the first comma
("Gregory P. Warger") and its side of the case name ("Warger"), each only where the party identifies
the case (:func:`anachron.tasks.legal.parties.party_key`): the United States, a state or an official
sued in that capacity is a party to many cases, so it is replaced in the party fields only and is no
form (the facts keep "the State of Texas"). A case whose parties are all such litigants cannot be told apart by a name:
``names_are_common_words``.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from anachron.tasks.legal.parties import party_key
from anachron.tasks.neutering import Neutering, ProbeSkip, distinctive, replace_names

#: Neutral names of the two sides.
PETITIONER, RESPONDENT = "Petitioner", "Respondent"
#: The neutral docket number.
DOCKET = "withheld"
#: Text fields whose party names are replaced.
TEXT_FIELDS = ("facts", "question", "lower_court")


def _head(party: str) -> str:
    """A party's name up to its first comma or "et al." ("Coinbase, Inc." -> "Coinbase")."""
    return re.split(r",|\bet\.?\s+al\b", party, maxsplit=1, flags=re.I)[0].strip()


def _side_names(party: str, side: str) -> list[str]:
    """The names of one party: its full name, its head, and its side of the case name (which is how
    the case calls it: "Heien" for "Nicholas B. Heien" in "Heien v. North Carolina")."""
    return list(dict.fromkeys(n for n in (party.strip(), _head(party), side.strip()) if n))


def neuter_legal(inputs: Mapping[str, Any]) -> Neutering:
    """Anonymise a legal instance's parties and case.

    Raises:
        ProbeSkip: ``no_named_entity`` without parties; ``names_are_common_words`` when no party
            identifies the case.
    """
    petitioner, respondent = str(inputs.get("petitioner") or ""), str(inputs.get("respondent") or "")
    if not petitioner and not respondent:
        raise ProbeSkip("no_named_entity", "the case names no party")
    sides = re.split(r"\s+v\.?\s+", str(inputs.get("case_name") or ""), maxsplit=1)
    sides = [re.sub(r",?\s*et\.?\s+al\.?$", "", s).strip() for s in sides] + ["", ""]
    mapping: dict[str, str] = {}
    forms: list[str] = []
    for party, side, role in ((petitioner, sides[0], PETITIONER), (respondent, sides[1], RESPONDENT)):
        if party_key(party or side) is None:  # a generic litigant or an official: named in the fields only
            continue
        names = _side_names(party, side)
        for n in names:
            mapping.setdefault(n, role)
        forms += [n for n in names if distinctive(n) and party_key(n) is not None]
    forms = list(dict.fromkeys(forms))
    if not forms:
        raise ProbeSkip("names_are_common_words", f"no party of {inputs.get('case_name')!r} identifies the case")
    new = dict(inputs)
    new.update(case_name=f"{PETITIONER} v. {RESPONDENT}", petitioner=PETITIONER, respondent=RESPONDENT)
    if "docket" in new:
        new["docket"] = DOCKET
    for key in TEXT_FIELDS:
        new[key] = replace_names(new.get(key), mapping)
    return Neutering(new, None, tuple(forms), (PETITIONER, RESPONDENT, f"{PETITIONER} v. {RESPONDENT}", DOCKET))
