"""Leakage measured on retrieval traces: TCLR, survivorship, restatement, query intent.

Definitions (Anachron v0 scorer; docs/metrics.md#trace-metrics), each a share of an instance's tool calls
(rows of the tool-call log, :data:`anachron.store.schema.TOOL_CALL_COLUMNS`):

* **TCLR** (tool-call leakage rate): the call returned or consumed a document published
  after the cutoff (``after_cutoff`` or ``restatements`` non-empty). A document published
  *on* the cutoff day does not leak.
* **survivorship**: the call returned a document about an entity that was not
  point-in-time valid at the cutoff (not yet listed, or already delisted) —
  ``invalid_entities`` non-empty. A date filter does not remove this.
* **restatement**: the call consumed a post-cutoff revision of an earlier record
  (``restatements`` non-empty); a labelled subset of TCLR's leaks, reported apart.
* **query intent**: the query itself asks for a time after the cutoff
  (``query_intent_after_cutoff``). Reported separately, never folded into TCLR.

Every logged call is in the denominator, including calls that failed (empty query,
backend error): a failed call surfaced nothing, so it did not leak. ``n_errors`` is
reported beside the rates. Instances without any tool call have no rates (NaN) and
are left out of the aggregates.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pandas as pd

from anachron.metrics.core import bootstrap_ci
from anachron.store.schema import METRIC_COLUMNS, TRACE_SCORE_COLUMNS

#: Metric names of the trace metrics, in report order.
TRACE_METRICS = ("tclr", "survivorship", "restatement", "query_intent")


def _ids(value: Any) -> list[str]:
    """A JSON-list cell (string, list or null) as a list."""
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return []
    if isinstance(value, str):
        return list(json.loads(value)) if value.strip() else []
    return list(value)


def call_flags(tool_calls: pd.DataFrame) -> pd.DataFrame:
    """Per-call leak indicators: ``tclr``, ``survivorship``, ``restatement``, ``query_intent`` (bool).

    Args:
        tool_calls: rows with at least ``after_cutoff``, ``consumed``, ``invalid_entities``,
            ``restatements`` (JSON lists) and ``query_intent_after_cutoff``.

    Returns:
        A frame with the same index and the four boolean columns plus ``failed`` (``error``
        is set).
    """
    after = tool_calls["after_cutoff"].map(lambda v: len(_ids(v)) > 0)
    restated = tool_calls["restatements"].map(lambda v: len(_ids(v)) > 0)
    out = pd.DataFrame(index=tool_calls.index)
    out["tclr"] = after | restated
    out["survivorship"] = tool_calls["invalid_entities"].map(lambda v: len(_ids(v)) > 0)
    out["restatement"] = restated
    out["query_intent"] = tool_calls["query_intent_after_cutoff"].fillna(False).astype(bool)
    err = tool_calls["error"] if "error" in tool_calls else pd.Series(None, index=tool_calls.index)
    out["failed"] = err.map(lambda e: e is not None and not (isinstance(e, float) and np.isnan(e)) and str(e) != "")
    return out


def trace_instance_scores(tool_calls: pd.DataFrame, run: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per-instance trace metrics (:data:`TRACE_SCORE_COLUMNS`).

    Args:
        tool_calls: the tool-call log of one or more runs (``task``, ``method``, ``model``,
            ``instance_id`` plus the flag columns; a ``split`` column is used when present).
        run: optional run table(s) (``task``, ``method``, ``model``, ``instance_id``,
            ``split``): gives each instance its split, and adds the run's instances that made
            no tool call (``n_calls`` 0, rates NaN). Without it, split is ``"eval"`` unless the
            log has a ``split`` column.

    Returns:
        One row per (task, method, model, instance_id): ``n_calls``, ``n_errors`` and the four
        rates in [0, 1] (share of the instance's calls with that leak).
    """
    keys = ["task", "method", "model", "instance_id"]
    if len(tool_calls):
        flags = call_flags(tool_calls)
        frame = pd.concat([tool_calls[keys].reset_index(drop=True), flags.reset_index(drop=True)], axis=1)
        if "split" in tool_calls:
            frame["split"] = tool_calls["split"].to_numpy()
        agg = frame.groupby(keys, sort=True).agg(
            n_calls=("tclr", "size"),
            n_errors=("failed", "sum"),
            tclr=("tclr", "mean"),
            survivorship=("survivorship", "mean"),
            restatement=("restatement", "mean"),
            query_intent=("query_intent", "mean"),
            **({"split": ("split", "first")} if "split" in frame else {}),
        ).reset_index()
    else:
        agg = pd.DataFrame(columns=keys + ["n_calls", "n_errors", *TRACE_METRICS])
    if run is not None and len(run):
        runs = run[keys + ["split"]].drop_duplicates(keys)
        agg = runs.merge(agg.drop(columns=["split"], errors="ignore"), on=keys, how="left")
        agg["n_calls"] = agg["n_calls"].fillna(0)
        agg["n_errors"] = agg["n_errors"].fillna(0)
    if "split" not in agg:
        agg["split"] = "eval"
    agg["n_calls"] = agg["n_calls"].astype("int64")
    agg["n_errors"] = agg["n_errors"].astype("int64")
    for m in TRACE_METRICS:
        agg[m] = agg[m].astype(float)
    return agg[TRACE_SCORE_COLUMNS].sort_values(keys).reset_index(drop=True)


def aggregate_traces(
    scores: pd.DataFrame, *, n_resamples: int = 2000, confidence: float = 0.95, seed: int = 0
) -> pd.DataFrame:
    """Trace metrics per (task, method, model, split) as :data:`~anachron.metrics.core.METRIC_COLUMNS` rows.

    ``value`` is the mean over instances with at least one tool call of the per-instance
    rate (metric names ``tclr``, ``survivorship``, ``restatement``, ``query_intent``);
    ``ci_low`` / ``ci_high`` a percentile bootstrap CI over those instances; ``n`` their number.
    A missing ``split`` column counts as ``"eval"``.
    """
    if not len(scores):
        return pd.DataFrame(columns=METRIC_COLUMNS)
    scores = scores if "split" in scores else scores.assign(split="eval")
    keys = ["task", "method", "model", "split"]
    out = []
    for key, g in scores.groupby(keys, sort=True):
        base = dict(zip(keys, key))
        for metric in TRACE_METRICS:
            v = g[metric].to_numpy(dtype=float)
            v = v[~np.isnan(v)]
            lo, hi = bootstrap_ci(v, n_resamples=n_resamples, confidence=confidence, seed=seed)
            out.append({**base, "metric": metric, "value": float(v.mean()) if v.size else np.nan,
                        "ci_low": lo, "ci_high": hi, "n": int(v.size)})
    return pd.DataFrame(out, columns=METRIC_COLUMNS)
