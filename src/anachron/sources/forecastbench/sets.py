"""Opening a question or resolution set: its JSON, its layout, its forecast due date."""

from __future__ import annotations

import json
from typing import Any, Sequence

from anachron.dates import to_iso
from anachron.frames import require_keys
from anachron.sources.base import SourceError


def _load_json(data: bytes, where: str) -> Any:
    try:
        return json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SourceError(f"{where}: not valid JSON ({exc}); replace the file with a ForecastBench JSON file.") from exc


def require(obj: Any, keys: Sequence[str], where: str) -> None:
    """Check that ``obj`` is a JSON object with every key of ``keys``.

    Raises :class:`SourceError` naming ``where`` (the file, and the entry in it) and the
    missing key, or saying that ``obj`` is not an object.
    """
    if not isinstance(obj, dict):
        raise SourceError(f"{where}: expected a JSON object, got {type(obj).__name__}; the file is not in the ForecastBench layout.")
    require_keys(obj, keys, where, error=SourceError,
                 hint="the file is not in the ForecastBench layout — replace it with a published question/resolution set.")


def open_set(data: Any, name: str, required: Any, list_key: str) -> tuple[dict[str, Any], str]:
    """Decode a question or resolution set and check its layout; returns (object, due date ISO).

    Raises :class:`SourceError` naming the file for invalid JSON, a missing key, a due date
    that is not a date, or ``list_key`` not holding a list.
    """
    obj = data if isinstance(data, dict) else _load_json(data.encode() if isinstance(data, str) else data, name)
    require(obj, required, name)
    due = to_iso(obj["forecast_due_date"], lenient=True, utc=True)
    if due is None:
        raise SourceError(f"{name}: forecast_due_date {obj['forecast_due_date']!r} is not a date; fix the file.")
    if not isinstance(obj[list_key], list):
        raise SourceError(f"{name}: key {list_key} must be a list; the file is not in the ForecastBench layout.")
    return obj, due
