"""Stock: the grounded checks (the shared market checks of :mod:`anachron.verify.layers.market`)."""

from __future__ import annotations

import logging
import os
from typing import Mapping

from anachron.verify.layers.grounded import CompositeGrounding
from anachron.verify.layers.market import market_checks

log = logging.getLogger(__name__)


def make_stock_grounding(inputs: Mapping[str, str | os.PathLike[str]]) -> CompositeGrounding | None:
    """Price, EDGAR and index-change checks, in that order, from whichever files ``inputs``
    names (:func:`~anachron.verify.layers.market.market_checks`); None when there is none. The price
    check also recognises the realised return or end-of-window close (the outcome, A4)."""
    checks = market_checks(inputs)
    log.info("stock grounding: %s", [type(c).__name__ for c in checks])
    return CompositeGrounding(checks) if checks else None
