"""The tables of ``results.duckdb`` computed from the others: ``metrics`` and ``trace_scores``.

:func:`derived_tables` is what the store's writer runs once every loaded table is in the database
(``anachron.store.load.write_database(..., derive=...)``; the rule ``load_results`` passes it): it
reads the rows it needs through the writer's reader and returns the computed tables, so the store
only writes and the aggregates stay pure functions of stored rows (docs/metrics.md).
"""

from __future__ import annotations

from typing import Any, Callable, Iterator, Mapping, Sequence

import pandas as pd

from anachron.metrics.core import aggregate
from anachron.metrics.probes import aggregate_clean, aggregate_probes
from anachron.metrics.shapley import aggregate_shapley
from anachron.metrics.traces import aggregate_traces, trace_instance_scores

#: The ``tool_calls`` columns the trace metrics read (:func:`anachron.metrics.traces.call_flags`):
#: only these leave the database, the long text columns (``query``, ``flag_reason``) stay in it.
TRACE_INPUT_COLUMNS = (
    "task", "method", "model", "instance_id", "returned", "after_cutoff", "invalid_entities",
    "restatements", "query_intent_after_cutoff", "error", "entity_docs",
)
#: The ``completions`` columns the trace metrics read (each instance's split; instances without a call).
TRACE_RUN_COLUMNS = ("task", "method", "model", "instance_id", "split")

#: ``read(table, columns=None, runs_of=None) -> DataFrame``: rows of a loaded table (only
#: ``columns``; with ``runs_of``, only the runs (task, method, model) that table has).
Reader = Callable[..., pd.DataFrame]


def derived_tables(read: Reader, *, bootstrap: Mapping[str, Any] | None = None) -> Iterator[tuple[str, pd.DataFrame]]:
    """The computed rows, as ``(table, rows)`` in the order they are written.

    Args:
        read: the writer's reader of the loaded tables (:data:`Reader`).
        bootstrap: ``{"n_resamples", "confidence", "seed"}`` for the metric CIs.

    Yields:
        ``("metrics", ...)`` from the instance scores (OLR, Perf, Cov, parse rate), then, when a
        run searched, ``("trace_scores", ...)`` and their ``("metrics", ...)`` (TCLR, survivorship,
        restatement, query intent), then ``("metrics", ...)`` of Shapley-DCLR, of the leakage-adjusted
        Perf (``clean_scores``) and of the probes (``probe_scores``; :mod:`anachron.metrics.probes`).
    """
    boot = dict(bootstrap or {})
    yield "metrics", aggregate(read("instance_scores"), **boot)
    calls = read("tool_calls", TRACE_INPUT_COLUMNS)
    if len(calls):
        traces = trace_instance_scores(calls, run=read("completions", TRACE_RUN_COLUMNS, runs_of="tool_calls"))
        yield "trace_scores", traces
        yield "metrics", aggregate_traces(traces, **boot)
    yield "metrics", aggregate_shapley(read("shapley"), **boot)
    yield "metrics", aggregate_clean(read("clean_scores"), **boot)
    yield "metrics", aggregate_probes(read("probe_scores"), **boot)


def derive_with(bootstrap: Mapping[str, Any] | None = None) -> Callable[[Reader], Iterator[tuple[str, pd.DataFrame]]]:
    """:func:`derived_tables` with its bootstrap settings bound (the writer's ``derive``)."""
    return lambda read: derived_tables(read, bootstrap=bootstrap)


__all__: Sequence[str] = ("TRACE_INPUT_COLUMNS", "TRACE_RUN_COLUMNS", "Reader", "derive_with", "derived_tables")
