"""Legal: the claim rules for the instance's own outcome (categories A4 and A5).

A claim states the outcome (A4) when the grounded check says it states the deciding court's
ruling in this case (:func:`anachron.tasks.legal.grounding.states_ruling`: the same decision,
so the two layers agree): a decision signal (a verb of deciding, an opinion form, a vote split
of the Court's size) whose subject is the deciding court or this case, not a lower court,
agency or arbitrator, not another case cited, not hedged, not dated before the cutoff. For an
appellate case the deciding court is the court of appeals itself. A consequence (A5,
"following the ruling, ...") about a lower court or another case is not this case's.
"""

from __future__ import annotations

from typing import Any, Mapping

from anachron.tasks.legal.grounding import LOWER_COURT, case_mentions, states_ruling

#: Nouns naming a court outcome ("following the ruling", "praised the decision").
OUTCOME_NOUNS = r"ruling|decision|judgment|verdict|opinion|holding|outcome"


def outcome_rule(text: str, context: Mapping[str, Any]) -> str | None:
    """``A4:legal:ruling-in-this-case``, or None (see the module docstring)."""
    return "A4:legal:ruling-in-this-case" if states_ruling(text, context) else None


def is_consequence(text: str, context: Mapping[str, Any]) -> bool:
    """Not a consequence of this case's outcome when the claim does not cite this case and
    names a lower court or cites another case ("Following the Tenth Circuit's ruling, ...")."""
    cites, _, other_case = case_mentions(text, context)
    return bool(cites) or not (LOWER_COURT.search(text) or other_case)
