"""The registry of the report tables: :data:`REPORT_TABLES`, the table of every module that
:data:`anachron.report.tables.TABLES` names, and what the workflow does with them: the views of
``load_results`` (:func:`report_view_statements`) and the files of ``render_tables``
(:func:`render_table`).

This module imports every table module (pandas, the store); the workflow's Snakefile reads the
light list :data:`anachron.report.tables.TABLES` instead.
"""

from __future__ import annotations

import importlib
import logging
from typing import TYPE_CHECKING

from anachron.report.render import TableData, render_html, render_latex, render_markdown
from anachron.report.tables import TABLE_FORMATS, TABLE_NAMES
from anachron.report.tables.base import ReportTable

if TYPE_CHECKING:
    import duckdb

__all__ = ["FORMATS", "REPORT_TABLES", "load_table", "render_table", "report_view_statements"]

log = logging.getLogger(__name__)


def load_table(name: str) -> ReportTable:
    """The table that module ``anachron.report.tables.{name}`` defines (its ``TABLE``).

    Raises:
        ModuleNotFoundError: there is no such module.
        RuntimeError: the module's table has a name other than ``name``.
    """
    table: ReportTable = importlib.import_module(f"{__package__}.tables.{name}").TABLE
    if table.name != name:
        raise RuntimeError(f"anachron.report.tables.{name} defines table {table.name!r}, not {name!r}")
    return table


#: Every report table, by name, in the order of the report (:data:`anachron.report.tables.TABLES`).
REPORT_TABLES: dict[str, ReportTable] = {name: load_table(name) for name in TABLE_NAMES}
#: The formats every table is written in (:data:`anachron.report.tables.TABLE_FORMATS`).
FORMATS = TABLE_FORMATS


def report_view_statements() -> list[str]:
    """The ``CREATE VIEW report_{name}`` statements of every table (for
    :func:`anachron.store.load.write_database`'s ``views``)."""
    return [t.create_view_sql() for t in REPORT_TABLES.values()]


def render_table(name: str, con: duckdb.DuckDBPyConnection) -> dict[str, str]:
    """The files of table ``name`` from ``con``: ``{"md": ..., "tex": ..., "html": ...}``.

    A database that lacks what the table needs gives the no-data documents with the reason; so does
    an error while the table is built (logged with its traceback), so one broken table never stops
    the others from rendering.

    Raises:
        KeyError: ``name`` is not in :data:`REPORT_TABLES`.
    """
    table = REPORT_TABLES[name]
    try:
        data = table.build(con)
    except Exception as exc:  # noqa: BLE001 (a report must render; the log keeps the traceback)
        log.exception("table %s could not be built", name)
        data = TableData.no_data(f"the table could not be built ({type(exc).__name__}: {exc}); see the rule's log")
    return {"md": render_markdown(data, table.title, table.note),
            "tex": render_latex(data, table.title, table.note, f"tab:{name}"),
            "html": render_html(data, table.title, table.note)}
