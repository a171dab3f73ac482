"""Salary: the train/eval overlap check of an instance table (rule verify_dataset)."""

from __future__ import annotations

import json

import pandas as pd


def salary_overlap(df: pd.DataFrame) -> list[str]:
    """Violations: a player-year (lower-cased name, year) in both train and eval."""
    inputs = df["inputs"].map(json.loads)
    keys = inputs.map(lambda i: (str(i.get("player", "")).strip().lower(), i.get("year")))
    shared = set(keys[df["split"] == "eval"]) & set(keys[df["split"] == "train"])
    return [f"salary: {len(shared)} player-years appear in both train and eval (e.g. {sorted(shared)[:3]})"] if shared else []
