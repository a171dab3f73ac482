"""Which jobs a config plans: the runs of rule ``run_method`` (probe variants included), of rule
``shapley`` and of rule ``perf_clean``, and a run's sample.

A probe variant of a method (docs/metrics.md#probes) is a run of its own whose method name is
``<method>@<probe>`` (``temporal_hint@neutered``, ``rag@date_shift``): the ``{method}`` wildcard of
every per-run rule and file, and the ``method`` column of every table. :func:`split_variant` gives
the method and the probe back.

One home for the selection the workflow makes (``workflow/rules/common.smk`` reads it at parse
time, so this module imports nothing heavy) and that ``anachron estimate`` counts
(:mod:`anachron.estimate`). ``config`` is the validated workflow config (defaults filled in).
"""

from __future__ import annotations

from typing import Any, Mapping

from anachron.variants import PROBE_SEP, PROBES, split_variant, variant_name  # noqa: F401 (re-exported)


def method_tasks(config: Mapping[str, Any], method: str) -> list[str]:
    """Tasks a method runs on: ``methods.<m>.tasks`` within ``run.tasks`` (null = all)."""
    only = config["methods"].get(method, {}).get("tasks")
    return [t for t in config["run"]["tasks"] if only is None or t in only]


def base_runs(config: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """``(task, method, model)`` of every run of a configured method (no probe variant), in order."""
    return [(t, m, mo) for m in config["run"]["methods"] for t in method_tasks(config, m) for mo in config["run"]["models"]]


def probe_runs(config: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """``(task, <method>@<probe>, model)`` of every probe run (config key ``probes``): each probed
    method that is a run method, on each of its tasks within ``probes.tasks``, per probe kind."""
    block = config.get("probes") or {}
    methods = [m for m in block.get("methods") or [] if m in config["run"]["methods"]]
    tasks = block.get("tasks")
    return [
        (t, variant_name(m, p), mo)
        for m in methods for p in block.get("kinds", PROBES) for t in method_tasks(config, m)
        if tasks is None or t in tasks for mo in config["run"]["models"]
    ]


def planned_runs(config: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """``(task, method, model)`` of every run_method job, in the workflow's order: the configured
    methods' runs, then their probe variants (:func:`probe_runs`)."""
    return base_runs(config) + probe_runs(config)


def method_sample(config: Mapping[str, Any], task: str, method: str) -> int | None:
    """Instances per split of a run: ``run.sample[task]`` capped by ``methods.<m>.sample``; a probe
    variant's also by ``probes.sample`` (samples are nested, so a probe's instances are a subset of
    its method's: :func:`anachron.methods.runner.sample_instances`)."""
    method, probe = split_variant(method)
    caps = [config["run"]["sample"].get(task), config["methods"].get(method, {}).get("sample")]
    if probe is not None:
        caps.append((config.get("probes") or {}).get("sample"))
    caps = [c for c in caps if c is not None]
    return min(caps) if caps else None


def shapley_runs(config: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """Runs whose claims get Shapley attributions (config key ``shapley``)."""
    tasks, methods = config["shapley"]["tasks"], config["shapley"]["methods"]
    return [
        (t, m, mo) for t, m, mo in base_runs(config)
        if (tasks is None or t in tasks) and (m in methods if methods is not None else m != "rag_unrestricted")
    ]


def clean_runs(config: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """Runs whose leaked answers are asked again in the closed world for ``perf_clean`` (config key
    ``perf_clean``; docs/metrics.md#leakage-adjusted-perf): no probe variant, and no ``tempo`` run (its
    answers come from the trained adapter, which the closed-world calls of the base model would not
    apply); none when disabled."""
    block = config.get("perf_clean") or {}
    if not block.get("enabled", True):
        return []
    tasks, methods = block.get("tasks"), block.get("methods")
    return [
        (t, m, mo) for t, m, mo in base_runs(config)
        if m != "tempo" and (tasks is None or t in tasks) and (methods is None or m in methods)
    ]
