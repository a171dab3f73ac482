"""Claim-level verification (DESIGN §5): dates, plausibility rules, grounded checks."""

from __future__ import annotations

import os
from typing import Mapping

import pandas as pd

from anachron.verify.pipeline import Grounding


def make_grounding(task: str, inputs: Mapping[str, str | os.PathLike[str]]) -> Grounding | None:
    """The grounded checks for ``task`` built from its point-in-time data files.

    Args:
        task: task name.
        inputs: named data files (stock: ``prices``, the long daily price table; salary and
            legal read everything they need from the instance's grounding context).

    Returns:
        A grounding object, or None when the task has no grounded checks yet.
    """
    if task == "stock":
        from anachron.verify.grounded import PriceGrounding

        return PriceGrounding(pd.read_parquet(inputs["prices"], columns=["ticker", "date", "close", "adj_close"]))
    if task == "salary":
        from anachron.verify.grounded import ContractGrounding

        return ContractGrounding()
    if task == "legal":
        from anachron.verify.grounded import DecisionGrounding

        return DecisionGrounding()
    return None
