"""The report tables of ``results/tables``: one module per table, and :data:`TABLES`, the one list of them.

Each table is a module ``anachron.report.tables.<name>`` that defines ``TABLE``, a
:class:`~anachron.report.tables.base.ReportTable` named ``<name>``: the file stem of
``results/tables/<name>.md|tex|html`` and of the DuckDB view ``report_<name>``, a title, a note that
defines what its columns mean (docs/metrics.md), the SELECT that computes its numbers, the tables and
columns that SELECT reads, and a formatter that turns the numbers into the cells of a
:class:`~anachron.report.render.TableData`. What the tables share is in
:mod:`~anachron.report.tables.base`; :data:`anachron.report.registry.REPORT_TABLES` loads every module
named in :data:`TABLES`, in its order.

One home per number: the SQL computes every number a table shows (means, shares, counts, the best of
a block, per-instance costs) from the database's tables; Python only formats them. The same SELECT
is the view ``report_{name}`` that ``load_results`` creates in ``results.duckdb``
(:func:`anachron.report.registry.report_view_statements`), so ``anachron query "SELECT * FROM
report_main"`` shows what the table shows. The renderer runs the SELECT itself rather than reading
the view, so a database built before the views existed renders the same; a database without a table
or column the SELECT needs renders "No data" with the reason instead (``ReportTable.build`` never
raises for bad input). Exceptions to "all in SQL": the 95% CIs of the main, control and DCLR tables
are the bootstrap intervals stored in ``metrics`` at load time; the enforcement table's paired
bootstrap CI and sign test are computed in Python from the SQL's per-instance pairs (a resampling has
no SQL form).

Adding a table: a module here that defines ``TABLE``, one line in :data:`TABLES`, and its caption
for ``snakemake --report`` in ``workflow/report/tables/<name>.rst`` (``tests/report/test_tables.py``
fails while a table has no caption or a caption no table).

This ``__init__`` imports nothing: the workflow reads :data:`TABLES` when it parses the Snakefile
(rule ``render_tables``, the report's categories), which every cluster job repeats, so it must not
pull in pandas or duckdb.
"""

from __future__ import annotations

#: Every report table, in report order: name (module ``anachron.report.tables.<name>``, file stem
#: under ``results/tables/``, view ``report_<name>``) -> its category in ``snakemake --report``
#: (by topic; the subcategory is "Tables"). The one list of the tables: rule ``render_tables``,
#: :data:`anachron.report.REPORT_LAYOUT` and :data:`anachron.report.registry.REPORT_TABLES` read it.
TABLES: dict[str, str] = {
    "main": "1 Leakage and performance",
    "control": "1 Leakage and performance",
    "dclr": "2 Decision-critical leakage",
    "coverage": "1 Leakage and performance",
    "olr_bins": "1 Leakage and performance",
    "revised_labels": "1 Leakage and performance",
    "probes": "1 Leakage and performance",
    "cost": "5 Cost",
    "enforcement": "3 Retrieval",
    "calibration": "4 Verifier",
    "training": "6 TEMPO training",
}
#: The names of :data:`TABLES`, in report order.
TABLE_NAMES: tuple[str, ...] = tuple(TABLES)
#: The formats every table is written in: the suffixes of ``results/tables/{name}.{ext}``.
TABLE_FORMATS: tuple[str, ...] = ("md", "tex", "html")
