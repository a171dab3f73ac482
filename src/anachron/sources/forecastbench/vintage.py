"""Which vintage of a series decided each label, and FRED labels re-resolved on first releases
(:mod:`anachron.sources.forecastbench`, "Labels as first published")."""

from __future__ import annotations

import datetime as dt
import logging
from collections import Counter
from typing import Any, Callable

import pandas as pd

from anachron.io import sha256_bytes
from anachron.sources.forecastbench.alfred import AlfredClient, AlfredError, value_on

log = logging.getLogger(__name__)

#: Sources whose series are revised after first publication: their ForecastBench labels are read
#: on the series as revised.
REVISABLE_SOURCES = ("fred", "dbnomics")
#: Sources re-resolved on first releases (ALFRED) when a FRED API key is available.
FIRST_RELEASE_SOURCES = ("fred",)
#: ``label_vintage`` of a revisable series' row labelled as ForecastBench resolved it.
AS_REVISED = "as_revised"
#: ``label_vintage`` of any other row (markets, prices, counts: no vintages to choose from).
AS_PUBLISHED = "as_published_by_forecastbench"
#: ``label_vintage`` prefix of a row re-resolved on first releases.
FIRST_RELEASE = "first_release"
#: Days before a series' earliest due date requested, so that the latest observation on or
#: before it is among those returned (two years: annual series included).
LOOKBACK_DAYS = 731


def default_vintage(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with ``label_vintage`` and ``revised_value`` as ForecastBench published the labels:
    :data:`AS_REVISED` / True for :data:`REVISABLE_SOURCES`, :data:`AS_PUBLISHED` / False otherwise."""
    out = df.copy()
    revised = out["source"].isin(REVISABLE_SOURCES)
    out["label_vintage"] = revised.map({True: AS_REVISED, False: AS_PUBLISHED}).astype(object)
    out["revised_value"] = revised.astype(bool)
    return out


def first_release_label(releases: list, due: str, resolution: str) -> tuple[float, str]:
    """``(resolved_to, label_vintage)`` of one question on first releases: 1.0 when the value on the
    resolution date is strictly greater than the value on the due date (a tie is 0.0, as ForecastBench
    resolves), each the latest observation dated on or before the day, as first published. Raises
    :class:`AlfredError` (``no_first_release_on_due_date`` / ``no_first_release_on_resolution_date``)."""
    before, after = value_on(releases, due), value_on(releases, resolution)
    if before is None:
        raise AlfredError("no_first_release_on_due_date", f"no observation dated on or before {due}")
    if after is None:
        raise AlfredError("no_first_release_on_resolution_date", f"no observation dated on or before {resolution}")
    vintage = f"{FIRST_RELEASE}:due={before.published},resolution={after.published}"
    return float(after.value > before.value), vintage


def resolve_first_release(
    df: pd.DataFrame, client: AlfredClient, record: Callable[..., None]
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Re-resolve the resolved :data:`FIRST_RELEASE_SOURCES` rows of ``df`` (a table with
    :func:`default_vintage`'s columns) on first releases; a row whose lookup fails keeps
    ForecastBench's label (``revised_value`` True) and counts its reason.

    ``record(origin, sha256, rows, **extra)`` is called once per series fetched. Returns the table
    and ``{"first_release_rows", "first_release_flips", "first_release_fallbacks"}``.
    """
    out = df.copy()
    fallbacks: Counter = Counter()
    done = flips = 0
    todo = out[out["source"].isin(FIRST_RELEASE_SOURCES) & out["resolved"].astype(bool)]
    for series_id, rows in todo.groupby("question_id", sort=True):
        start = (dt.date.fromisoformat(rows["forecast_due_date"].min()) - dt.timedelta(days=LOOKBACK_DAYS)).isoformat()
        end = rows["resolution_date"].max()
        try:
            releases, body = client.first_releases(str(series_id), start, end)
        except AlfredError as exc:
            fallbacks[exc.reason] += len(rows)
            log.warning("ForecastBench: %s; %d rows keep ForecastBench's label (as revised)", exc, len(rows))
            continue
        record(client.origin(str(series_id), start, end), sha256_bytes(body), len(releases),
               kind="alfred_first_release", series_id=str(series_id))
        for i, r in rows.iterrows():
            try:
                y, vintage = first_release_label(releases, r["forecast_due_date"], r["resolution_date"])
            except AlfredError as exc:
                fallbacks[exc.reason] += 1
                continue
            flips += int(y != float(r["resolved_to"]))
            out.at[i, "resolved_to"], out.at[i, "label_vintage"], out.at[i, "revised_value"] = y, vintage, False
            done += 1
    log.info("ForecastBench: %d FRED rows re-resolved on first releases (%d flipped); fallbacks %s", done, flips, dict(fallbacks))
    return out, {"first_release_rows": done, "first_release_flips": flips,
                 "first_release_fallbacks": {k: int(v) for k, v in sorted(fallbacks.items())}}
