"""The results database: one DuckDB file with every table of DESIGN §7.

:func:`write_database` is the only writer. It builds the whole database in a
temporary file next to the target and renames it into place, so readers never
see a half-written database and an interrupted load leaves the old one intact.

Tables: ``instances``, ``runs``, ``llm_calls``, ``completions``, ``claims``,
``tool_calls`` (one row per search call of a retrieval method), ``instance_scores``,
``trace_scores`` (TCLR, survivorship, restatement, query intent per instance),
``claim_shapley`` (φ per claim), ``shapley`` (Shapley-DCLR, Top-1/3/5, estimator and model calls
per instance), ``calibration`` (verifier recall / false-positive rate on planted claims per task
and layer set), ``planted_claims`` (the planted claims and their verdicts),
``metrics`` (every aggregate, trace metrics included). View: ``main_table`` (OLR / Perf / Cov / parse
rate side by side per task x method x model x split, as rendered in
``results/tables/main.md``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Iterable, Sequence

import duckdb
import pandas as pd

from anachron.io import atomic_path
from anachron.methods.rag import TOOL_CALL_COLUMNS
from anachron.metrics.core import METRIC_COLUMNS, aggregate
from anachron.metrics.traces import TRACE_SCORE_COLUMNS, aggregate_traces, trace_instance_scores

TABLES = (
    "instances",
    "runs",
    "llm_calls",
    "completions",
    "claims",
    "tool_calls",
    "instance_scores",
    "trace_scores",
    "claim_shapley",
    "shapley",
    "calibration",
    "planted_claims",
    "metrics",
)

MAIN_TABLE_VIEW = """
CREATE VIEW main_table AS
SELECT task, method, model, split,
       max(n) FILTER (WHERE metric = 'parse_rate') AS n,
       max(value) FILTER (WHERE metric = 'olr') AS olr,
       max(ci_low) FILTER (WHERE metric = 'olr') AS olr_ci_low,
       max(ci_high) FILTER (WHERE metric = 'olr') AS olr_ci_high,
       max(n) FILTER (WHERE metric = 'olr') AS olr_n,
       max(value) FILTER (WHERE metric = 'perf') AS perf,
       max(ci_low) FILTER (WHERE metric = 'perf') AS perf_ci_low,
       max(ci_high) FILTER (WHERE metric = 'perf') AS perf_ci_high,
       max(n) FILTER (WHERE metric = 'perf') AS perf_n,
       max(value) FILTER (WHERE metric = 'cov') AS cov,
       max(value) FILTER (WHERE metric = 'parse_rate') AS parse_rate,
       max(value) FILTER (WHERE metric = 'undated_rate') AS undated_rate
FROM metrics
GROUP BY task, method, model, split
ORDER BY task, method, model, split
"""


def _concat(paths: Iterable[str | os.PathLike[str]]) -> pd.DataFrame:
    frames = [pd.read_parquet(p) for p in paths]
    frames = [f for f in frames if len(f.columns)]
    if not frames:
        return pd.DataFrame()
    non_empty = [f for f in frames if len(f)]
    return pd.concat(non_empty or frames[:1], ignore_index=True)


def read_run_meta(paths: Sequence[str | os.PathLike[str]]) -> pd.DataFrame:
    """One ``runs`` row per run metadata JSON (written by ``run_method``)."""
    rows = [json.loads(Path(p).read_text()) for p in paths]
    return pd.DataFrame(rows)


def write_database(
    path: str | os.PathLike[str],
    *,
    instances: Sequence[str | os.PathLike[str]],
    run_meta: Sequence[str | os.PathLike[str]],
    completions: Sequence[str | os.PathLike[str]],
    llm_calls: Sequence[str | os.PathLike[str]],
    claims: Sequence[str | os.PathLike[str]],
    instance_scores: Sequence[str | os.PathLike[str]],
    tool_calls: Sequence[str | os.PathLike[str]] = (),
    claim_shapley: Sequence[str | os.PathLike[str]] = (),
    shapley: Sequence[str | os.PathLike[str]] = (),
    calibration: Sequence[str | os.PathLike[str]] = (),
    planted: Sequence[str | os.PathLike[str]] = (),
    bootstrap: dict | None = None,
) -> dict[str, int]:
    """Build ``results.duckdb`` from the workflow's Parquet/JSON outputs, atomically.

    Args:
        path: target database file.
        instances, completions, llm_calls, claims, instance_scores, tool_calls: Parquet files
            per table (tool calls: empty files for methods that do not search).
        claim_shapley, shapley: Parquet files of the shapley rule (φ per claim; per instance).
        calibration, planted: Parquet files of the calibrate_verifier rule.
        run_meta: run metadata JSON files (one per task/method/model).
        bootstrap: ``{"n_resamples", "confidence", "seed"}`` for the metric CIs.

    Returns:
        Row counts per table.
    """
    frames = {
        "instances": _concat(instances),
        "runs": read_run_meta(run_meta),
        "llm_calls": _concat(llm_calls),
        "completions": _concat(completions),
        "claims": _concat(claims),
        "instance_scores": _concat(instance_scores),
    }
    scores = frames["instance_scores"]
    metrics = aggregate(scores, **(bootstrap or {})) if len(scores) else pd.DataFrame(columns=METRIC_COLUMNS)
    calls = _concat(tool_calls)
    if not len(calls.columns):
        calls = pd.DataFrame(columns=TOOL_CALL_COLUMNS)
    frames["tool_calls"] = calls
    if len(calls):
        runs = frames["completions"]
        searched = runs.merge(calls[["task", "method", "model"]].drop_duplicates(), on=["task", "method", "model"])
        traces = trace_instance_scores(calls, run=searched)
    else:
        traces = pd.DataFrame(columns=TRACE_SCORE_COLUMNS)
    frames["trace_scores"] = traces
    if len(traces):
        metrics = pd.concat([metrics, aggregate_traces(traces, **(bootstrap or {}))], ignore_index=True)
    frames["claim_shapley"] = _concat(claim_shapley)
    frames["shapley"] = _concat(shapley)
    if len(frames["shapley"]):
        from anachron.metrics.shapley_run import aggregate_shapley

        metrics = pd.concat([metrics, aggregate_shapley(frames["shapley"], **(bootstrap or {}))], ignore_index=True)
    frames["calibration"] = _concat(calibration)
    frames["planted_claims"] = _concat(planted)
    frames["metrics"] = metrics
    counts: dict[str, int] = {}
    with atomic_path(path) as tmp:
        tmp.unlink()  # duckdb creates the file itself
        con = duckdb.connect(str(tmp))
        try:
            for name, df in frames.items():
                if not len(df.columns):
                    df = pd.DataFrame({"_empty": pd.Series([], dtype="string")})
                con.register("_frame", df)
                con.execute(f"CREATE TABLE {name} AS SELECT * FROM _frame")
                con.unregister("_frame")
                counts[name] = len(df)
            if len(frames["metrics"]):
                con.execute(MAIN_TABLE_VIEW)
            con.execute("CHECKPOINT")
        finally:
            con.close()
        wal = Path(str(tmp) + ".wal")
        if wal.exists():
            wal.unlink()
    return counts


def connect_readonly(path: str | os.PathLike[str]) -> duckdb.DuckDBPyConnection:
    """Open the results database read-only; raise FileNotFoundError with a hint if missing."""
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"{p} does not exist; run `snakemake --cores 2` first to build it")
    return duckdb.connect(str(p), read_only=True)
