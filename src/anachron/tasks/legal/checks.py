"""Legal: the train/eval overlap check of an instance table (rule verify_dataset)."""

from __future__ import annotations

import json

import pandas as pd

from anachron.sources.dockets import normalize_docket
from anachron.tasks.legal.parties import case_name_key


def legal_overlap_problems(instances: pd.DataFrame) -> list[str]:
    """Train/eval overlap violations of a legal instance table (for ``verify_dataset``).

    Checks that no normalised case name (:func:`case_name_key`) and no docket of an eval
    case appears in train. Returns messages (empty when clean).
    """
    inputs = instances["inputs"].map(json.loads)
    names = inputs.map(lambda i: case_name_key(i.get("case_name")))
    dockets = inputs.map(lambda i: f"{i.get('court')}|{normalize_docket(i.get('docket'))}")
    problems = []
    for what, series in (("case names", names), ("dockets", dockets)):
        ev = set(series[instances["split"] == "eval"])
        tr = set(series[instances["split"] == "train"])
        shared = sorted(ev & tr)
        if shared:
            problems.append(f"legal: {len(shared)} {what} appear in both train and eval (e.g. {shared[:3]})")
    return problems
