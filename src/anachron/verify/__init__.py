"""Claim-level verification (DESIGN §5): dates, plausibility rules, grounded checks."""

from __future__ import annotations

import os
from typing import Mapping

from anachron.tasks.registry import find_task
from anachron.verify.layers.grounded import Grounding


def make_grounding(task: str, inputs: Mapping[str, str | os.PathLike[str]]) -> Grounding | None:
    """The grounded checks for ``task`` built from its point-in-time data files.

    Args:
        task: task name.
        inputs: named data files (the task's :meth:`~anachron.tasks.base.Task.grounding_inputs`;
            others are ignored, a missing one drops its check).

    Returns:
        The task's :meth:`~anachron.tasks.base.Task.make_grounding`, or None when the task has
        none (or is unknown). Stock: price, EDGAR and index-change checks
        (:mod:`anachron.verify.layers.market`); forecast: the question's resolution check, then the
        same market checks; salary: the contract check; legal: the decision check.
    """
    t = find_task(task)
    return t.make_grounding(inputs) if t is not None else None
