"""Integrity checks on instance tables (the ``verify_dataset`` rule, DESIGN §3).

Checked for every task: required columns; unique instance ids; every cutoff an
ISO ``YYYY-MM-DD`` date; known split names; labels and inputs valid JSON; no
overlap between train and eval (instance ids, and per task: stock windows must
not overlap in time and no company group may repeat across splits); control
instances after every configured model's knowledge cutoff; and each task's own
:meth:`~anachron.tasks.base.Task.overlap_problems` (salary player-years, legal case names /
dockets not shared between train and eval). A violation fails the workflow; the report
lists counts per task and split.
"""

from __future__ import annotations

import json
from typing import Mapping

import pandas as pd

from anachron.dates import is_iso_day
from anachron.tasks.base import INSTANCE_COLUMNS
from anachron.tasks.registry import find_task

SPLITS = ("train", "eval", "control")


def check_instances(task: str, df: pd.DataFrame, knowledge_cutoffs: Mapping[str, str]) -> list[str]:
    """Violations found in one task's instance table (empty list if none).

    Args:
        task: task name.
        df: instance table (:data:`~anachron.tasks.base.INSTANCE_COLUMNS`).
        knowledge_cutoffs: model name -> ISO knowledge cutoff date.
    """
    problems: list[str] = []
    missing = [c for c in INSTANCE_COLUMNS if c not in df.columns]
    if missing:
        return [f"{task}: missing columns {missing}"]
    if df["instance_id"].duplicated().any():
        problems.append(f"{task}: duplicate instance ids {df.loc[df['instance_id'].duplicated(), 'instance_id'].head(3).tolist()}")
    bad_dates = df.loc[~df["cutoff_date"].map(is_iso_day), "instance_id"]
    if len(bad_dates):
        problems.append(f"{task}: {len(bad_dates)} cutoff dates are not ISO YYYY-MM-DD (e.g. {bad_dates.head(3).tolist()})")
    bad_split = sorted(set(df["split"]) - set(SPLITS))
    if bad_split:
        problems.append(f"{task}: unknown splits {bad_split}")
    for col in ("inputs", "label"):
        for iid, v in zip(df["instance_id"], df[col]):
            try:
                json.loads(v)
            except (TypeError, ValueError):
                problems.append(f"{task}: {col} of {iid} is not valid JSON")
                break
    control = df[df["split"] == "control"]
    for model, kc in knowledge_cutoffs.items():
        early = control[control["cutoff_date"] <= kc]
        if len(early):
            problems.append(
                f"{task}: {len(early)} control instances have a cutoff on or before model {model!r}'s knowledge cutoff {kc}"
            )
    spec = find_task(task)
    if spec is not None:
        problems += spec.overlap_problems(df)
    return problems


def dataset_report(frames: Mapping[str, pd.DataFrame], problems: list[str], manifests: Mapping[str, dict]) -> str:
    """Markdown report: counts per task and split, exclusions by reason, and any violations."""
    lines = ["# Dataset report", ""]
    rows = []
    for task, df in frames.items():
        for split, g in df.groupby("split"):
            rows.append({"task": task, "split": split, "instances": len(g),
                         "first cutoff": g["cutoff_date"].min(), "last cutoff": g["cutoff_date"].max()})
    lines.append(pd.DataFrame(rows).to_markdown(index=False) if rows else "_no instances_")
    for task, man in manifests.items():
        excl = man.get("exclusions_by_reason") or {}
        if excl:
            lines += ["", f"## {task}: exclusions", ""]
            lines += [f"- {reason}: {n}" for reason, n in sorted(excl.items(), key=lambda kv: -kv[1])]
        for source, skipped in (man.get("source_skipped_by_reason") or {}).items():
            lines += ["", f"## {task}: rows skipped while reading {source}", ""]
            lines += [f"- {reason}: {n}" for reason, n in sorted(skipped.items(), key=lambda kv: -kv[1])]
        sources = man.get("sources") or []
        if sources:
            lines += ["", f"## {task}: sources", ""]
            lines += [f"- {s.get('origin')} (sha256 {str(s.get('sha256'))[:12]}…, {s.get('rows')} rows)" for s in sources]
    lines += ["", "## Checks", ""]
    lines += [f"- VIOLATION: {p}" for p in problems] or ["- all checks passed: ISO cutoffs, unique ids, no train/eval overlap, control after every model's knowledge cutoff"]
    return "\n".join(lines) + "\n"
