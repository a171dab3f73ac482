"""Small helpers for the package's pandas tables: missing values and optional columns.

A building block: it imports nothing from the package, so every layer (verifier, metrics, store,
report) reads a table the same way.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pandas as pd


def claim_flag(claims: pd.DataFrame, column: str) -> pd.Series:
    """A boolean column of a claims table, False where the column or the value is missing.

    Args:
        claims: any table (n rows).
        column: the name of a boolean column (``leaked``, ``declared_only``, ...).

    Returns:
        A ``bool`` Series of n values on ``claims.index``. Claims written before a flag existed
        (``declared_only``) read as False, so old and new claims tables score alike.
    """
    if column not in claims.columns:
        return pd.Series(False, index=claims.index, dtype=bool)
    return claims[column].astype("boolean").fillna(False).astype(bool)


def json_list(value: Any) -> list[Any]:
    """A JSON-list cell as a list: a JSON string (blank = empty), a list, or null/NaN (empty).

    Raises:
        json.JSONDecodeError: a string that is not JSON.
    """
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return []
    if isinstance(value, str):
        return list(json.loads(value)) if value.strip() else []
    return list(value)
