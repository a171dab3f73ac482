"""Stock: the train/eval overlap check of an instance table (rule verify_dataset)."""

from __future__ import annotations

import json

import pandas as pd


def stock_overlap(df: pd.DataFrame) -> list[str]:
    """Violations: an eval window that overlaps a train window in time, or a company group
    (the same five tickers) in both train and eval. Returns messages (empty when clean)."""
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
