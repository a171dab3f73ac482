# Claim-level verification, per-instance scores, and the results database
# (load_results is the only writer of results/results.duckdb).


rule verify_claims:
    input:
        unpack(grounding_inputs),
        run="results/runs/{task}/{method}/{model}.parquet",
        instances="results/datasets/{task}.parquet",
    output:
        claims="results/claims/{task}/{method}/{model}.parquet",
    params:
        layers=config["verify"]["layers"],
        leak_on_same_day=config["leak_on_same_day"],
    conda:
        "../environment.yml"
    log:
        "logs/verify_claims/{task}/{method}/{model}.log",
    script:
        "../workflow/scripts/verify_claims.py"


rule score_run:
    input:
        run="results/runs/{task}/{method}/{model}.parquet",
        claims="results/claims/{task}/{method}/{model}.parquet",
        instances="results/datasets/{task}.parquet",
    output:
        scores="results/scores/{task}/{method}/{model}.parquet",
    conda:
        "../environment.yml"
    log:
        "logs/score_run/{task}/{method}/{model}.log",
    script:
        "../workflow/scripts/score_run.py"


rule load_results:
    input:
        instances=expand("results/datasets/{task}.parquet", task=TASKS),
        runs=run_outputs("runs"),
        calls=run_outputs("runs", "calls.parquet"),
        tool_calls=run_outputs("runs", "tool_calls.parquet"),
        meta=run_outputs("runs", "meta.json"),
        claims=run_outputs("claims"),
        scores=run_outputs("scores"),
    output:
        db="results/results.duckdb",
    params:
        bootstrap=config["bootstrap"],
    conda:
        "../environment.yml"
    log:
        "logs/load_results.log",
    script:
        "../workflow/scripts/load_results.py"
