"""Stock: the grounded checks: the window's own outcome (:class:`WindowOutcomeGrounding`), then
the shared market checks (:mod:`anachron.verify.layers.market`) for everything else."""

from __future__ import annotations

import datetime as dt
import logging
import os
from typing import Any, Mapping

import numpy as np

from anachron.tasks.stock.outcome import Window, find_outcome, mentions, time_scope, window_of
from anachron.verify.layers.figures import parse_prices
from anachron.verify.layers.grounded import PRICE_REL_TOL, CompositeGrounding, GroundedVerdict, PriceGrounding
from anachron.verify.layers.market import market_checks

log = logging.getLogger(__name__)

#: An end-of-window close counts only when the company did not close within
#: :data:`~anachron.verify.layers.grounded.PRICE_REL_TOL` of it in this many days before the cutoff.
PRIOR_DAYS = 365


class WindowOutcomeGrounding:
    """The stock instance's own outcome (A4, leaked by definition, dated at the window's last
    trading day): a claim that states the window's returns or ranking
    (:func:`anachron.tasks.stock.outcome.find_outcome`: checked against the label's returns,
    with the claim's time scope), or a company's close on the window's last trading day that
    it had not reached in the year before the cutoff (with the price table).

    Args:
        prices: the price table's check (for the end-of-window close), or None.
    """

    def __init__(self, prices: PriceGrounding | None = None):
        self.prices = prices

    def check(self, fact: str, instance: dict[str, Any]) -> GroundedVerdict | None:
        """A leaked A4 verdict at the window's last trading day, or None."""
        w = window_of(instance)
        if w is None:
            return None
        found = find_outcome(fact, instance, w)
        if found is not None:
            return GroundedVerdict(
                w.last_day, f"states the window's outcome ({found.rule}): {found.reason}", outcome=True, category="A4"
            )
        note = self._end_close(fact, w, mentions(fact, w))
        if note is None:
            return None
        return GroundedVerdict(w.last_day, note, outcome=True, category="A4")

    def _end_close(self, fact: str, w: Window, spans: dict[str, list[int]]) -> str | None:
        if self.prices is None or not spans or "$" not in fact:
            return None
        for price in parse_prices(fact):
            stated = price.value
            for t in spans:
                end_close = self.prices.close_on(t, w.last_day)
                if end_close is None or abs(stated - end_close) > PRICE_REL_TOL * end_close:
                    continue
                prior = self.prices.closes_between(t, w.cutoff - dt.timedelta(days=PRIOR_DAYS), w.cutoff)
                if prior.size and np.any(np.abs(prior - stated) <= PRICE_REL_TOL * stated):
                    continue
                if time_scope(fact, w) == "other":
                    return None  # a close on another day that happens to match
                return (
                    f"states {t}'s close at the end of the window (${end_close:.2f} on {w.last_day}), "
                    "a level not seen in the year before the cutoff"
                )
        return None


def make_stock_grounding(inputs: Mapping[str, str | os.PathLike[str]]) -> CompositeGrounding:
    """:class:`WindowOutcomeGrounding` first (with the price table when ``inputs`` names one),
    then the price, EDGAR and index-change checks of whichever files ``inputs`` names
    (:func:`~anachron.verify.layers.market.market_checks`), which never read the stock label."""
    checks = market_checks(inputs)
    prices = next((c for c in checks if isinstance(c, PriceGrounding)), None)
    out = CompositeGrounding([WindowOutcomeGrounding(prices), *checks])
    log.info("stock grounding: %s", [type(c).__name__ for c in checks])
    return out
