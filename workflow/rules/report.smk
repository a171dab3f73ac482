# Tables rendered from the results database.


rule render_tables:
    input:
        db="results/results.duckdb",
    output:
        md="results/tables/main.md",
        tex="results/tables/main.tex",
        enforcement="results/tables/enforcement.md",
        dclr="results/tables/dclr.md",
        calibration="results/tables/calibration.md",
    conda:
        "../../environment.yml"
    log:
        "logs/render_tables.log",
    script:
        "../scripts/render_tables.py"
