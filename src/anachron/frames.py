"""Small helpers for the package's pandas tables: missing values, required and optional columns
(and the required keys of a JSON object).

A building block: it imports nothing from the package, so every layer (sources, verifier, tasks,
metrics, store, report) reads a table the same way.

Missing values. A table cell can be missing in several ways (None, a float NaN, pandas' ``pd.NA``,
``pd.NaT``, a blank string), and the package's readers do not all count the same ones as missing.
Each test below is one such rule, named for what it counts; the first five nest (each counts what
the one above it counts):

=========================  ====  =========  =====  ======  ============  =======================
test                       None  float NaN  pd.NA  pd.NaT  blank string  other NaN / NaT kinds
=========================  ====  =========  =====  ======  ============  =======================
:func:`is_nan`             no    yes        no     no      no            no
:func:`is_null`            yes   yes        no     no      no            no
:func:`is_na`              yes   yes        yes    no      no            no
:func:`is_na_or_nat`       yes   yes        yes    yes     no            no
:func:`is_blank`           yes   yes        yes    yes     yes           no
:func:`is_missing_scalar`  yes   yes        yes    yes     no            yes (``pandas.isna``)
=========================  ====  =========  =====  ======  ============  =======================

"float NaN" is a ``float`` that is NaN (``numpy.float64`` included: a ``float`` subclass); "other
kinds" are ``numpy.float32`` NaN, ``numpy.datetime64("NaT")``, ``Decimal("NaN")`` and the like.
:func:`na_text` is a text rule of its own (JSON fields that write "N/A").
"""

from __future__ import annotations

import json
import math
from typing import Any, Callable, Iterable, Mapping

import pandas as pd


def is_nan(value: Any) -> bool:
    """True for a float NaN only (``numpy.float64`` too); None, ``pd.NA`` and text are not NaN."""
    return isinstance(value, float) and math.isnan(value)


def is_null(value: Any) -> bool:
    """True for None and a float NaN: what a cell of an object or float column holds when empty.

    ``pd.NA``, ``pd.NaT`` and blank strings are *not* null here (see :func:`is_na`,
    :func:`is_blank`)."""
    return value is None or is_nan(value)


def is_na(value: Any) -> bool:
    """True for None, a float NaN and pandas' ``pd.NA`` (a nullable column's empty cell).

    ``pd.NaT`` and blank strings are not NA here (see :func:`is_na_or_nat`, :func:`is_blank`)."""
    return value is pd.NA or is_null(value)


def is_na_or_nat(value: Any) -> bool:
    """True for None, a float NaN, ``pd.NA`` and ``pd.NaT`` (an empty date cell too).

    Blank strings are not missing here (see :func:`is_blank`)."""
    return value is pd.NaT or is_na(value)


def is_blank(value: Any) -> bool:
    """True for None, a float NaN, ``pd.NA``, ``pd.NaT`` and a string of only whitespace (``""`` too)."""
    return is_na_or_nat(value) or (isinstance(value, str) and not value.strip())


def is_missing_scalar(value: Any) -> bool:
    """pandas' own test on one cell: None, or what :func:`pandas.isna` calls missing (any NaN,
    ``pd.NA``, ``pd.NaT``, ``numpy.datetime64("NaT")``, ...).

    A value ``pandas.isna`` cannot answer for as one cell (it raises ``TypeError`` /
    ``ValueError``, as for an empty or longer list) is not missing; a one-element list or array
    reads as its element (``pandas.isna([None])`` is ``[True]``). Blank strings are not missing.
    """
    if value is None:
        return True
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def text_or_empty(value: Any) -> str:
    """A text cell as ``str``: ``""`` for None and a float NaN (:func:`is_null`), else ``str(value)``
    (not stripped; ``pd.NA`` reads ``"<NA>"``)."""
    return "" if is_null(value) else str(value)


def text_or_none(value: Any, missing: Callable[[Any], bool] = is_null) -> str | None:
    """A text cell stripped, or None where it is missing or blank.

    Args:
        value: any cell.
        missing: which missing-value rule applies (default :func:`is_null`: None and a float NaN;
            ``pd.NA`` then reads ``"<NA>"``). The salary dataset passes :func:`is_na`, the legal
            dataset :func:`is_missing_scalar`.
    """
    if missing(value):
        return None
    return str(value).strip() or None


#: What :func:`na_text` reads as "no value" (after stripping).
NA_TEXTS = ("", "N/A", "n/a", "NA", None)


def na_text(value: Any) -> str | None:
    """A text field as written, or None for None and the "no value" texts of :data:`NA_TEXTS`
    (``""``, ``"N/A"``, ``"n/a"``, ``"NA"``, after stripping).

    A text rule, not a missing-cell test: a float NaN reads ``"nan"`` (a JSON field holds none)."""
    if value is None:
        return None
    text = str(value)
    return None if text.strip() in NA_TEXTS else text


def missing_columns(df: pd.DataFrame, required: Iterable[str]) -> list[str]:
    """The names of ``required`` that ``df`` has no column for, in ``required``'s order."""
    return [c for c in required if c not in df.columns]


def _missing_error(
    error: type[Exception], where: str, what: str, missing: list[Any], found: Iterable[Any], hint: str
) -> Exception:
    return error(
        f"{where}: missing required {what}(s) {', '.join(map(str, missing))} "
        f"(found: {', '.join(map(str, found)) or 'none'})" + (f"; {hint}" if hint else "")
    )


def require_columns(
    df: pd.DataFrame,
    required: Iterable[str],
    where: str,
    *,
    error: type[Exception] = ValueError,
    hint: str = "",
) -> None:
    """Raise ``error`` naming ``where``, the absent columns of ``required`` and the columns found.

    The message reads ``"<where>: missing required column(s) a, b (found: x, y)"``, then
    ``"; <hint>"`` when a hint (what to do) is given. Nothing happens when every column is there.
    """
    missing = missing_columns(df, required)
    if missing:
        raise _missing_error(error, where, "column", missing, df.columns, hint)


def require_keys(
    obj: Mapping[str, Any],
    required: Iterable[str],
    where: str,
    *,
    error: type[Exception] = ValueError,
    hint: str = "",
) -> None:
    """:func:`require_columns` for the keys of a JSON object: ``"<where>: missing required key(s)
    a, b (found: x, y)[; <hint>]"``."""
    missing = [k for k in required if k not in obj]
    if missing:
        raise _missing_error(error, where, "key", missing, obj, hint)


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


def json_lists_nonempty(values: Iterable[Any]) -> list[bool]:
    """Whether each cell of a column of JSON lists (:func:`json_list`) holds an item, in order, in one
    pass: missing cells (``pd.NA`` too), blanks and ``"[]"`` hold none; a string bracketed as a list
    with anything but blanks inside holds one (what ``json.dumps`` of a non-empty list writes), without
    a parse; any other string is parsed.

    Raises:
        json.JSONDecodeError: a string that is neither bracketed as a list nor JSON.
    """
    out: list[bool] = []
    append = out.append
    for v in values:
        if type(v) is str:
            if v == "[]":
                append(False)
                continue
            t = v.strip()
            if len(t) > 2 and t[0] == "[" and t[-1] == "]" and t[1:-1].strip():
                append(True)
            else:
                append(bool(t) and t != "[]" and len(json.loads(t)) > 0)
        elif v is None or v is pd.NA or is_nan(v):
            append(False)
        else:
            append(len(list(v)) > 0)
    return out


def json_list(value: Any) -> list[Any]:
    """A JSON-list cell as a list: a JSON string (blank = empty), a list, or null/NaN (empty).

    Raises:
        json.JSONDecodeError: a string that is not JSON.
    """
    if is_null(value):
        return []
    if isinstance(value, str):
        return list(json.loads(value)) if value.strip() else []
    return list(value)
