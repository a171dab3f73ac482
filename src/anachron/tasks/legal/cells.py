"""Cells of the source tables read for the legal dataset: a stripped string, an int, or None.

The builder's modules import them under their private names (``_str``, ``_int``, ``_none``).
"""

from __future__ import annotations

from typing import Any

import pandas as pd


def str_or_none(v: Any) -> str | None:
    """``v`` as a stripped string; None for None, NaN / NA and the empty string."""
    if v is None:
        return None
    try:
        if pd.isna(v):
            return None
    except (TypeError, ValueError):
        pass
    s = str(v).strip()
    return s or None


def int_or_none(v: Any) -> int | None:
    """``v`` as an int; None for None, NaN / NA and what ``int`` cannot read."""
    try:
        if v is None or pd.isna(v):
            return None
        return int(v)
    except (TypeError, ValueError):
        return None


def none_if_na(v: Any) -> Any:
    """NaN / NA / NaT -> None (pandas 3 turns None into NaN in string columns)."""
    try:
        return None if v is None or (not isinstance(v, (list, dict, str)) and pd.isna(v)) else v
    except (TypeError, ValueError):
        return v
