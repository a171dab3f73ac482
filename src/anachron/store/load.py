"""Build ``results/results.duckdb`` from the workflow's Parquet and JSON outputs (docs/results.md).

:func:`write_database` is the only writer. It builds the whole database in a
temporary file next to the target and renames it into place, so readers never
see a half-written database and an interrupted load leaves the old one intact.

Every table is first created from its declaration in :mod:`anachron.tables`; DuckDB
then reads each table's Parquet files itself (``read_parquet([...], union_by_name=true)``,
files in the order given, rows in file order) and casts every column to its declared type.
A column that no file has is NULL; a column that the schema does not declare is an error.
The computed tables (``runs`` from the run metadata JSON; ``trace_scores`` and ``metrics`` from
the ``derive`` hook, :func:`anachron.metrics.derived.derived_tables` in the workflow) go through
the same declared columns; the store itself computes nothing.

Memory: no input table passes through pandas whole. DuckDB streams the Parquet files into the
database under a memory limit (:data:`MEMORY_LIMIT`, beyond which it writes to disk), and the
computed tables read back only the columns they need (the instance scores; the flag columns of
the tool calls; keys and split of the searching runs' completions). On 1,000,000 claims with
their completions, calls and scores the whole load peaks at about 1 GB
(benchmarks/bench_load_results.py).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Callable, Iterable, Mapping, Sequence

import duckdb
import pandas as pd
import pyarrow.parquet as pq

from anachron.cost import TOKENS_PER_PRICE
from anachron.io import atomic_path
from anachron.tables import MAIN_TABLE_VIEW, SCHEMA, TABLES

Paths = Sequence[str | os.PathLike[str]]

#: DuckDB's memory limit while the database is built. Without one DuckDB caches up to 80% of
#: the machine's memory (the 125,000 completions of the 1,000,000-claim benchmark alone took
#: ~1.1 GB); with it, a large insert writes its finished row groups to the file instead.
MEMORY_LIMIT = "1GB"
#: ``derive(read) -> [(table, rows), ...]``: the computed tables, given a reader of the loaded ones.
Derive = Callable[[Callable[..., pd.DataFrame]], Iterable[tuple[str, pd.DataFrame]]]


def read_run_meta(paths: Paths) -> pd.DataFrame:
    """One ``runs`` row per run metadata JSON (written by ``run_method``)."""
    rows = [json.loads(Path(p).read_text()) for p in paths]
    return pd.DataFrame(rows)


def _sql_str(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def _columns(names: Sequence[str]) -> str:
    """A SQL select list of quoted column names."""
    return ", ".join(f'"{c}"' for c in names)


def _insert(con: duckdb.DuckDBPyConnection, table: str, source: str, columns: Sequence[str], origin: str) -> None:
    """``INSERT INTO table SELECT ... FROM source``: the declared columns, cast; NULL where absent."""
    decl = SCHEMA[table]
    extra = [c for c in columns if c not in decl.names]
    if extra:
        raise ValueError(
            f"table {table!r}: {origin} has columns {extra} that anachron/tables.py does not declare"
        )
    have = set(columns)
    select = ", ".join(
        f'CAST("{c}" AS {t}) AS "{c}"' if c in have else f'CAST(NULL AS {t}) AS "{c}"' for c, t in decl.columns
    )
    con.execute(f"INSERT INTO {table} SELECT {select} FROM {source}")


def load_parquet(con: duckdb.DuckDBPyConnection, table: str, paths: Paths) -> None:
    """Append the rows of ``paths`` (in that order) to the declared ``table``.

    A file without any column (an empty frame written as is) adds nothing; so do no paths.

    Raises:
        ValueError: a file has a column the table does not declare.
    """
    paths = [p for p in paths if pq.read_schema(p).names]
    if not paths:
        return
    source = "read_parquet([" + ", ".join(_sql_str(str(p)) for p in paths) + "], union_by_name = true)"
    columns = [r[0] for r in con.execute(f"DESCRIBE SELECT * FROM {source}").fetchall()]
    _insert(con, table, source, columns, f"{len(paths)} Parquet file(s) ({paths[0]}, ...)")


def load_frame(con: duckdb.DuckDBPyConnection, table: str, df: pd.DataFrame) -> None:
    """Append the rows of ``df`` to the declared ``table``.

    Raises:
        ValueError: ``df`` has a column the table does not declare.
    """
    if not len(df):
        return
    con.register("_frame", df)
    try:
        _insert(con, table, "_frame", [str(c) for c in df.columns], "the computed frame")
    finally:
        con.unregister("_frame")


def set_call_costs(con: duckdb.DuckDBPyConnection, prices: Mapping[str, tuple[float, float]]) -> None:
    """Fill ``llm_calls.cost_usd`` from ``prices`` (model key -> USD per million input, output tokens).

    A call is priced by its ``model_name`` (the key of the model that answered it: the verifier's
    or a supervisor's own key, not the run's ``model_key``). Calls of a model not in ``prices``, and
    calls without a prompt or completion token count, keep NULL. Cache hits are priced like the
    others (:mod:`anachron.cost`).
    """
    if not prices:
        return
    con.execute("CREATE TEMP TABLE _prices (model_name VARCHAR, usd_in DOUBLE, usd_out DOUBLE)")
    con.executemany("INSERT INTO _prices VALUES (?, ?, ?)", [[str(k), float(i), float(o)] for k, (i, o) in prices.items()])
    con.execute(
        "UPDATE llm_calls SET cost_usd = (llm_calls.prompt_tokens * p.usd_in + llm_calls.completion_tokens * p.usd_out) "
        f"/ {TOKENS_PER_PRICE} FROM _prices AS p WHERE llm_calls.model_name = p.model_name"
    )
    con.execute("DROP TABLE _prices")


def _reader(con: duckdb.DuckDBPyConnection) -> Callable[..., pd.DataFrame]:
    """``read(table, columns=None, runs_of=None)``: rows of a loaded table as a DataFrame."""

    def read(table: str, columns: Sequence[str] | None = None, *, runs_of: str | None = None) -> pd.DataFrame:
        if table not in SCHEMA or (runs_of is not None and runs_of not in SCHEMA):
            raise ValueError(f"unknown table {table!r} or {runs_of!r}")
        sql = f"SELECT {_columns(columns) if columns else '*'} FROM {table}"
        if runs_of is not None:
            sql += f" WHERE (task, method, model) IN (SELECT DISTINCT task, method, model FROM {runs_of})"
        return con.execute(sql).df()

    return read


def write_database(
    path: str | os.PathLike[str],
    *,
    instances: Paths,
    run_meta: Paths,
    completions: Paths,
    llm_calls: Paths,
    claims: Paths,
    instance_scores: Paths,
    tool_calls: Paths = (),
    claim_shapley: Paths = (),
    shapley: Paths = (),
    calibration: Paths = (),
    planted: Paths = (),
    training_log: Paths = (),
    clean_scores: Paths = (),
    probe_scores: Paths = (),
    derive: Derive | None = None,
    prices: Mapping[str, tuple[float, float]] | None = None,
    memory_limit: str = MEMORY_LIMIT,
    views: Sequence[str] = (),
) -> dict[str, int]:
    """Build ``results.duckdb`` from the workflow's Parquet/JSON outputs, atomically.

    Args:
        path: target database file.
        instances, completions, llm_calls, claims, instance_scores, tool_calls: Parquet files
            per table (tool calls: empty files for methods that do not search).
        claim_shapley, shapley: Parquet files of the shapley rule (φ per claim; per instance).
        calibration, planted: Parquet files of the calibrate_verifier rule.
        training_log: Parquet logs of the train_tempo rule (one per model and task).
        clean_scores: Parquet files of the perf_clean rule; probe_scores: of the score_probe rule.
        run_meta: run metadata JSON files (one per task/method/model).
        derive: computes the derived tables once every input is loaded: called with a reader
            ``read(table, columns=None, runs_of=None) -> DataFrame`` (only ``columns``; with
            ``runs_of``, only the runs (task, method, model) that table has), it returns
            ``(table, rows)`` pairs, appended in order (the workflow passes
            :func:`anachron.metrics.derived.derive_with`); None: ``metrics`` and
            ``trace_scores`` stay empty.
        prices: model key -> ``(USD per million input tokens, USD per million output tokens)``
            (:func:`anachron.cost.model_prices` of the config): each call's ``cost_usd``
            (:func:`set_call_costs`); None or a model left out: NULL.
        memory_limit: DuckDB's ``memory_limit`` while it builds the database (a size such as
            ``"1GB"``); DuckDB keeps an insert's rows in memory up to this size and writes the rest
            to disk, so it bounds what the large tables cost (:data:`MEMORY_LIMIT`).
        views: further SQL statements run, in order, once every table and the ``main_table`` view
            exist (``CREATE VIEW ...``: the workflow passes the report views of
            :func:`anachron.report.registry.report_view_statements`); the store itself knows none.

    Returns:
        Row counts per table (every table of :data:`~anachron.tables.TABLES`).

    Raises:
        ValueError: an input has a column its table does not declare.
        duckdb.Error: a statement of ``views`` fails (no database is written then).
    """
    files = {
        "instances": instances,
        "llm_calls": llm_calls,
        "completions": completions,
        "claims": claims,
        "tool_calls": tool_calls,
        "instance_scores": instance_scores,
        "claim_shapley": claim_shapley,
        "shapley": shapley,
        "calibration": calibration,
        "planted_claims": planted,
        "training_log": training_log,
        "clean_scores": clean_scores,
        "probe_scores": probe_scores,
    }
    with atomic_path(path) as tmp:
        tmp.unlink()  # duckdb creates the file itself
        con = duckdb.connect(str(tmp), config={"memory_limit": memory_limit})
        try:
            for name in TABLES:
                con.execute(SCHEMA[name].create_sql())
            for name, paths in files.items():
                load_parquet(con, name, paths)
            set_call_costs(con, prices or {})
            load_frame(con, "runs", read_run_meta(run_meta))
            for table, rows in (derive(_reader(con)) if derive is not None else ()):
                load_frame(con, table, rows)
            con.execute(MAIN_TABLE_VIEW)
            for statement in views:
                con.execute(statement)
            counts = {name: con.execute(f"SELECT count(*) FROM {name}").fetchone()[0] for name in TABLES}
            con.execute("CHECKPOINT")
        finally:
            con.close()
        wal = Path(str(tmp) + ".wal")
        if wal.exists():
            wal.unlink()
    return counts

