"""Look up a task implementation by its config name.

A task is a package ``anachron/tasks/<name>/`` whose ``__init__`` exports its
:class:`~anachron.tasks.base.Task` subclass (``name = "<name>"``): the registry finds every such
package by its folder (:data:`TASKS`, no import until the task is used), so adding a task is that
folder and nothing else. From outside the package, a plugin module (:mod:`anachron.plugins`, config
key ``plugins``) calls :func:`register_task`. Every generic module finds a task here.
"""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path
from typing import Union

from anachron.errors import ConfigError
from anachron.plugins import load_env_plugins
from anachron.tasks.base import Task

_ORDER = ("stock", "salary", "legal", "forecast")  # the papers' order, then the other folders by name


def _task_packages() -> dict[str, str]:
    """``{name: "anachron.tasks.<name>"}`` for every task folder of this package (no import)."""
    found = sorted(i.name for i in pkgutil.iter_modules([str(Path(__file__).parent)]) if i.ispkg)
    names = [n for n in _ORDER if n in found] + [n for n in found if n not in _ORDER]
    return {n: f"anachron.tasks.{n}" for n in names}


#: Task names the workflow knows, mapped to "module" or "module:class" (imported on first use) or a class.
TASKS: dict[str, Union[str, type[Task]]] = _task_packages()

#: (name, entry) -> instance; tasks are stateless, so one instance per registry entry serves all.
_INSTANCES: dict[tuple[str, Union[str, type[Task]]], Task] = {}


def register_task(name: str, cls: Union[str, type[Task]]) -> None:
    """Register (or replace) task ``name``: a :class:`Task` subclass, its ``"module:class"`` path, or a
    module that exports exactly one Task subclass named ``name``."""
    TASKS[name] = cls


def _task_class(name: str, entry: str) -> type[Task]:
    module, _, attr = entry.partition(":")
    mod = importlib.import_module(module)
    if attr:
        return getattr(mod, attr)
    found = [v for v in vars(mod).values() if isinstance(v, type) and issubclass(v, Task) and getattr(v, "name", None) == name]
    if len(found) != 1:
        raise ConfigError(f"task package {module} must export one Task subclass with name = {name!r}; found {len(found)}")
    return found[0]


def find_task(name: str | None) -> Task | None:
    """The :class:`Task` registered as ``name``, or None for an unknown (or empty) name."""
    if str(name or "") not in TASKS:
        load_env_plugins()
    entry = TASKS.get(str(name or ""))
    if entry is None:
        return None
    key = (str(name), entry)
    if key not in _INSTANCES:
        cls = _task_class(str(name), entry) if isinstance(entry, str) else entry
        _INSTANCES[key] = cls()
    return _INSTANCES[key]


def get_task(name: str) -> Task:
    """Return the :class:`Task` for ``name``; raise :class:`ConfigError` for an unknown name."""
    task = find_task(name)
    if task is None:
        raise ConfigError(f"unknown task {name!r} (config key run.tasks); known: {sorted(TASKS)}")
    return task


def task_config_schema(name: str) -> dict | None:
    """The JSON Schema of the config block ``tasks.<name>``: the Task class's ``config_schema``, else
    the ``CONFIG_SCHEMA`` of the package that defines it; None when the task has no settings.

    Raises:
        ConfigError: an unknown task.
    """
    task = get_task(name)
    schema = getattr(type(task), "config_schema", None)
    if schema is None:
        module = type(task).__module__
        package = module if module in TASKS.values() else module.rpartition(".")[0] or module
        schema = getattr(importlib.import_module(package), "CONFIG_SCHEMA", None)
    return schema


def task_names() -> list[str]:
    """Every registered task name (the folders, then the plugins'), in registry order."""
    load_env_plugins()
    return list(TASKS)


def all_tasks() -> list[Task]:
    """Every registered task, in registry order."""
    return [get_task(name) for name in task_names()]
