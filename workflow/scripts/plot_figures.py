"""Glue for rule plot_figures: every figure of anachron.report.figures from results.duckdb, as PNG and PDF."""

from collections import defaultdict
from pathlib import Path

from anachron.logs import log_to
from anachron.report.figures import FIGURES, no_data_reasons, save_figure
from anachron.store import connect_readonly

sm = snakemake  # noqa: F821 (injected by Snakemake)

with log_to(sm.log[0]) as log:
    paths = defaultdict(list)  # figure name -> its output files (results/figures/{name}.{png,pdf})
    for p in sm.output:
        paths[Path(p).stem].append(p)
    con = connect_readonly(sm.input.db)
    try:
        for name, files in paths.items():
            fig = FIGURES[name](con)
            save_figure(fig, files)
            log.info("drew %s -> %s%s", name, ", ".join(files), "".join(f" ({r})" for r in no_data_reasons(fig)))
    finally:
        con.close()
