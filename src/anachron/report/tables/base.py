"""What the report tables share: :class:`ReportTable` (one table: its SQL, the tables and columns
that SQL reads, its title, note and formatter), the cell helpers the formatters have in common, and
:func:`instance_shares`, the builder of the tables of instance shares (``coverage``, ``olr_bins``).

One home per number: the SQL of a table computes every number it shows from the database's tables;
Python only formats them (docs/results.md#report-views). :meth:`ReportTable.build` never raises for
a database that lacks a table, a column or rows: it returns :meth:`TableData.no_data` with the
reason instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Mapping, Sequence

import pandas as pd

from anachron.frames import is_na
from anachron.report.render import TableData, as_count
from anachron.store import database_columns

if TYPE_CHECKING:
    import duckdb

#: What to do about a database that lacks a table or column the SQL needs.
REBUILD_HINT = "re-run load_results (`snakemake --cores 2 --forcerun load_results`)"


@dataclass(frozen=True)
class ReportTable:
    """One report table.

    Attributes:
        name: file stem and view suffix (``report_{name}``).
        title: heading / caption start.
        note: what the columns mean, in words (Markdown code spans allowed).
        sql: the SELECT of the view: every number the table shows, one row per table row.
        requires: table -> columns the SELECT reads (checked before it runs, for the no-data reason).
        empty: the reason shown when the SELECT returns no row.
        format: (numbers, connection) -> the cells; the connection is for what SQL cannot compute.
    """

    name: str
    title: str
    note: str
    sql: str
    requires: Mapping[str, tuple[str, ...]]
    empty: str
    format: Callable[[pd.DataFrame, duckdb.DuckDBPyConnection], TableData]

    @property
    def view(self) -> str:
        """The view's name, ``report_{name}``."""
        return f"report_{self.name}"

    def create_view_sql(self) -> str:
        """``CREATE OR REPLACE VIEW report_{name} AS <sql>``."""
        return f"CREATE OR REPLACE VIEW {self.view} AS {self.sql}"

    def missing_input(self, con: duckdb.DuckDBPyConnection) -> str | None:
        """Why the SELECT cannot run on ``con`` (a table or column it reads is absent), or None."""
        have = database_columns(con)
        for table, columns in self.requires.items():
            if table not in have:
                return f"the database has no table `{table}` (built by an older anachron?); {REBUILD_HINT}"
            absent = [c for c in columns if c not in have[table]]
            if absent:
                return (f"table `{table}` has no column {', '.join(f'`{c}`' for c in absent)} "
                        f"(built by an older anachron?); {REBUILD_HINT}")
        return None

    def numbers(self, con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
        """The rows of the SELECT on ``con`` (what the view ``report_{name}`` holds).

        Raises:
            LookupError: a table or column the SELECT needs is absent (the message says which).
            duckdb.Error: the SELECT fails otherwise.
        """
        why = self.missing_input(con)
        if why:
            raise LookupError(why)
        return con.execute(self.sql).df()

    def build(self, con: duckdb.DuckDBPyConnection) -> TableData:
        """The table's cells, or :meth:`TableData.no_data` with the reason; never raises for a
        database that lacks tables, columns or rows."""
        import duckdb

        try:
            rows = self.numbers(con)
        except LookupError as exc:
            return TableData.no_data(str(exc))
        except duckdb.Error as exc:
            return TableData.no_data(f"the query failed on this database ({type(exc).__name__}: "
                                     f"{str(exc).splitlines()[0]}); {REBUILD_HINT}")
        if not len(rows):
            return TableData.no_data(self.empty)
        return self.format(rows, con)


def block_starts(df: pd.DataFrame, keys: list[str]) -> tuple[int, ...]:
    """Row positions where the value of ``keys`` changes (a new block starts)."""
    if not len(df):
        return ()
    k = [tuple(map(str, row)) for row in df[keys].itertuples(index=False)]
    return tuple(i for i in range(1, len(k)) if k[i] != k[i - 1])


def pct(v: object, digits: int = 1) -> str:
    """A fraction as a percentage with ``digits`` decimals (``0.25`` -> ``"25.0"``); "–" when missing."""
    return "–" if is_na(v) else f"{100 * float(v):.{digits}f}"


def share_count(share: object, n: object) -> str:
    """``"25.0 (1)"``: a share as a percentage and its count."""
    return "–" if is_na(share) else f"{pct(share)} ({as_count(n)})"


def label(v: object) -> str:
    """A value as text; "–" when missing."""
    return "–" if is_na(v) else str(v)


#: One bin of an instance-share table: (name of its view columns n_<name> / share_<name>, SQL
#: condition on the instance's value, column header).
Bin = tuple[str, str, str]


def instance_shares(name: str, title: str, note: str, column: str, bins: Sequence[Bin], empty: str,
                     mean_header: str | None = None) -> ReportTable:
    """A table of instance shares from ``instance_scores``: per task x method x model x split, ``n``
    the instances whose ``column`` is not NULL, ``mean_{column}`` (shown when ``mean_header`` is
    given), and per bin the count ``n_<name>`` and the share ``share_<name>`` of those n."""
    mean = f", avg({column}) AS mean_{column}" if mean_header else ""
    counts = "".join(f",\n         count(*) FILTER (WHERE {cond}) AS n_{b}" for b, cond, _ in bins)
    shares = "".join(f",\n       n_{b}, n_{b} / n AS share_{b}" for b, _, _ in bins)
    sql = f"""
SELECT task, method, model, split, n{f", mean_{column}" if mean_header else ""}{shares}
FROM (
  SELECT task, method, model, split, count({column}) AS n{mean}{counts}
  FROM instance_scores WHERE {column} IS NOT NULL
  GROUP BY task, method, model, split
)
ORDER BY task, method, model, split
"""

    def fmt(rows: pd.DataFrame, con: duckdb.DuckDBPyConnection) -> TableData:
        out = []
        for r in rows.to_dict("records"):
            row = {"Task": r["task"], "Method": r["method"], "Model": r["model"], "Split": r["split"], "n": as_count(r["n"])}
            if mean_header:
                row[mean_header] = pct(r[f"mean_{column}"])
            row.update({header: share_count(r[f"share_{b}"], r[f"n_{b}"]) for b, _, header in bins})
            out.append(row)
        return TableData(frame=pd.DataFrame(out), n_keys=4, blocks=block_starts(rows, ["task"]))

    return ReportTable(name=name, title=title, note=note, sql=sql, empty=empty, format=fmt,
                       requires={"instance_scores": ("task", "method", "model", "split", column)})
