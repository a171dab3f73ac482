"""The results database: one DuckDB file with docs/results.md#database.

:mod:`anachron.tables` declares every table (columns in order, DuckDB types) and is the
one home of the column lists the producers use; :func:`anachron.store.load.write_database` is
the only writer (atomic); :func:`connect_readonly` opens the file for reading.

Tables: ``instances``, ``runs``, ``llm_calls``, ``completions``, ``claims``,
``tool_calls`` (one row per search call of a retrieval method), ``instance_scores``,
``trace_scores`` (TCLR, survivorship, restatement, query intent per instance),
``claim_shapley`` (φ per claim), ``shapley`` (Shapley-DCLR, Top-1/3/5, estimator and model calls
per instance), ``calibration`` (verifier recall / false-positive rate on planted claims per task
and layer set), ``planted_claims`` (the planted claims and their verdicts),
``metrics`` (every aggregate, trace metrics included). View: ``main_table`` (OLR / Perf / Cov / parse
rate side by side per task x method x model x split). The writer also runs the view statements
it is given (``load_results`` passes the report views ``report_{name}`` of
:mod:`anachron.report.registry`); the store itself defines no other view.

Layering (docs/code-map.md#layers): the schema is a building block that the producers,
:mod:`anachron.metrics` included, import their columns from; the store is above
:mod:`anachron.metrics` (the writer computes the ``metrics`` table with its aggregates).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from anachron.tables import MAIN_TABLE_VIEW, SCHEMA, TABLES, Table

if TYPE_CHECKING:
    import duckdb

__all__ = ["MAIN_TABLE_VIEW", "SCHEMA", "TABLES", "Table", "connect_readonly", "database_columns"]


def database_columns(con: duckdb.DuckDBPyConnection) -> dict[str, set[str]]:
    """The tables and views of an open database with their column names: ``{table: {column, ...}}``.

    The one place readers ask what a database has, so a database written by an older anachron (a
    table or column missing) gives a "no data" with the reason rather than a query error.
    """
    out: dict[str, set[str]] = {}
    for table, column in con.execute("SELECT table_name, column_name FROM information_schema.columns").fetchall():
        out.setdefault(table, set()).add(column)
    return out


def connect_readonly(path: str | os.PathLike[str]) -> duckdb.DuckDBPyConnection:
    """Open the results database read-only; raise FileNotFoundError with a hint if missing."""
    import duckdb  # here: importing the package stays cheap, few callers open the database

    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"{p} does not exist; run `snakemake --cores 2` first to build it")
    return duckdb.connect(str(p), read_only=True)
