"""A signing's average annual value (AAV) decided from the listed AAV, the total value and the years."""

from __future__ import annotations

from typing import Any

import pandas as pd

from anachron.sources.spotrac.skips import REPAIR_AAV, SKIP_IMPLAUSIBLE_AAV, SKIP_INCONSISTENT_AAV, SKIP_NO_CONTRACT_VALUE

#: A listed AAV below this (USD) is not a salary.
MIN_PLAUSIBLE_AAV = 100_000.0
#: Largest relative gap between a listed AAV and value / years that still counts as consistent.
AAV_TOLERANCE = 0.05


def check_aav(
    listed: Any, value: Any, years: Any, *, mode: str = "recompute"
) -> tuple[float | None, str | None, str | None]:
    """Decide a signing's AAV from the listed AAV, total value and years.

    Returns ``(aav, skip_reason, repair_reason)``: ``aav`` is None exactly when the row
    must be dropped, with ``skip_reason`` one of ``no_contract_value`` (value or years
    missing or not positive), ``implausible_aav`` (listed AAV under $100,000 and
    ``mode="drop"``, or no usable AAV at all), ``aav_inconsistent`` (listed AAV plausible
    but more than 5% from value / years). ``repair_reason`` is ``aav_recomputed`` when a
    garbled listed AAV was replaced by value / years.

    Raises:
        ValueError: for an unknown ``mode`` (use "recompute" or "drop").
    """
    if mode not in ("recompute", "drop"):
        raise ValueError(f"implausible_aav must be 'recompute' or 'drop', got {mode!r}")
    v = pd.to_numeric(value, errors="coerce")
    y = pd.to_numeric(years, errors="coerce")
    a = pd.to_numeric(listed, errors="coerce")
    if pd.isna(v) or pd.isna(y) or v <= 0 or y < 1:
        return None, SKIP_NO_CONTRACT_VALUE, None
    implied = float(v) / float(y)
    if pd.isna(a) or a < MIN_PLAUSIBLE_AAV:
        if mode == "drop" or implied < MIN_PLAUSIBLE_AAV:
            return None, SKIP_IMPLAUSIBLE_AAV, None
        return implied, None, REPAIR_AAV
    if abs(float(a) - implied) > AAV_TOLERANCE * implied:
        return None, SKIP_INCONSISTENT_AAV, None
    return float(a), None, None
