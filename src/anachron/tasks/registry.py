"""Look up a task implementation by its config name."""

from __future__ import annotations

from anachron.errors import ConfigError
from anachron.tasks.base import Task

#: Task names the workflow knows, mapped to "module:class".
TASKS = {
    "stock": "anachron.tasks.stock:StockTask",
    "salary": "anachron.tasks.salary:SalaryTask",
    "legal": "anachron.tasks.legal:LegalTask",
    "forecast": "anachron.tasks.forecast:ForecastTask",
}


def get_task(name: str) -> Task:
    """Return the :class:`Task` for ``name``; raise :class:`ConfigError` for an unknown name."""
    if name not in TASKS:
        raise ConfigError(f"unknown task {name!r} (config key run.tasks); known: {sorted(TASKS)}")
    module, cls = TASKS[name].split(":")
    import importlib

    return getattr(importlib.import_module(module), cls)()
