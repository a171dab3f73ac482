"""Claim-level verification (DESIGN §5): dates, plausibility rules, grounded checks."""

from __future__ import annotations

import logging
import os
from typing import Any, Mapping

import pandas as pd

from anachron.verify.pipeline import Grounding

log = logging.getLogger(__name__)


def _sp500_names(path: str | os.PathLike[str]) -> dict[str, list[str]]:
    """ticker -> company names seen in the dated GICS tables (``sectors.parquet``)."""
    df = pd.read_parquet(path, columns=["ticker", "name"]).dropna()
    out: dict[str, list[str]] = {}
    for t, n in df.drop_duplicates().itertuples(index=False):
        out.setdefault(str(t), []).append(str(n))
    return out


def _market_checks(inputs: Mapping[str, str | os.PathLike[str]]) -> list[Any]:
    """Price, EDGAR and index-change checks from whichever of their files ``inputs`` names."""
    from anachron.verify import grounded

    checks: list[Any] = []
    if inputs.get("prices"):
        checks.append(
            grounded.PriceGrounding(pd.read_parquet(inputs["prices"], columns=["ticker", "date", "close", "adj_close"]))
        )
    if inputs.get("edgar"):
        from anachron.verify.edgar_grounding import load_edgar_grounding

        checks.append(load_edgar_grounding(str(inputs["edgar"])))
    if inputs.get("sp500_changes"):
        names = _sp500_names(inputs["sp500_sectors"]) if inputs.get("sp500_sectors") else None
        checks.append(grounded.IndexChangeGrounding(pd.read_parquet(inputs["sp500_changes"]), names))
    return checks


def make_grounding(task: str, inputs: Mapping[str, str | os.PathLike[str]]) -> Grounding | None:
    """The grounded checks for ``task`` built from its point-in-time data files.

    Args:
        task: task name.
        inputs: named data files, used by stock and forecast: ``prices`` (the long daily price
            table, ``data/raw/yahoo/prices.parquet``), ``edgar`` (EDGAR point-in-time facts,
            ``data/raw/edgar/data.parquet``), ``sp500_changes`` (dated index changes,
            ``data/raw/sp500/changes.parquet``) with ``sp500_sectors`` (company names,
            ``data/raw/sp500/sectors.parquet``); each optional, a missing one drops its check.
            Salary and legal read everything they need from the instance's grounding
            context (no files).

    Returns:
        A grounding object, or None when the task has none. Stock: a
        :class:`~anachron.verify.grounded.CompositeGrounding` of price, EDGAR and index-change
        checks, in that order. Forecast: the question's resolution check first
        (:class:`~anachron.verify.grounded.ResolutionGrounding`), then the same market checks
        (forecast questions are about prices, company figures and index members too).
        Salary: :class:`~anachron.verify.grounded.ContractGrounding`; legal:
        :class:`~anachron.verify.grounded.DecisionGrounding`.
    """
    from anachron.verify import grounded

    if task == "stock":
        checks = _market_checks(inputs)
        log.info("stock grounding: %s", [type(c).__name__ for c in checks])
        return grounded.CompositeGrounding(checks) if checks else None
    if task == "salary":
        return grounded.ContractGrounding()
    if task == "legal":
        return grounded.DecisionGrounding()
    if task == "forecast":
        checks = [grounded.ResolutionGrounding(), *_market_checks(inputs)]
        log.info("forecast grounding: %s", [type(c).__name__ for c in checks])
        return grounded.CompositeGrounding(checks)
    return None
