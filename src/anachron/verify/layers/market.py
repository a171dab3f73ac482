"""Market grounding shared by the tasks about listed companies (stock, forecast).

* The point-in-time files (:func:`market_grounding_inputs`): daily prices, S&P 500 index
  changes with company names, and EDGAR company facts when enabled.
* The grounded checks built from them (:func:`market_checks`): closing prices
  (:class:`~anachron.verify.layers.grounded.PriceGrounding`), company figures dated by their
  EDGAR filing (:mod:`anachron.verify.layers.edgar`) and index changes
  (:class:`~anachron.verify.layers.grounded.IndexChangeGrounding`), in that order.

The calibration's planted families from the same data are in
:mod:`anachron.verify.calibration.market`.
"""

from __future__ import annotations

import os
from typing import Any, Mapping

import pandas as pd

from anachron.sources.paths import PRICES, SP500_CHANGES, SP500_SECTORS, source_table
from anachron.verify.layers.edgar import load_edgar_grounding
from anachron.verify.layers.grounded import IndexChangeGrounding, PriceGrounding


def market_grounding_inputs(*, edgar: bool) -> dict[str, str]:
    """The market data files by input name: ``prices``, ``sp500_changes``, ``sp500_sectors`` and,
    with ``edgar`` (config ``sources.edgar`` enabled), ``edgar``."""
    inputs = {"prices": PRICES, "sp500_changes": SP500_CHANGES, "sp500_sectors": SP500_SECTORS}
    if edgar:
        inputs["edgar"] = source_table("edgar")
    return inputs


def _sp500_names(path: str | os.PathLike[str]) -> dict[str, list[str]]:
    """ticker -> company names seen in the dated GICS tables (``sectors.parquet``)."""
    df = pd.read_parquet(path, columns=["ticker", "name"]).dropna()
    out: dict[str, list[str]] = {}
    for t, n in df.drop_duplicates().itertuples(index=False):
        out.setdefault(str(t), []).append(str(n))
    return out


def market_checks(inputs: Mapping[str, str | os.PathLike[str]]) -> list[Any]:
    """Price, EDGAR and index-change checks from whichever of their files ``inputs`` names.

    Args:
        inputs: ``prices`` (the long daily price table), ``edgar`` (EDGAR point-in-time facts),
            ``sp500_changes`` (dated index changes), ``sp500_sectors`` (company names, by which
            the price and index checks find companies a claim names); each optional, a missing
            one drops its check.
    """
    checks: list[Any] = []
    names = _sp500_names(inputs["sp500_sectors"]) if inputs.get("sp500_sectors") else None
    if inputs.get("prices"):
        prices = pd.read_parquet(inputs["prices"], columns=["ticker", "date", "close", "adj_close"])
        checks.append(PriceGrounding(prices, names))
    if inputs.get("edgar"):
        checks.append(load_edgar_grounding(str(inputs["edgar"])))
    if inputs.get("sp500_changes"):
        checks.append(IndexChangeGrounding(pd.read_parquet(inputs["sp500_changes"]), names))
    return checks
