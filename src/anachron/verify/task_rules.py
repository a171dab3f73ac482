"""What the verifier asks of a task: the hooks a :class:`anachron.tasks.base.Task` implements.

The verifier sits below the tasks: it never looks a task up by name. Its callers (the workflow
scripts, the methods, training) hold the task and hand it in — as ``context["task"]`` for the
claim categoriser and the extractors, as an argument elsewhere — and the verifier calls only the
hooks of :class:`TaskRules`. A task plugs its rules in by implementing them (docs/adding-a-task.md).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Mapping, Protocol, runtime_checkable

if TYPE_CHECKING:  # pragma: no cover - typing only
    from anachron.verify.calibration.planting import Planter
    from anachron.verify.layers.grounded import Grounding

#: The outcome nouns of the A5 rule when no task is in the context (docs/verification.md#categories).
GENERIC_OUTCOME_NOUNS = "outcome"


def generic_description(name: str) -> tuple[str, str]:
    """``(task_description, target_event)`` of a task that describes nothing more specific
    (the default of :meth:`anachron.tasks.base.Task.describe`, the LLM extractor's prompt)."""
    return (f"Prediction task: {name}.", "the outcome being predicted")


@runtime_checkable
class TaskRules(Protocol):
    """The task hooks the verifier calls (docs/adding-a-task.md; :class:`anachron.tasks.base.Task`)."""

    name: str
    outcome_nouns: str

    def describe(self, inputs: dict[str, Any]) -> tuple[str, str]: ...

    def outcome_rule(self, text: str, context: Mapping[str, Any]) -> str | None: ...

    def is_consequence(self, text: str, context: Mapping[str, Any]) -> bool: ...

    def grounding_context(self, row: Any) -> dict[str, Any]: ...

    def make_grounding(self, inputs: Mapping[str, str | os.PathLike[str]]) -> Grounding | None: ...

    def planter(self, *args: Any, **kwargs: Any) -> Planter | None: ...


#: The members of :class:`TaskRules`.
_HOOKS = ("name", "outcome_nouns", "describe", "outcome_rule", "is_consequence", "grounding_context",
          "make_grounding", "planter")
#: Classes whose every instance is a task: the class itself has every hook (:func:`context_task`).
_TASK_CLASSES: set[type] = set()


def context_task(context: Mapping[str, Any] | None) -> TaskRules | None:
    """The task of a categorisation context (``context["task"]``), or None when it has none.

    Raises:
        TypeError: ``context["task"]`` is set but is not a task (a bare name such as ``"stock"``:
            the caller must hand in the task itself, ``anachron.tasks.get_task(name)``).
    """
    task = (context or {}).get("task")
    if task is None:
        return None
    kind = type(task)
    if kind in _TASK_CLASSES:  # a Protocol check reads every hook: once per class, not per claim
        return task
    if isinstance(task, str) or not isinstance(task, TaskRules):
        raise TypeError(
            f"context['task'] must be a task object (anachron.tasks.get_task({task!r})), got {type(task).__name__}"
        )
    if all(hasattr(kind, a) for a in _HOOKS):
        _TASK_CLASSES.add(kind)
    return task
