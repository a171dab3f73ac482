"""Build one task's instance table from its raw inputs (the ``build_dataset`` rule)."""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from typing import Any, Mapping

import pandas as pd

from anachron.io import sha256_file
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


def build_task_dataset(
    task: str,
    inputs: Mapping[str, str | os.PathLike[str]],
    task_config: dict[str, Any],
    *,
    knowledge_cutoffs: Mapping[str, str] | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, Any]]:
    """Return (instances, exclusions, manifest) for ``task``.

    Args:
        task: task name.
        inputs: named input files: the task's :meth:`~anachron.tasks.base.Task.dataset_inputs`
            (Parquet tables, and the raw ``*_manifest`` JSON files).
        task_config: the task's block of the validated config.
        knowledge_cutoffs: model name -> ISO knowledge cutoff of every configured model
            (control splits must lie after all of them).

    Raises:
        ConfigError: for an unknown task.
    """
    spec = get_task(task)
    tables = {k: pd.read_parquet(v) for k, v in inputs.items() if not k.endswith("_manifest")}
    instances, exclusions = spec.build(tables, task_config, knowledge_cutoffs=dict(knowledge_cutoffs or {}))
    reason_col = "reason" if "reason" in exclusions.columns else None
    manifest = {
        "task": task,
        "counts": instances["split"].value_counts().sort_index().to_dict(),
        "exclusions_by_reason": dict(Counter(exclusions[reason_col])) if reason_col else {},
        "inputs": {k: {"path": str(v), "sha256": sha256_file(v)} for k, v in inputs.items()},
        "sources": _manifests(inputs),
        "source_skipped_by_reason": _skipped(inputs),
    }
    return instances, exclusions, manifest
