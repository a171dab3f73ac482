"""Cells of the source tables read for the legal dataset: a stripped string, an int, or None.

The builder's modules import them under their private names (``_str``, ``_int``, ``_none``).
"""

from __future__ import annotations

from typing import Any

from anachron.frames import is_missing_scalar, text_or_none


def str_or_none(v: Any) -> str | None:
    """``v`` as a stripped string; None for None, NaN / NA and the empty string."""
    return text_or_none(v, is_missing_scalar)


def int_or_none(v: Any) -> int | None:
    """``v`` as an int; None for None, NaN / NA and what ``int`` cannot read."""
    if is_missing_scalar(v):
        return None
    try:
        return int(v)
    except (TypeError, ValueError):
        return None


def none_if_na(v: Any) -> Any:
    """NaN / NA / NaT -> None (pandas 3 turns None into NaN in string columns); a list, dict or
    string is kept as it is."""
    return None if not isinstance(v, (list, dict, str)) and is_missing_scalar(v) else v
