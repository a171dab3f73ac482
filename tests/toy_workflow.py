"""The toy plugins' work dirs: importing a plugin for a test without leaving its registrations, a
work dir with the toy task's snapshot and config, and the real workflow run on it
(tests/tasks/test_toy_task.py, tests/methods/test_toy_method.py)."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

from anachron.tasks.registry import TASKS

from conftest import REPO, TESTS

PLUGINS = TESTS / "plugins"
SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))


def import_plugin(name: str):
    """Import the plugin module ``name`` from tests/plugins without leaving its registrations behind
    (the other tests see the built-in registries only)."""
    from anachron.methods.registry import METHODS, discover
    from anachron.sources.registry import SOURCES

    discover()
    saved = [(reg, dict(reg)) for reg in (TASKS, SOURCES, METHODS)]
    sys.path.insert(0, str(PLUGINS))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(PLUGINS))
        for reg, before in saved:
            reg.clear()
            reg.update(before)


def write_toy_workdir(work: Path, methods: list[str]) -> Path:
    """A work dir with the toy's snapshot (two days of weather) and a config that names the plugins;
    the mock model answers every generation with the same evidence (Ashby's outcome first)."""
    (work / "snapshot" / "weather").mkdir(parents=True)
    (work / "snapshot" / "weather" / "days.csv").write_text("town,day,rained\nAshby,2023-07-02,1\nBrill,2023-07-09,0\n")
    config = {
        "plugins": ["toy_weather", "toy_method"],
        "snapshot_dir": str(work / "snapshot"),
        "cache_dir": str(work / "cache"),
        "tasks": {"toy": {"seed": 3}},
        "run": {"tasks": ["toy"], "methods": methods, "models": ["scripted"], "splits": ["eval"]},
        "models": {"scripted": {"model": "mock/scripted", "knowledge_cutoff": "2023-01-01", "params": {"temperature": 0},
                                "mock": {"answers": {"generate": import_plugin("toy_weather").rain_answer("Ashby", "2023-07-02")}}}},
        "verify": {"layers": ["grounded", "rules"], "extractor": "deterministic"},
        "shapley": {"tasks": []},
    }
    path = work / "toy.yaml"
    path.write_text(json.dumps(config))  # JSON is YAML
    return path


def snakemake_toy(work: Path, config: Path, *args: str) -> subprocess.CompletedProcess:
    """The real workflow in ``work`` on ``config``, the plugin folder on PYTHONPATH (as a user's would be)."""
    env = {**os.environ, "PYTHONPATH": str(PLUGINS)}
    env.pop("ANACHRON_PLUGINS", None)
    cmd = [SNAKEMAKE, "--snakefile", str(REPO / "workflow" / "Snakefile"), "--directory", str(work),
           "--configfile", str(config), "--cores", "2", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env)
