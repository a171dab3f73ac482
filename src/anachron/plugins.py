"""Plugins: modules outside the package that register tasks, methods or sources.

A plugin is an importable module (on ``PYTHONPATH``) whose import registers what it adds, with
:func:`anachron.tasks.registry.register_task`, :func:`anachron.methods.registry.register_method` or
:func:`anachron.sources.registry.register_source` (docs/adding-a-task.md). The config key
``plugins`` names them; :func:`use_plugins` imports them and records them in the environment
variable :data:`PLUGINS_ENV`, so every rule script (a child process of Snakemake) imports the same
modules the first time it asks a registry (:func:`load_env_plugins`).
"""

from __future__ import annotations

import importlib
import os
from typing import Iterable

from anachron.errors import ConfigError

#: The environment variable that lists the plugin modules (comma-separated).
PLUGINS_ENV = "ANACHRON_PLUGINS"
_LOADED: set[str] = set()


def _import(names: Iterable[str], where: str) -> None:
    for name in names:
        name = name.strip()
        if not name or name in _LOADED:
            continue
        try:
            importlib.import_module(name)
        except ImportError as exc:
            raise ConfigError(f"{where}: cannot import plugin {name!r} ({exc}); is it on PYTHONPATH?") from exc
        _LOADED.add(name)


def use_plugins(names: Iterable[str]) -> None:
    """Import the plugin modules ``names`` and add them to :data:`PLUGINS_ENV` for child processes.

    Raises:
        ConfigError: a module cannot be imported (naming the config key ``plugins``).
    """
    names = [n for n in names if n]
    _import(names, "config key plugins")
    have = [n for n in os.environ.get(PLUGINS_ENV, "").split(",") if n]
    os.environ[PLUGINS_ENV] = ",".join(dict.fromkeys([*have, *names]))


def load_env_plugins() -> None:
    """Import the plugins listed in :data:`PLUGINS_ENV` (once each); a no-op when it is unset.

    Raises:
        ConfigError: a listed module cannot be imported.
    """
    value = os.environ.get(PLUGINS_ENV, "")
    if value:
        _import(value.split(","), f"environment variable {PLUGINS_ENV}")
