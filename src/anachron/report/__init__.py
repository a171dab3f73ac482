"""Rendering of ``results/results.duckdb`` for readers: tables (:mod:`~anachron.report.tables`, one
module each, rendered by :mod:`~anachron.report.render`; :mod:`~anachron.report.calibration`,
:mod:`~anachron.report.paired`), figures (:mod:`~anachron.report.figures`) and the dataset report
(:mod:`~anachron.report.datasets`).

This package's ``__init__`` stays free of heavy imports (matplotlib, duckdb): the workflow reads
:data:`FIGURE_NAMES`, :data:`TABLE_NAMES` and :data:`REPORT_LAYOUT` when it parses the Snakefile,
which every cluster job repeats.
"""

from __future__ import annotations

from anachron.report.tables import TABLE_FORMATS, TABLE_NAMES, TABLES

__all__ = ["FIGURE_NAMES", "REPORT_LAYOUT", "TABLE_FORMATS", "TABLE_NAMES"]

#: The figures of rule ``plot_figures``, by file stem under ``results/figures/`` (each a PNG and a
#: PDF); :data:`anachron.report.figures.FIGURES` maps each to its drawing function.
FIGURE_NAMES: tuple[str, ...] = ("leakage_performance", "olr_distribution", "coverage_distribution", "training", "calibration",
                                  "probes")

#: Where each table (its HTML) and figure (its PNG) goes in ``snakemake --report``: the category,
#: by topic; the subcategory is "Tables" or "Figures". The tables' categories are those of the one
#: list of tables, :data:`anachron.report.tables.TABLES` (which also gives :data:`TABLE_NAMES` and
#: :data:`TABLE_FORMATS`); a figure named as a table (``training``, ``calibration``) shares its category.
REPORT_LAYOUT: dict[str, str] = {
    **TABLES,
    "leakage_performance": "1 Leakage and performance",
    "olr_distribution": "1 Leakage and performance",
    "coverage_distribution": "1 Leakage and performance",
}
