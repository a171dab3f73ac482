"""SEC companyfacts JSON files (``{cik, entityName, facts: {taxonomy: {concept: {label, units: ...}}}}``)
as fact rows, one per filing's report of a value."""

from __future__ import annotations

import json
import math
from collections import Counter
from typing import Any

import pandas as pd

from anachron.dates import is_iso_day
from anachron.frames import require_keys
from anachron.sources.base import SourceError
from anachron.sources.edgar.table import COLUMNS

#: Keys every fact entry and every file must have.
FACT_KEYS = ("end", "val", "accn", "form", "filed")
FILE_KEYS = ("cik", "facts")


def parse_cik(value: Any) -> int:
    """A central index key as an int: ``320193``, ``"0000320193"`` and ``"CIK0000320193"`` give 320193.

    Raises ``ValueError`` when it is not a positive number of at most 10 digits.
    """
    text = str(value).strip().upper().removeprefix("CIK")
    if not text.isdigit() or int(text) <= 0 or len(text) > 10:
        raise ValueError(f"CIK {value!r} is not a positive number of at most 10 digits")
    return int(text)


def parse_companyfacts(data: bytes | str | dict, name: str, counts: Counter | None = None) -> pd.DataFrame:
    """Parse one companyfacts JSON into fact rows (columns :data:`COLUMNS` up to ``frame``).

    ``name`` labels the file in errors. Rows with a bad date or value are skipped and added to
    ``counts`` (``bad_date``, ``bad_value``). Revision columns are not added here (see
    :func:`~anachron.sources.edgar.revisions.add_revisions`).

    Raises :class:`SourceError` naming the file (and concept) when the JSON is invalid or a
    required key (``cik``, ``facts``; per fact ``end, val, accn, form, filed``) is missing.
    """
    counts = counts if counts is not None else Counter()
    if isinstance(data, dict):
        obj = data
    else:
        try:
            obj = json.loads(data)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise SourceError(f"{name}: not valid JSON ({exc}); replace it with an SEC companyfacts file.") from exc
    if not isinstance(obj, dict):
        raise SourceError(f"{name}: expected a JSON object; the file is not an SEC companyfacts file.")
    require_keys(obj, FILE_KEYS, name, error=SourceError, hint="the file is not an SEC companyfacts file — replace it.")
    cik = parse_cik(obj["cik"])
    entity = str(obj.get("entityName") or "")
    rows: list[tuple] = []
    for taxonomy, concepts in (obj["facts"] or {}).items():
        for concept, body in (concepts or {}).items():
            where = f"{name} ({taxonomy}:{concept})"
            if not isinstance(body, dict) or "units" not in body:
                raise SourceError(f"{where}: missing required key units; the file is not an SEC companyfacts file.")
            label = body.get("label")
            for unit, facts in (body["units"] or {}).items():
                fact_where = f"{where} unit {unit}: a fact"
                for fact in facts:
                    require_keys(fact, FACT_KEYS, fact_where, error=SourceError, hint="the file is not an SEC companyfacts file.")
                    end, filed, start = fact["end"], fact["filed"], fact.get("start")
                    if not (is_iso_day(end) and is_iso_day(filed) and (start is None or is_iso_day(start))):
                        counts["bad_date"] += 1
                        continue
                    val = fact["val"]
                    if isinstance(val, bool) or not isinstance(val, (int, float)) or not math.isfinite(val):
                        counts["bad_value"] += 1
                        continue
                    fy = fact.get("fy")
                    rows.append(
                        (
                            cik,
                            entity,
                            str(taxonomy),
                            str(concept),
                            None if label is None else str(label),
                            str(unit),
                            float(val),
                            start,
                            end,
                            int(fy) if isinstance(fy, (int, float)) and not isinstance(fy, bool) and fy == fy else None,
                            None if fact.get("fp") is None else str(fact["fp"]),
                            str(fact["form"]),
                            filed,
                            str(fact["accn"]),
                            None if fact.get("frame") is None else str(fact["frame"]),
                        )
                    )
    df = pd.DataFrame(rows, columns=COLUMNS[:15])
    df["cik"] = df["cik"].astype("int64")
    df["val"] = df["val"].astype("float64")
    df["fy"] = df["fy"].astype("Int64")
    return df
