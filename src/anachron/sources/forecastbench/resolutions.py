"""Resolution-set files (``YYYY-MM-DD_resolution_set.json``) as frames of single-question resolutions."""

from __future__ import annotations

from collections import Counter

import pandas as pd

from anachron.dates import to_iso
from anachron.sources.forecastbench.sets import open_set, require

RESOLUTION_SET_KEYS = ("forecast_due_date", "resolutions")
RESOLUTION_KEYS = ("id", "source", "resolution_date", "resolved_to", "resolved")


def parse_resolution_set(data: bytes | str | dict, name: str, counts: Counter | None = None) -> pd.DataFrame:
    """Parse one resolution-set file into a frame of single-question resolutions.

    Returns columns ``question_id, source, forecast_due_date, resolution_date, resolved,
    resolved_to, resolution_set``. Combination rows (list ids) and rows with an unparseable
    date or outcome are skipped and added to ``counts``.

    Raises :class:`SourceError` naming the file (and the row index) when a required key is
    missing or the JSON is invalid.
    """
    counts = counts if counts is not None else Counter()
    obj, due = open_set(data, name, RESOLUTION_SET_KEYS, "resolutions")
    rows = []
    for i, r in enumerate(obj["resolutions"]):
        require(r, RESOLUTION_KEYS, f"{name} (resolutions[{i}])")
        if isinstance(r["id"], list) or isinstance(r.get("direction"), list):
            counts["combination_resolution"] += 1
            continue
        day = to_iso(r["resolution_date"], lenient=True, utc=True)
        if day is None:
            counts["bad_resolution_date"] += 1
            continue
        value = r["resolved_to"]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
            counts["bad_resolved_to"] += 1
            continue
        rows.append(
            {
                "question_id": str(r["id"]),
                "source": str(r["source"]),
                "forecast_due_date": due,
                "resolution_date": day,
                "resolved": bool(r["resolved"]),
                "resolved_to": float(value),
                "resolution_set": name,
            }
        )
    return pd.DataFrame(
        rows, columns=["question_id", "source", "forecast_due_date", "resolution_date", "resolved", "resolved_to", "resolution_set"]
    )
