"""Look up a task implementation by its config name.

One registry maps task names to :class:`~anachron.tasks.base.Task` classes; adding a task
is a new package ``anachron/tasks/<name>/`` plus one line in :data:`TASKS` (or, from
outside the package, :func:`register_task`). Every generic module finds a task here.
"""

from __future__ import annotations

import importlib
from typing import Union

from anachron.errors import ConfigError
from anachron.tasks.base import Task

#: Task names the workflow knows, mapped to "module:class" (imported on first use) or a class.
TASKS: dict[str, Union[str, type[Task]]] = {
    "stock": "anachron.tasks.stock:StockTask",
    "salary": "anachron.tasks.salary:SalaryTask",
    "legal": "anachron.tasks.legal:LegalTask",
    "forecast": "anachron.tasks.forecast:ForecastTask",
}

#: (name, entry) -> instance; tasks are stateless, so one instance per registry entry serves all.
_INSTANCES: dict[tuple[str, Union[str, type[Task]]], Task] = {}


def register_task(name: str, cls: Union[str, type[Task]]) -> None:
    """Register (or replace) task ``name``: a :class:`Task` subclass or its ``"module:class"`` path."""
    TASKS[name] = cls


def find_task(name: str | None) -> Task | None:
    """The :class:`Task` registered as ``name``, or None for an unknown (or empty) name."""
    entry = TASKS.get(str(name or ""))
    if entry is None:
        return None
    key = (str(name), entry)
    if key not in _INSTANCES:
        if isinstance(entry, str):
            module, cls = entry.split(":")
            entry = getattr(importlib.import_module(module), cls)
        _INSTANCES[key] = entry()
    return _INSTANCES[key]


def get_task(name: str) -> Task:
    """Return the :class:`Task` for ``name``; raise :class:`ConfigError` for an unknown name."""
    task = find_task(name)
    if task is None:
        raise ConfigError(f"unknown task {name!r} (config key run.tasks); known: {sorted(TASKS)}")
    return task


def all_tasks() -> list[Task]:
    """Every registered task, in registry order."""
    return [get_task(name) for name in TASKS]
