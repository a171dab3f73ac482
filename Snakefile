# anachron: temporal leakage in LLM backtests, reproducibly.
#   snakemake --cores 2                 run the default config (config/config.yaml)
#   snakemake -n                        show what would run
#   snakemake --configfile config/paper.yaml --cores 8   the papers' grid
# See README.md and DESIGN.md; every config key is documented in
# workflow/schemas/config.schema.yaml.

from snakemake.utils import min_version

min_version("9.0")


configfile: "config/config.yaml"


include: "rules/common.smk"
include: "rules/datasets.smk"
include: "rules/retrieval.smk"
include: "rules/inference.smk"
include: "rules/scoring.smk"
include: "rules/calibration.smk"
include: "rules/report.smk"


rule all:
    input:
        "results/datasets/report.md",
        "results/results.duckdb",
        "results/tables/main.md",
        "results/tables/main.tex",
        "results/tables/enforcement.md",
        "results/tables/dclr.md",
        "results/tables/calibration.md",
        # point-in-time company facts for verification and restatements (DESIGN §5, §6)
        ["data/raw/edgar/data.parquet"] if EDGAR else [],
    default_target: True
