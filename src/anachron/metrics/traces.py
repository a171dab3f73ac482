"""Leakage measured on retrieval traces: TCLR, survivorship, restatement, query intent.

Definitions (Anachron v0 scorer; docs/metrics.md#trace-metrics). A *run* is one instance's
trace: the rows of the tool-call log (:data:`anachron.store.schema.TOOL_CALL_COLUMNS`) of that
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

:func:`score_call` derives a call's leak columns and its readable ``flag_reason`` from the
hits, so the retrieval methods and the tests share one definition.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any, Iterable, Protocol, Sequence

import numpy as np
import pandas as pd

from anachron.dates import to_date
from anachron.metrics.core import bootstrap_ci
from anachron.store.schema import METRIC_COLUMNS, TRACE_SCORE_COLUMNS

#: Per-instance trace metrics (columns of ``trace_scores``), in report order.
INSTANCE_TRACE_METRICS = ("tclr", "survivorship", "restatement", "query_intent")
#: Metric names of the aggregated trace metrics (rows of ``metrics``), in report order.
TRACE_METRICS = ("tclr", "tclr_tool_using", "survivorship", "restatement", "query_intent")
#: Separator of the clauses of a ``flag_reason``.
REASON_SEP = "; "


class EntityValidityLike(Protocol):
    """What :func:`score_call` needs of an entity table (:class:`anachron.retrieval.search.EntityValidity`)."""

    def __contains__(self, entity: object) -> bool: ...

    def is_valid(self, entity: str, day: Any) -> bool: ...

    def spells(self, entity: str) -> list[tuple[str | None, str | None]]: ...


def _ids(value: Any) -> list[str]:
    """A JSON-list cell (string, list or null) as a list."""
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return []
    if isinstance(value, str):
        return list(json.loads(value)) if value.strip() else []
    return list(value)


def published_after(hit: Any, cutoff: dt.date) -> bool:
    """True when ``hit.published_at`` is a day after ``cutoff`` (an undated hit is not "after")."""
    d = to_date(getattr(hit, "published_at", None))
    return d is not None and d > cutoff


def restated_id(hit: Any) -> str | None:
    """The doc id ``hit`` revises (``hit.restates``), or None (missing, NaN and blank all mean none)."""
    value = getattr(hit, "restates", None)
    return value.strip() or None if isinstance(value, str) else None


def _invalid_reason(entity: str, doc_id: str, cutoff: dt.date, spells: Sequence[tuple[str | None, str | None]]) -> str:
    """Why ``entity`` (not valid at ``cutoff``) is flagged: removed before, or not yet valid."""
    day = cutoff.isoformat()
    # Spells begun by the cutoff have all ended by then (the entity is not valid on ``day``).
    removed = [vt for vf, vt in spells if (vf is None or vf <= day) and vt is not None]
    later = [vf for vf, _ in spells if vf is not None and vf > day]
    if removed:
        again = f", valid again from {min(later)}" if later else ""
        return f"entity {entity} (doc {doc_id}) no longer valid at {day} (removed {max(removed)}{again})"
    if later:
        return f"entity {entity} (doc {doc_id}) not yet valid at {day} (valid from {min(later)})"
    return f"entity {entity} (doc {doc_id}) not valid at {day}"


def score_call(
    hits: Sequence[Any],
    cutoff: dt.date,
    *,
    consumed: Iterable[str] = (),
    validity: EntityValidityLike | None = None,
    query_intent: bool = False,
) -> dict[str, Any]:
    """The leak columns of one search call, as stored in ``tool_calls`` (JSON lists as strings).

    Args:
        hits: the call's results, in rank order; each has ``doc_id``, ``published_at`` (ISO day
            or None), ``entities`` (entity keys) and ``restates`` (doc id or None).
        cutoff: the instance's cutoff day.
        consumed: ids of documents that made it into the prompt (over all the run's calls).
        validity: the entity table; None means no survivorship check (no entity-bearing document).
        query_intent: whether the query names a time after the cutoff (adds a reason clause).

    Returns:
        ``returned``, ``consumed`` (the call's returned ids that are in ``consumed``),
        ``after_cutoff``, ``entity_docs`` (returned docs with an entity ``validity`` knows),
        ``invalid_entities`` (entities of returned docs not valid at the cutoff, first-seen
        order), ``restatements`` (returned docs published after the cutoff that revise another
        one, consumed or not) and ``flag_reason``: one clause per finding, joined with
        :data:`REASON_SEP` (document id, its date, the id a restatement revises, the entity and
        its validity bound), or None when the call is not flagged.
    """
    used = set(consumed)
    day = cutoff.isoformat()
    returned, kept, after, entity_docs, invalid, restated = [], [], [], [], [], []
    reasons: list[str] = []
    for h in hits:
        returned.append(h.doc_id)
        if h.doc_id in used:
            kept.append(h.doc_id)
        late = published_after(h, cutoff)
        prior = restated_id(h)
        when = str(to_date(getattr(h, "published_at", None)))
        if late:
            after.append(h.doc_id)
            if prior:
                restated.append(h.doc_id)
                reasons.append(f"restatement {h.doc_id} dated {when} > {day} revises {prior}")
            else:
                reasons.append(f"doc {h.doc_id} dated {when} > {day}")
        if validity is None:
            continue
        ents = list(getattr(h, "entities", ()) or ())
        if any(e in validity for e in ents):
            entity_docs.append(h.doc_id)
        for e in ents:
            if e not in invalid and not validity.is_valid(e, cutoff):
                invalid.append(e)
                reasons.append(_invalid_reason(e, h.doc_id, cutoff, validity.spells(e)))
    if query_intent:
        reasons.append(f"query names a time after {day}")
    return {
        "returned": json.dumps(returned),
        "consumed": json.dumps(kept),
        "after_cutoff": json.dumps(after),
        "entity_docs": json.dumps(entity_docs),
        "invalid_entities": json.dumps(invalid),
        "restatements": json.dumps(restated),
        "flag_reason": REASON_SEP.join(reasons) or None,
    }


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
    after = tool_calls["after_cutoff"].map(lambda v: len(_ids(v)) > 0)
    restated = tool_calls["restatements"].map(lambda v: len(_ids(v)) > 0)
    invalid = tool_calls["invalid_entities"].map(lambda v: len(_ids(v)) > 0)
    none = pd.Series(None, index=tool_calls.index, dtype=object)
    known = tool_calls["entity_docs"] if "entity_docs" in tool_calls else none
    returned = tool_calls["returned"] if "returned" in tool_calls else none
    # NULL entity_docs: a log written before the column existed -> any returned document counts.
    bearing = pd.Series(
        [len(_ids(r if k is None or (isinstance(k, float) and np.isnan(k)) else k)) > 0 for k, r in zip(known, returned)],
        index=tool_calls.index,
    ) | invalid
    out = pd.DataFrame(index=tool_calls.index)
    out["tclr"] = after | restated
    out["survivorship"] = invalid.astype(float).where(bearing, np.nan)
    out["entity_call"] = bearing.astype(bool)
    out["restatement"] = restated
    out["query_intent"] = tool_calls["query_intent_after_cutoff"].fillna(False).astype(bool)
    err = tool_calls["error"] if "error" in tool_calls else pd.Series(None, index=tool_calls.index)
    out["failed"] = err.map(lambda e: e is not None and not (isinstance(e, float) and np.isnan(e)) and str(e) != "")
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
    out = []
    for key, g in scores.groupby(keys, sort=True):
        base = dict(zip(keys, key))
        for metric in TRACE_METRICS:
            v = _metric_values(g, metric)
            lo, hi = bootstrap_ci(v, n_resamples=n_resamples, confidence=confidence, seed=seed)
            out.append({**base, "metric": metric, "value": float(v.mean()) if v.size else np.nan,
                        "ci_low": lo, "ci_high": hi, "n": int(v.size)})
    return pd.DataFrame(out, columns=METRIC_COLUMNS)
