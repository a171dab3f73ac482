"""The salary task's anonymiser for the entity-neutered probe (docs/metrics.md#probes).

The player becomes "the player"; sport, league, free-agency year, status and the cutoff stay (the
prompt names no team). Forms that re-identify him (:mod:`anachron.tasks.neutering`): his full name,
and his surname when it is distinctive (:func:`anachron.tasks.neutering.person_forms`).
"""

from __future__ import annotations

from typing import Any, Mapping

from anachron.tasks.neutering import Neutering, ProbeSkip, person_forms

#: The player's neutral name.
PLAYER = "the player"


def neuter_salary(inputs: Mapping[str, Any]) -> Neutering:
    """Anonymise a salary instance's player.

    Raises:
        ProbeSkip: ``no_named_entity`` when the instance names no player.
    """
    player = str(inputs.get("player") or "").strip()
    if not player:
        raise ProbeSkip("no_named_entity", "the instance names no player")
    return Neutering({**inputs, "player": PLAYER}, None, tuple(person_forms(player)), (PLAYER,))
