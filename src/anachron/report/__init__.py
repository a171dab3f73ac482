"""Rendering of ``results/results.duckdb`` for readers: tables (:mod:`~anachron.report.tables`,
:mod:`~anachron.report.calibration`, :mod:`~anachron.report.paired`), figures
(:mod:`~anachron.report.figures`) and the dataset report (:mod:`~anachron.report.datasets`).

This package's ``__init__`` stays free of heavy imports (matplotlib, duckdb): the workflow reads
:data:`FIGURE_NAMES` when it parses the Snakefile, which every cluster job repeats.
"""

from __future__ import annotations

#: The figures of rule ``plot_figures``, by file stem under ``results/figures/`` (each a PNG and a
#: PDF); :data:`anachron.report.figures.FIGURES` maps each to its drawing function.
FIGURE_NAMES: tuple[str, ...] = ("leakage_performance", "olr_distribution", "coverage_distribution", "training", "calibration")
