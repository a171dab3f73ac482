"""The sources the generic ``fetch_source`` rule knows, by config name (a plugin adds one with
:func:`register_source`).

Each maps to a module exposing ``fetch(*, snapshot_dir=None, session=None, **params)
-> (DataFrame, manifest dict)``. ``yahoo`` and ``sp500`` have rules of their own
(several tables, window-dependent tickers) and are not listed here.
"""

from __future__ import annotations

import importlib
import os
from typing import Any

import pandas as pd

from anachron.errors import ConfigError
from anachron.plugins import load_env_plugins

SOURCES = {
    "nba": "anachron.sources.prosports",
    "nhl": "anachron.sources.spotrac",
    "oyez": "anachron.sources.oyez",
    "scdb": "anachron.sources.scdb",
    "courtlistener": "anachron.sources.courtlistener",
    "forecastbench": "anachron.sources.forecastbench",
    "edgar": "anachron.sources.edgar",
    "news": "anachron.sources.news",
}

#: Config blocks that hold a source's fetch settings, where not ``sources.<name>``.
SOURCE_CONFIG_PATH = {"forecastbench": ("tasks", "forecast")}
#: Keys of a source block that steer the workflow, not the fetch.
WORKFLOW_KEYS = ("enabled",)


def register_source(name: str, module: str) -> None:
    """Register (or replace) source ``name``: the importable module that exposes ``fetch``."""
    SOURCES[name] = module


def registered_sources() -> list[str]:
    """The names of every source the ``fetch_source`` rule knows (plugins' included)."""
    load_env_plugins()
    return list(SOURCES)


def source_params(config: dict[str, Any], name: str) -> dict[str, Any]:
    """The keyword arguments for source ``name``'s ``fetch`` from a validated config."""
    block: Any = config
    for key in SOURCE_CONFIG_PATH.get(name, ("sources", name)):
        block = block.get(key, {})
    return {k: v for k, v in dict(block).items() if k not in WORKFLOW_KEYS}


def fetch_source(
    name: str, *, snapshot_dir: str | os.PathLike[str] | None, params: dict[str, Any] | None = None
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Fetch (live) or import (snapshot) source ``name``; returns (table, manifest).

    Raises:
        ConfigError: for an unknown source name.
        SourceError: when the source cannot deliver data (see the source module).
    """
    if name not in SOURCES:
        load_env_plugins()
    if name not in SOURCES:
        raise ConfigError(f"unknown source {name!r}; known: {sorted(SOURCES)}")
    module = importlib.import_module(SOURCES[name])
    return module.fetch(snapshot_dir=snapshot_dir, **(params or {}))
