"""Compare two ``results.duckdb`` files table by table.

Used to show that a change of code leaves the results unchanged (build a database from the
commit before the change and one after, on the same config, e.g. ``.test/config/config.yaml``
on the real snapshots, then compare them)::

    python benchmarks/compare_results.py before/results.duckdb after/results.duckdb
    python benchmarks/compare_results.py a.duckdb b.duckdb --tables claims metrics --show 5

For every table the report gives the row counts on both sides, the columns only one side has,
columns whose type changed, and the number of rows of each side that have no identical row on the
other side (multiset difference, so order does not matter and duplicates count). Columns that
legitimately differ between two runs of the same config (timestamps, latencies, the code version,
cache-hit flags: ``--volatile``) are left out of the row comparison. Numbers are compared after
casting both sides to DOUBLE, so a declared type (BIGINT vs DOUBLE) does not count as a value
difference; it is reported as a type change. With ``--digits D`` numbers are compared rounded to D
significant digits (a change that only sums floats in another order moves the last bits, about 1e-16
relative: ``--digits 12`` shows it changes nothing else).

Exit status: 0 when every compared table has the same rows and no column was lost, 1 otherwise.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field

import duckdb

#: Columns that differ between two runs of the same config without any change of results.
VOLATILE = (
    "created_at",
    "started_at",
    "finished_at",
    "timestamp",
    "latency_s",
    "wall_s",
    "elapsed_s",
    "duration_s",
    "code_version",
    "call_id",
    "cache_hit",
    "cache_hits",
    "uncached_calls",
    "n_cache_hits",
    "n_uncached",
    "n_uncached_calls",
    # attempts made by this run: 0 for a call served from the cache, so a cached rerun differs
    "attempts",
    "n_attempts",
)

_NUMERIC = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT", "UINTEGER",
            "UBIGINT", "FLOAT", "DOUBLE", "REAL")


def _is_numeric(sql_type: str) -> bool:
    return sql_type.upper() in _NUMERIC or sql_type.upper().startswith("DECIMAL")


@dataclass
class TableDiff:
    """The comparison of one table: row counts, schema changes and unmatched rows per side."""

    name: str
    rows_a: int | None
    rows_b: int | None
    only_a_columns: list[str] = field(default_factory=list)
    only_b_columns: list[str] = field(default_factory=list)
    type_changes: list[tuple[str, str, str]] = field(default_factory=list)
    unmatched_a: int = 0
    unmatched_b: int = 0
    examples: list[str] = field(default_factory=list)

    @property
    def differs(self) -> bool:
        """True when rows differ, a column was lost, or the table exists on one side only."""
        return (
            self.rows_a is None
            or self.rows_b is None
            or self.unmatched_a > 0
            or self.unmatched_b > 0
            or bool(self.only_a_columns)
        )


def _columns(con: duckdb.DuckDBPyConnection, db: str, table: str) -> dict[str, str]:
    rows = con.execute(
        "SELECT column_name, data_type FROM information_schema.columns "
        "WHERE table_catalog = ? AND table_name = ? ORDER BY ordinal_position",
        [db, table],
    ).fetchall()
    return {name: dtype for name, dtype in rows}


def _tables(con: duckdb.DuckDBPyConnection, db: str) -> set[str]:
    rows = con.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_catalog = ? AND table_type = 'BASE TABLE'",
        [db],
    ).fetchall()
    return {r[0] for r in rows}


def compare_table(
    con: duckdb.DuckDBPyConnection, table: str, *, volatile: tuple[str, ...] = VOLATILE, show: int = 0,
    digits: int | None = None,
) -> TableDiff:
    """Compare ``a.<table>`` with ``b.<table>`` on ``con`` (both databases attached as a and b); numbers
    rounded to ``digits`` significant digits when given."""
    has_a, has_b = table in _tables(con, "a"), table in _tables(con, "b")
    count = lambda db: con.execute(f'SELECT count(*) FROM {db}."{table}"').fetchone()[0]  # noqa: E731
    diff = TableDiff(table, count("a") if has_a else None, count("b") if has_b else None)
    if not (has_a and has_b):
        return diff
    cols_a, cols_b = _columns(con, "a", table), _columns(con, "b", table)
    diff.only_a_columns = [c for c in cols_a if c not in cols_b and c != "_empty"]
    diff.only_b_columns = [c for c in cols_b if c not in cols_a and c != "_empty"]
    common = [c for c in cols_a if c in cols_b and c not in volatile]
    diff.type_changes = [(c, cols_a[c], cols_b[c]) for c in common if cols_a[c] != cols_b[c]]
    if not common:
        return diff

    def projection(cols: dict[str, str]) -> str:
        parts = []
        for c in common:
            both_numeric = _is_numeric(cols_a[c]) and _is_numeric(cols_b[c])
            if both_numeric and digits:
                parts.append(f"format('{{:.{int(digits)}g}}', CAST(\"{c}\" AS DOUBLE)) AS \"{c}\"")
            else:
                parts.append(f'CAST("{c}" AS DOUBLE) AS "{c}"' if both_numeric else f'CAST("{c}" AS VARCHAR) AS "{c}"')
        return ", ".join(parts)

    sel_a = f'SELECT {projection(cols_a)} FROM a."{table}"'
    sel_b = f'SELECT {projection(cols_b)} FROM b."{table}"'
    diff.unmatched_a = con.execute(f"SELECT count(*) FROM ({sel_a} EXCEPT ALL {sel_b})").fetchone()[0]
    diff.unmatched_b = con.execute(f"SELECT count(*) FROM ({sel_b} EXCEPT ALL {sel_a})").fetchone()[0]
    if show and (diff.unmatched_a or diff.unmatched_b):
        for side, q in (("a", f"{sel_a} EXCEPT ALL {sel_b}"), ("b", f"{sel_b} EXCEPT ALL {sel_a}")):
            for row in con.execute(f"SELECT * FROM ({q}) LIMIT {int(show)}").fetchall():
                diff.examples.append(f"only in {side}: " + repr(dict(zip(common, row)))[:600])
    return diff


def compare_databases(
    path_a: str, path_b: str, *, tables: list[str] | None = None, volatile: tuple[str, ...] = VOLATILE, show: int = 0,
    digits: int | None = None,
) -> list[TableDiff]:
    """Compare every table (or ``tables``) of two DuckDB files; returns one :class:`TableDiff` each
    (numbers rounded to ``digits`` significant digits when given)."""
    con = duckdb.connect()
    con.execute(f"ATTACH '{path_a}' AS a (READ_ONLY)")
    con.execute(f"ATTACH '{path_b}' AS b (READ_ONLY)")
    names = tables or sorted(_tables(con, "a") | _tables(con, "b"))
    return [compare_table(con, t, volatile=volatile, show=show, digits=digits) for t in names]


def report(diffs: list[TableDiff]) -> str:
    """A plain-text report: one line per table, then details of the tables that differ."""
    lines = [f"{'table':<16} {'rows a':>8} {'rows b':>8} {'only a':>7} {'only b':>7}  result"]
    for d in diffs:
        rows = lambda n: "-" if n is None else str(n)  # noqa: E731
        verdict = "DIFFERENT" if d.differs else "same"
        lines.append(f"{d.name:<16} {rows(d.rows_a):>8} {rows(d.rows_b):>8} {d.unmatched_a:>7} {d.unmatched_b:>7}  {verdict}")
    for d in diffs:
        notes = []
        if d.only_a_columns:
            notes.append(f"  columns only in a: {d.only_a_columns}")
        if d.only_b_columns:
            notes.append(f"  columns only in b: {d.only_b_columns}")
        if d.type_changes:
            notes.append("  type changes: " + ", ".join(f"{c} {ta} -> {tb}" for c, ta, tb in d.type_changes))
        notes += [f"  {e}" for e in d.examples]
        if notes:
            lines.append(f"{d.name}:")
            lines += notes
    n_diff = sum(d.differs for d in diffs)
    lines.append(f"{len(diffs)} tables compared, {n_diff} with differences")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point; returns the exit status."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("a", help="first results.duckdb (e.g. built before the change)")
    ap.add_argument("b", help="second results.duckdb (e.g. built after the change)")
    ap.add_argument("--tables", nargs="*", help="tables to compare (default: every table on either side)")
    ap.add_argument("--volatile", nargs="*", default=list(VOLATILE), help="columns left out of the row comparison")
    ap.add_argument("--show", type=int, default=3, help="example unmatched rows to print per side and table")
    ap.add_argument("--digits", type=int, default=None,
                    help="compare numbers rounded to this many significant digits (default: exactly)")
    args = ap.parse_args(argv)
    diffs = compare_databases(args.a, args.b, tables=args.tables, volatile=tuple(args.volatile), show=args.show,
                              digits=args.digits)
    print(report(diffs))
    return 1 if any(d.differs for d in diffs) else 0


if __name__ == "__main__":
    sys.exit(main())
