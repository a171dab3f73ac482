# Claim-level verification, per-instance scores, and the results database
# (load_results is the only writer of results/results.duckdb).


rule verify_claims:
    input:
        unpack(verifier_inputs),
        run="results/runs/{task}/{method}/{model}.parquet",
        instances=run_instances,
    output:
        claims="results/claims/{task}/{method}/{model}.parquet",
        calls="results/claims/{task}/{method}/{model}.calls.parquet",
    threads: config["verify"]["threads"]
    params:
        layers=config["verify"]["layers"],
        corpus=config["verify"]["corpus"],
        extractor=config["verify"]["extractor"],
        verifier=resolved_model(config["verify"]["model"]),
        batch_size=config["verify"]["batch_size"],
        leak_on_same_day=config["leak_on_same_day"],
        cache_dir=config["cache_dir"],
    conda:
        "../../environment.yml"
    log:
        "logs/verify_claims/{task}/{method}/{model}.log",
    script:
        "../scripts/verify_claims.py"


rule score_run:
    input:
        run="results/runs/{task}/{method}/{model}.parquet",
        claims="results/claims/{task}/{method}/{model}.parquet",
        instances=run_instances,
    output:
        scores="results/scores/{task}/{method}/{model}.parquet",
    conda:
        "../../environment.yml"
    log:
        "logs/score_run/{task}/{method}/{model}.log",
    script:
        "../scripts/score_run.py"


rule shapley:
    input:
        run="results/runs/{task}/{method}/{model}.parquet",
        claims="results/claims/{task}/{method}/{model}.parquet",
        instances="results/datasets/{task}.parquet",
    output:
        phi="results/shapley/{task}/{method}/{model}.parquet",
        instances="results/shapley/{task}/{method}/{model}.instances.parquet",
        calls="results/shapley/{task}/{method}/{model}.calls.parquet",
    params:
        model_config=lambda wildcards: config["models"][wildcards.model],
        shapley=config["shapley"],
        seed=config["seed"],
        cache_dir=config["cache_dir"],
    threads: 2
    conda:
        "../../environment.yml"
    log:
        "logs/shapley/{task}/{method}/{model}.log",
    benchmark:
        "benchmarks/out/shapley/{task}/{method}/{model}.tsv"
    script:
        "../scripts/shapley.py"


# Leakage-adjusted Perf (config key perf_clean; docs/metrics.md#leakage-adjusted-perf): every parsed
# answer with a leaked evidence claim asked again in the closed world without it (cached calls).
rule perf_clean:
    input:
        run="results/runs/{task}/{method}/{model}.parquet",
        claims="results/claims/{task}/{method}/{model}.parquet",
        instances="results/datasets/{task}.parquet",
    output:
        scores="results/clean/{task}/{method}/{model}.parquet",
        calls="results/clean/{task}/{method}/{model}.calls.parquet",
    params:
        model_config=lambda wildcards: config["models"][wildcards.model],
        perf_clean=config["perf_clean"],
        seed=config["seed"],
        cache_dir=config["cache_dir"],
    threads: 2
    conda:
        "../../environment.yml"
    log:
        "logs/perf_clean/{task}/{method}/{model}.log",
    benchmark:
        "benchmarks/out/perf_clean/{task}/{method}/{model}.tsv"
    script:
        "../scripts/perf_clean.py"


# A probe run (<method>@<probe>, config key probes; docs/metrics.md#probes) paired instance by instance
# with its method's run: Perf and OLR of both, prediction changes, re-identification.
rule score_probe:
    input:
        unpack(probe_inputs),
    output:
        pairs="results/probes/{task}/{method}/{model}.parquet",
    params:
        splits=config["run"]["splits"],
        sample=method_sample,
        seed=config["seed"],
    conda:
        "../../environment.yml"
    log:
        "logs/score_probe/{task}/{method}/{model}.log",
    script:
        "../scripts/score_probe.py"


rule load_results:
    input:
        instances=expand("results/datasets/{task}.parquet", task=TASKS),
        runs=run_outputs("runs"),
        calls=run_outputs("runs", "calls.parquet"),
        tool_calls=run_outputs("runs", "tool_calls.parquet"),
        meta=run_outputs("runs", "meta.json"),
        claims=run_outputs("claims"),
        verify_calls=run_outputs("claims", "calls.parquet"),
        scores=run_outputs("scores"),
        phi=[f"results/shapley/{t}/{m}/{mo}.parquet" for t, m, mo in SHAPLEY_RUNS],
        shapley=[f"results/shapley/{t}/{m}/{mo}.instances.parquet" for t, m, mo in SHAPLEY_RUNS],
        shapley_calls=[f"results/shapley/{t}/{m}/{mo}.calls.parquet" for t, m, mo in SHAPLEY_RUNS],
        calibration="results/calibration/calibration.parquet",
        planted="results/calibration/planted.parquet",
        training_log=[f"results/training/{mo}/{t}/log.parquet" for t, mo in TRAINING_RUNS],
        clean=run_outputs("clean", runs=CLEAN_RUNS),
        clean_calls=run_outputs("clean", "calls.parquet", runs=CLEAN_RUNS),
        probes=run_outputs("probes", runs=PROBE_RUNS),
    output:
        db="results/results.duckdb",
    params:
        bootstrap=config["bootstrap"],
        # each call's cost_usd (a changed price re-runs only this rule)
        prices=model_prices(config),
    conda:
        "../../environment.yml"
    log:
        "logs/load_results.log",
    script:
        "../scripts/load_results.py"
