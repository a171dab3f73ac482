# Raw data (live fetch or snapshot import, each with a manifest) and the
# point-in-time instance tables built from it.


rule fetch_sp500:
    output:
        membership="data/raw/sp500/membership.parquet",
        changes="data/raw/sp500/changes.parquet",
        sectors="data/raw/sp500/sectors.parquet",
        manifest="data/raw/sp500/manifest.json",
    params:
        snapshot_dir=SNAPSHOT_DIR,
        windows=config["tasks"]["stock"]["windows"],
    conda:
        "../../environment.yml"
    log:
        "logs/fetch_sp500.log",
    script:
        "../scripts/fetch_sp500.py"


rule fetch_yahoo:
    input:
        membership="data/raw/sp500/membership.parquet",
    output:
        prices="data/raw/yahoo/prices.parquet",
        manifest="data/raw/yahoo/manifest.json",
    params:
        snapshot_dir=SNAPSHOT_DIR,
        windows=config["tasks"]["stock"]["windows"],
    conda:
        "../../environment.yml"
    log:
        "logs/fetch_yahoo.log",
    benchmark:
        "benchmarks/out/fetch_yahoo.tsv"
    script:
        "../scripts/fetch_yahoo.py"


rule fetch_source:
    output:
        table="data/raw/{source}/data.parquet",
        manifest="data/raw/{source}/manifest.json",
    wildcard_constraints:
        source="|".join(GENERIC_SOURCES),
    params:
        snapshot_dir=SNAPSHOT_DIR,
        source_config=lambda wildcards: source_params(config, wildcards.source),
    conda:
        "../../environment.yml"
    log:
        "logs/fetch_source/{source}.log",
    benchmark:
        "benchmarks/out/fetch_source/{source}.tsv"
    script:
        "../scripts/fetch_source.py"


rule build_dataset:
    input:
        unpack(dataset_inputs),
    output:
        instances="results/datasets/{task}.parquet",
        exclusions="results/datasets/{task}.exclusions.parquet",
        manifest="results/datasets/{task}.manifest.json",
        audit="results/datasets/{task}.audit.parquet",
    params:
        task_config=lambda wildcards: config["tasks"][wildcards.task],
        knowledge_cutoffs={name: config["models"][name]["knowledge_cutoff"] for name in MODELS},
        leak_on_same_day=config["leak_on_same_day"],
    conda:
        "../../environment.yml"
    log:
        "logs/build_dataset/{task}.log",
    script:
        "../scripts/build_dataset.py"


rule verify_dataset:
    input:
        datasets=expand("results/datasets/{task}.parquet", task=TASKS),
        manifests=expand("results/datasets/{task}.manifest.json", task=TASKS),
        audits=expand("results/datasets/{task}.audit.parquet", task=TASKS),
    output:
        report="results/datasets/report.md",
    params:
        models={name: config["models"][name] for name in MODELS},
        splits=config["run"]["splits"],
    conda:
        "../../environment.yml"
    log:
        "logs/verify_dataset.log",
    script:
        "../scripts/verify_dataset.py"


# The counterfactual probes' instances (config key probes; docs/metrics.md#probes): each instance
# entity-neutered by its task or with its cutoff moved shift_days earlier, and one record per
# instance (ok, or skipped with the reason).
rule probe_dataset:
    input:
        instances="results/datasets/{task}.parquet",
    output:
        instances="results/datasets/probes/{task}.{probe}.parquet",
        records="results/datasets/probes/{task}.{probe}.records.parquet",
    params:
        shift_days=config["probes"]["shift_days"],
    conda:
        "../../environment.yml"
    log:
        "logs/probe_dataset/{task}.{probe}.log",
    script:
        "../scripts/build_probe_dataset.py"
