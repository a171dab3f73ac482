"""Leakage measured on retrieval traces: TCLR, survivorship, restatement, query intent.

Definitions (Anachron v0 scorer; docs/metrics.md#trace-metrics). A *run* is one instance's
trace: the rows of the tool-call log (:data:`anachron.tables.TOOL_CALL_COLUMNS`) of that
instance. Per call:

* **TCLR** (tool-call leakage rate): the call returned or consumed a document published
  after the cutoff (``after_cutoff`` or ``restatements`` non-empty). A document published
  *on* the cutoff day does not leak. A run's TCLR is the share of its calls that leak; a run
  without any call has TCLR 0 (as in v0). Two aggregates: ``tclr`` over all runs (v0's mean
  TCLR) and ``tclr_tool_using`` over runs with at least one call.
* **survivorship**: among the calls that returned at least one *entity-bearing* document (one
  carrying an entity the validity table knows, ``entity_docs`` non-empty), those that returned
  an entity not point-in-time valid at the cutoff (``invalid_entities`` non-empty). Undefined
  (NaN / NULL) for a run without such a call. A date filter does not remove this.
* **restatement**: the call returned or consumed a post-cutoff revision of an earlier record
  (``restatements`` non-empty; a revision retrieved but cut from the prompt by the token
  budget counts); a labelled subset of TCLR's leaks, reported apart.
* **query intent**: the query itself asks for a time after the cutoff
  (``query_intent_after_cutoff``). Reported separately, never folded into TCLR.

Restatement and query intent are shares of a run's calls, undefined for a run without calls.
Every logged call is in the denominators, including calls that failed (empty query, backend
error): a failed call surfaced nothing, so it did not leak. ``n_errors`` is reported beside.

:func:`anachron.retrieval.trace.score_call` derives a call's leak columns and its readable
``flag_reason`` from the hits when a retrieval method logs the call; this module reads them.
"""

from __future__ import annotations


import numpy as np
import pandas as pd

from anachron.frames import json_lists_nonempty
from anachron.metrics.core import fill_cis
from anachron.tables import METRIC_COLUMNS, TRACE_SCORE_COLUMNS

#: Per-instance trace metrics (columns of ``trace_scores``), in report order.
INSTANCE_TRACE_METRICS = ("tclr", "survivorship", "restatement", "query_intent")
#: Metric names of the aggregated trace metrics (rows of ``metrics``), in report order.
TRACE_METRICS = ("tclr", "tclr_tool_using", "survivorship", "restatement", "query_intent")
def call_flags(tool_calls: pd.DataFrame) -> pd.DataFrame:
    """Per-call leak indicators.

    Args:
        tool_calls: rows with at least ``after_cutoff``, ``invalid_entities``, ``restatements``
            (JSON lists) and ``query_intent_after_cutoff``; ``entity_docs`` and ``error`` when
            present. Where ``entity_docs`` is absent or NULL (a log written before that column
            existed), every call that returned a document counts as entity-bearing.

    Returns:
        A frame with the same index: ``tclr``, ``restatement``, ``query_intent`` (bool),
        ``survivorship`` (float: 1.0 / 0.0, NaN for a call without an entity-bearing
        document), ``entity_call`` (bool) and ``failed`` (``error`` is set).
    """
    def nonempty(column: str, where: np.ndarray | None = None) -> np.ndarray:
        """Non-empty lists of ``column`` (only the rows ``where``; False elsewhere)."""
        out = np.zeros(len(tool_calls), dtype=bool)
        if column in tool_calls:
            cells = tool_calls[column].to_numpy(dtype=object)
            if where is None:
                out[:] = json_lists_nonempty(cells)
            elif where.any():
                out[where] = json_lists_nonempty(cells[where])
        return out

    after, restated, invalid = (pd.Series(nonempty(c), index=tool_calls.index)
                                for c in ("after_cutoff", "restatements", "invalid_entities"))
    # NULL entity_docs: a log written before the column existed -> any returned document counts.
    unknown = tool_calls["entity_docs"].isna().to_numpy() if "entity_docs" in tool_calls else np.ones(len(tool_calls), bool)
    bearing = pd.Series(nonempty("returned", unknown) | nonempty("entity_docs", ~unknown), index=tool_calls.index) | invalid
    out = pd.DataFrame(index=tool_calls.index)
    out["tclr"] = after | restated
    out["survivorship"] = invalid.astype(float).where(bearing, np.nan)
    out["entity_call"] = bearing.astype(bool)
    out["restatement"] = restated
    out["query_intent"] = tool_calls["query_intent_after_cutoff"].fillna(False).astype(bool)
    err = tool_calls["error"] if "error" in tool_calls else pd.Series(None, index=tool_calls.index, dtype=object)
    out["failed"] = err.notna() & (err.astype(str) != "")
    return out


def trace_instance_scores(tool_calls: pd.DataFrame, run: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per-instance trace metrics (:data:`TRACE_SCORE_COLUMNS`), one row per run (instance trace).

    Args:
        tool_calls: the tool-call log of one or more runs (``task``, ``method``, ``model``,
            ``instance_id`` plus the flag columns; a ``split`` column is used when present).
        run: optional run table(s) (``task``, ``method``, ``model``, ``instance_id``,
            ``split``): gives each instance its split, and adds the run's instances that made
            no tool call (``n_calls`` 0, ``tclr`` 0 as in v0, the other rates NaN). Without it,
            split is ``"eval"`` unless the log has a ``split`` column.

    Returns:
        One row per (task, method, model, instance_id): ``n_calls``, ``n_errors``,
        ``n_entity_calls`` (calls with an entity-bearing document), ``tclr``, ``restatement``,
        ``query_intent`` (shares of the calls) and ``survivorship`` (share of the entity-bearing
        calls; NaN when there is none), all in [0, 1].
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
            n_entity_calls=("entity_call", "sum"),
            tclr=("tclr", "mean"),
            survivorship=("survivorship", "mean"),
            restatement=("restatement", "mean"),
            query_intent=("query_intent", "mean"),
            **({"split": ("split", "first")} if "split" in frame else {}),
        ).reset_index()
    else:
        agg = pd.DataFrame(columns=keys + ["n_calls", "n_errors", "n_entity_calls", *INSTANCE_TRACE_METRICS])
    if run is not None and len(run):
        runs = run[keys + ["split"]].drop_duplicates(keys)
        agg = runs.merge(agg.drop(columns=["split"], errors="ignore"), on=keys, how="left")
        for c in ("n_calls", "n_errors", "n_entity_calls"):
            agg[c] = agg[c].fillna(0)
        agg["tclr"] = agg["tclr"].astype(float).where(agg["n_calls"] > 0, 0.0)  # no call, no leak (v0)
    if "split" not in agg:
        agg["split"] = "eval"
    for c in ("n_calls", "n_errors", "n_entity_calls"):
        agg[c] = agg[c].astype("int64")
    for m in INSTANCE_TRACE_METRICS:
        agg[m] = agg[m].astype(float)
    return agg[TRACE_SCORE_COLUMNS].sort_values(keys).reset_index(drop=True)


def _metric_values(g: pd.DataFrame, metric: str) -> np.ndarray:
    """The per-instance values ``metric`` averages over (NaN = undefined, left out)."""
    if metric == "tclr_tool_using":
        v = g.loc[g["n_calls"] > 0, "tclr"].to_numpy(dtype=float)
    else:
        v = g[metric].to_numpy(dtype=float)
    return v[~np.isnan(v)]


def aggregate_traces(
    scores: pd.DataFrame, *, n_resamples: int = 2000, confidence: float = 0.95, seed: int = 0
) -> pd.DataFrame:
    """Trace metrics per (task, method, model, split) as :data:`~anachron.metrics.core.METRIC_COLUMNS` rows.

    ``value`` is the mean of the per-instance values over the instances where the metric is
    defined, ``n`` their number, ``ci_low`` / ``ci_high`` a percentile bootstrap CI over them:

    * ``tclr``: every run (a run without a call counts 0; v0's mean TCLR);
    * ``tclr_tool_using``: the runs with at least one call;
    * ``survivorship``: the runs with at least one entity-bearing call;
    * ``restatement``, ``query_intent``: the runs with at least one call.

    ``value`` is NaN (NULL in the database) with ``n`` 0 when no instance qualifies. A missing
    ``split`` column counts as ``"eval"``; a missing ``n_calls`` column is read as "every row
    made calls" (only ``tclr`` non-NaN rows).
    """
    if not len(scores):
        return pd.DataFrame(columns=METRIC_COLUMNS)
    scores = scores if "split" in scores else scores.assign(split="eval")
    if "n_calls" not in scores:
        scores = scores.assign(n_calls=scores["tclr"].notna().astype(int))
    keys = ["task", "method", "model", "split"]
    out, vectors = [], []
    for key, g in scores.groupby(keys, sort=True):
        base = dict(zip(keys, key))
        for metric in TRACE_METRICS:
            v = _metric_values(g, metric)
            out.append({**base, "metric": metric, "value": float(v.mean()) if v.size else np.nan,
                        "ci_low": np.nan, "ci_high": np.nan, "n": int(v.size)})
            vectors.append(v)
    fill_cis(out, vectors, n_resamples=n_resamples, confidence=confidence, seed=seed)
    return pd.DataFrame(out, columns=METRIC_COLUMNS)
