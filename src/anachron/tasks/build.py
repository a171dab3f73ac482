"""Build one task's instance table from its raw inputs (the ``build_dataset`` rule)."""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from typing import Any, Mapping

import pandas as pd

from anachron.io import sha256_file
from anachron.tables import AUDIT_COLUMN
from anachron.tasks.audit import apply_audit, audit_instances
from anachron.tasks.base import Task, instance_label
from anachron.tasks.registry import get_task


def _manifests(inputs: Mapping[str, str | os.PathLike[str]]) -> list[dict[str, Any]]:
    out = []
    for key, path in inputs.items():
        if key.endswith("_manifest"):
            man = json.loads(Path(path).read_text())
            out += man.get("sources", man if isinstance(man, list) else [])
    return out


def _skipped(inputs: Mapping[str, str | os.PathLike[str]]) -> dict[str, dict[str, int]]:
    out = {}
    for key, path in inputs.items():
        if key.endswith("_manifest"):
            skipped = json.loads(Path(path).read_text()).get("skipped_by_reason")
            if skipped:
                out[key.removesuffix("_manifest")] = skipped
    return out


def _audit_grounding(spec: Task, inputs: Mapping[str, str | os.PathLike[str]]) -> Any:
    """The task's grounded checks for the input audit, from those of their files the dataset's
    inputs hold (a missing file drops its check); None for a task with nothing to audit."""
    if not spec.audit_fields:
        return None
    needed = spec.grounding_inputs(edgar=False)
    return spec.make_grounding({k: inputs[k] for k in needed if k in inputs})


def cutoff_rules(spec: Task, instances: pd.DataFrame) -> dict[str, int]:
    """Instances per cutoff rule: the label's ``cutoff_rule`` where set, else the task's."""
    rules = Counter(str(instance_label(r).get("cutoff_rule") or spec.cutoff_rule) for _, r in instances.iterrows())
    return dict(sorted(rules.items()))


def build_task_dataset(
    task: str,
    inputs: Mapping[str, str | os.PathLike[str]],
    task_config: dict[str, Any],
    *,
    knowledge_cutoffs: Mapping[str, str] | None = None,
    leak_on_same_day: bool = False,
) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, Any], pd.DataFrame]:
    """Return (instances, exclusions, manifest, input-audit findings) for ``task``.

    The task's builder makes the instances; the input audit (:mod:`anachron.tasks.audit`)
    adds the ``input_audit`` column and excludes instances whose input states their outcome.
    The manifest counts instances per split and per cutoff rule, exclusions per reason, and the
    audit's findings per kind.

    Args:
        task: task name.
        inputs: named input files: the task's :meth:`~anachron.tasks.base.Task.dataset_inputs`
            (Parquet tables, and the raw ``*_manifest`` JSON files).
        task_config: the task's block of the validated config.
        knowledge_cutoffs: model name -> ISO knowledge cutoff of every configured model
            (control splits must lie after all of them).
        leak_on_same_day: the audit counts a sentence dated on the cutoff day as later too.

    Raises:
        ConfigError: for an unknown task.
    """
    spec = get_task(task)
    tables = {k: pd.read_parquet(v) for k, v in inputs.items() if not k.endswith("_manifest")}
    instances, exclusions = spec.build(tables, task_config, knowledge_cutoffs=dict(knowledge_cutoffs or {}))
    grounding = _audit_grounding(spec, inputs)
    findings = audit_instances(spec, instances, grounding, leak_on_same_day=leak_on_same_day)
    instances, exclusions = apply_audit(instances, exclusions, findings)
    reason_col = "reason" if "reason" in exclusions.columns else None
    flagged = instances[AUDIT_COLUMN] != "[]"
    manifest = {
        "task": task,
        "counts": instances["split"].value_counts().sort_index().to_dict(),
        "cutoff_rules": cutoff_rules(spec, instances),
        "input_audit": {
            "fields": list(spec.audit_fields),
            "layers": "grounded+rules" if grounding is not None else "rules",
            "findings_by_kind": dict(Counter(findings["kind"])),
            "instances_flagged": int(flagged.sum()),
            "instances_flagged_by_split": instances.loc[flagged, "split"].value_counts().sort_index().to_dict(),
        },
        "exclusions_by_reason": dict(Counter(exclusions[reason_col])) if reason_col else {},
        "inputs": {k: {"path": str(v), "sha256": sha256_file(v)} for k, v in inputs.items()},
        "sources": _manifests(inputs),
        "source_skipped_by_reason": _skipped(inputs),
    }
    return instances, exclusions, manifest, findings
