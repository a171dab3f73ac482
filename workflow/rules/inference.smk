# Each method x model over each task's sampled instances. LLM calls are cached
# (content-addressed) under config["cache_dir"], so a forced re-run repeats none.
# A run whose calls failed (below run.max_failed_share) gets a new `retry` param, so the
# next snakemake run re-runs it; endpoint jobs take 1 core and hold their endpoint's slots
# (config key endpoints), so independent remote runs overlap (docs/running.md#endpoints).


rule run_method:
    input:
        unpack(method_inputs),
    output:
        run="results/runs/{task}/{method}/{model}.parquet",
        calls="results/runs/{task}/{method}/{model}.calls.parquet",
        tool_calls="results/runs/{task}/{method}/{model}.tool_calls.parquet",
        meta="results/runs/{task}/{method}/{model}.meta.json",
    params:
        model_config=lambda wildcards: config["models"][wildcards.model],
        method_config=method_params,
        retrieval=config["retrieval"],
        splits=config["run"]["splits"],
        sample=method_sample,
        seed=config["seed"],
        cache_dir=config["cache_dir"],
        retry=method_retry,
    threads: method_threads
    resources:
        **ENDPOINT_RESOURCES,
    conda:
        "../../environment.yml"
    log:
        "logs/run_method/{task}/{method}/{model}.log",
    benchmark:
        "benchmarks/out/run_method/{task}/{method}/{model}.tsv"
    script:
        "../scripts/run_method.py"
