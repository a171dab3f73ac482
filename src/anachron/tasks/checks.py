"""Integrity checks on instance tables (the ``verify_dataset`` rule, DESIGN §3).

Checked for every task: required columns; unique instance ids; every cutoff an
ISO ``YYYY-MM-DD`` date; known split names; labels and inputs valid JSON; no
overlap between train and eval (instance ids, and per task: stock windows must
not overlap in time and no company group may repeat across splits); control
instances after every configured model's knowledge cutoff; salary player-years and
legal case names / dockets not shared between train and eval. A violation fails the
workflow; the report lists counts per task and split.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from typing import Any, Mapping

import pandas as pd

from anachron.tasks.base import INSTANCE_COLUMNS

_ISO = re.compile(r"^\d{4}-\d{2}-\d{2}$")
SPLITS = ("train", "eval", "control")


def _iso_ok(s: Any) -> bool:
    if not isinstance(s, str) or not _ISO.match(s):
        return False
    try:
        dt.date.fromisoformat(s)
    except ValueError:
        return False
    return True


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
    bad_dates = df.loc[~df["cutoff_date"].map(_iso_ok), "instance_id"]
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
    if task == "stock":
        problems += _stock_overlap(df)
    elif task == "salary":
        problems += _salary_overlap(df)
    elif task == "legal":
        from anachron.tasks.legal import legal_overlap_problems

        problems += legal_overlap_problems(df)
    return problems


def _salary_overlap(df: pd.DataFrame) -> list[str]:
    inputs = df["inputs"].map(json.loads)
    keys = inputs.map(lambda i: (str(i.get("player", "")).strip().lower(), i.get("year")))
    shared = set(keys[df["split"] == "eval"]) & set(keys[df["split"] == "train"])
    return [f"salary: {len(shared)} player-years appear in both train and eval (e.g. {sorted(shared)[:3]})"] if shared else []


def _stock_overlap(df: pd.DataFrame) -> list[str]:
    problems = []
    inputs = df["inputs"].map(json.loads)
    spans = {}
    for split, inp in zip(df["split"], inputs):
        spans.setdefault(split, set()).add((inp["start_date"], inp["end_date"]))
    for a in spans.get("eval", set()):
        for b in spans.get("train", set()):
            if a[0] <= b[1] and b[0] <= a[1]:
                problems.append(f"stock: eval window {a} overlaps train window {b}")
    groups = inputs.map(lambda i: tuple(sorted(c["ticker"] for c in i["companies"])))
    by_split = {s: set(groups[df["split"] == s]) for s in set(df["split"])}
    shared = by_split.get("eval", set()) & by_split.get("train", set())
    if shared:
        problems.append(f"stock: {len(shared)} company groups appear in both train and eval")
    return problems

