"""Which jobs a config plans: the runs of rule ``run_method`` and of rule ``shapley``, and a run's sample.

One home for the selection the workflow makes (``workflow/rules/common.smk`` reads it at parse
time, so this module imports nothing heavy) and that ``anachron estimate`` counts
(:mod:`anachron.estimate`). ``config`` is the validated workflow config (defaults filled in).
"""

from __future__ import annotations

from typing import Any, Mapping


def method_tasks(config: Mapping[str, Any], method: str) -> list[str]:
    """Tasks a method runs on: ``methods.<m>.tasks`` within ``run.tasks`` (null = all)."""
    only = config["methods"].get(method, {}).get("tasks")
    return [t for t in config["run"]["tasks"] if only is None or t in only]


def planned_runs(config: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """``(task, method, model)`` of every run_method job, in the workflow's order."""
    return [(t, m, mo) for m in config["run"]["methods"] for t in method_tasks(config, m) for mo in config["run"]["models"]]


def method_sample(config: Mapping[str, Any], task: str, method: str) -> int | None:
    """Instances per split of a run: ``run.sample[task]`` capped by ``methods.<m>.sample``."""
    caps = [config["run"]["sample"].get(task), config["methods"].get(method, {}).get("sample")]
    caps = [c for c in caps if c is not None]
    return min(caps) if caps else None


def shapley_runs(config: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """Runs whose claims get Shapley attributions (config key ``shapley``)."""
    tasks, methods = config["shapley"]["tasks"], config["shapley"]["methods"]
    return [
        (t, m, mo) for t, m, mo in planned_runs(config)
        if (tasks is None or t in tasks) and (m in methods if methods is not None else m != "rag_unrestricted")
    ]
