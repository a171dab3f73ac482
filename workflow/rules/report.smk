# Tables rendered from the results database: results/tables/{name}.md, .tex and .html for every
# report table of anachron.report.registry (calibration.md: the long calibration report).

from anachron.report.registry import FORMATS, TABLE_NAMES


rule render_tables:
    input:
        db="results/results.duckdb",
    output:
        expand("results/tables/{name}.{ext}", name=TABLE_NAMES, ext=FORMATS),
    conda:
        "../../environment.yml"
    log:
        "logs/render_tables.log",
    script:
        "../scripts/render_tables.py"
