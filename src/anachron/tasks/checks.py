"""Integrity checks on instance tables (the ``verify_dataset`` rule, docs/tasks.md#dataset-checks).

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
from anachron.frames import missing_columns
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
    missing = missing_columns(df, INSTANCE_COLUMNS)
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

