# Tables rendered from the results database: results/tables/{name}.md, .tex and .html for every
# report table of the one list anachron.report.tables.TABLES, one module each under
# src/anachron/report/tables/ (calibration.md: the long calibration report). The HTML tables and the
# figures' PNGs go into `snakemake --report results/report.html`, each with the caption of
# workflow/report/{tables,figures}/{name}.rst (tests/report/test_tables.py ties them to the list), in
# the category of REPORT_LAYOUT.

from anachron.report.tables import TABLE_FORMATS, TABLE_NAMES


rule render_tables:
    input:
        db="results/results.duckdb",
    output:
        [report_file(f"results/tables/{name}.html", name, "tables") for name in TABLE_NAMES],
        [f"results/tables/{name}.{ext}" for name in TABLE_NAMES for ext in TABLE_FORMATS if ext != "html"],
    conda:
        "../../environment.yml"
    log:
        "logs/render_tables.log",
    script:
        "../scripts/render_tables.py"
