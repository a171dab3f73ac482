# Figures rendered from the results database (anachron.report.figures; docs/results.md). One job
# draws all of them: each is a function of results.duckdb, and a missing or empty table gives a
# figure that says "no data" with the reason, so the report always builds.

from anachron.report import FIGURE_NAMES


rule plot_figures:
    input:
        db="results/results.duckdb",
    output:
        # the PNGs go into `snakemake --report` (report_file: workflow/rules/report.smk)
        [report_file(f"results/figures/{name}.png", name, "figures") for name in FIGURE_NAMES],
        [f"results/figures/{name}.pdf" for name in FIGURE_NAMES],
    conda:
        "../../environment.yml"
    log:
        "logs/plot_figures.log",
    script:
        "../scripts/plot_figures.py"
