# Each method x model over each task's sampled instances. LLM calls are cached
# (content-addressed) under config["cache_dir"], so a forced re-run repeats none.


rule run_method:
    input:
        instances="results/datasets/{task}.parquet",
        report="results/datasets/report.md",
    output:
        run="results/runs/{task}/{method}/{model}.parquet",
        calls="results/runs/{task}/{method}/{model}.calls.parquet",
        meta="results/runs/{task}/{method}/{model}.meta.json",
    params:
        model_config=lambda wildcards: config["models"][wildcards.model],
        method_config=lambda wildcards: config["methods"].get(wildcards.method, {}),
        splits=config["run"]["splits"],
        sample=lambda wildcards: config["run"]["sample"].get(wildcards.task),
        seed=config["seed"],
        cache_dir=config["cache_dir"],
    threads: 2
    conda:
        "../environment.yml"
    log:
        "logs/run_method/{task}/{method}/{model}.log",
    benchmark:
        "benchmarks/out/run_method/{task}/{method}/{model}.tsv"
    script:
        "../workflow/scripts/run_method.py"
