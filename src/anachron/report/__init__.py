"""Rendering of ``results/results.duckdb`` for readers: tables (:mod:`~anachron.report.render`,
:mod:`~anachron.report.calibration`, :mod:`~anachron.report.paired`), figures
(:mod:`~anachron.report.figures`) and the dataset report (:mod:`~anachron.report.datasets`).

This package's ``__init__`` stays free of heavy imports (matplotlib, duckdb): the workflow reads
:data:`FIGURE_NAMES`, :data:`TABLE_NAMES` and :data:`REPORT_LAYOUT` when it parses the Snakefile,
which every cluster job repeats.
"""

from __future__ import annotations

#: The figures of rule ``plot_figures``, by file stem under ``results/figures/`` (each a PNG and a
#: PDF); :data:`anachron.report.figures.FIGURES` maps each to its drawing function.
FIGURE_NAMES: tuple[str, ...] = ("leakage_performance", "olr_distribution", "coverage_distribution", "training", "calibration")
#: The tables of rule ``render_tables``, by file stem under ``results/tables/`` (and view
#: ``report_{name}``), in report order; :data:`anachron.report.registry.REPORT_TABLES` defines each.
TABLE_NAMES: tuple[str, ...] = ("main", "control", "dclr", "coverage", "olr_bins", "cost", "enforcement", "calibration",
                                "training")
#: The formats every table is written in: the suffixes of ``results/tables/{name}.{ext}``.
TABLE_FORMATS: tuple[str, ...] = ("md", "tex", "html")

#: Where each table (its HTML) and figure (its PNG) goes in ``snakemake --report``: the category,
#: by topic; the subcategory is "Tables" or "Figures".
REPORT_LAYOUT: dict[str, str] = {
    "main": "1 Leakage and performance",
    "control": "1 Leakage and performance",
    "olr_bins": "1 Leakage and performance",
    "coverage": "1 Leakage and performance",
    "leakage_performance": "1 Leakage and performance",
    "olr_distribution": "1 Leakage and performance",
    "coverage_distribution": "1 Leakage and performance",
    "dclr": "2 Decision-critical leakage",
    "enforcement": "3 Retrieval",
    "calibration": "4 Verifier",
    "cost": "5 Cost",
    "training": "6 TEMPO training",
}
