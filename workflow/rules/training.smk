# TEMPO training (docs/methods.md#tempo): base weights, GRPO + LoRA per (model, task) and the adapter
# in GGUF for the llama.cpp provider (the training figure is drawn from results.duckdb by rule
# plot_figures, rules/figures.smk). Reached only through method tempo (run.methods) or the `tempo`
# target; needs the train extra (pip install -e '.[train]').


rule prepare_base_model:
    # transformers weights of a local/ GGUF model (dequantized once, safetensors)
    output:
        base=directory("data/models/{model}/base"),
    params:
        model_config=lambda wildcards: config["models"][wildcards.model],
    conda:
        "../../environment.yml"
    log:
        "logs/prepare_base_model/{model}.log",
    script:
        "../scripts/prepare_base_model.py"


rule fetch_lora_converter:
    # llama.cpp's convert_lora_to_gguf.py, from the llama-cpp-python sdist that matches the installed version
    output:
        converter=directory("data/tools/llama.cpp"),
    conda:
        "../../environment.yml"
    log:
        "logs/fetch_lora_converter.log",
    script:
        "../scripts/fetch_lora_converter.py"


rule grammar_vocab:
    # a vocabulary-only GGUF of an hf_path model, for the output grammar of its rollouts (docs/methods.md#tempo-grammar)
    input:
        converter="data/tools/llama.cpp",
    output:
        vocab="data/models/{model}/vocab.gguf",
    params:
        model_dir=lambda wildcards: config["models"][wildcards.model]["hf_path"],
    conda:
        "../../environment.yml"
    log:
        "logs/grammar_vocab/{model}.log",
    script:
        "../scripts/grammar_vocab.py"


rule train_tempo:
    input:
        unpack(training_inputs),
        instances="results/datasets/{task}.parquet",
        report="results/datasets/report.md",
    output:
        adapter=directory("results/training/{model}/{task}/adapter"),
        log="results/training/{model}/{task}/log.parquet",
        summary="results/training/{model}/{task}/summary.json",
    params:
        training=config["training"],
        model_config=lambda wildcards: config["models"][wildcards.model],
        layers=[x for x in config["verify"]["layers"] if x != "llm"],
        corpus=config["verify"]["corpus"],
        leak_on_same_day=config["leak_on_same_day"],
        method_settings=config["methods"].get("tempo") or {},
    # every core of the run; a callable, read when the job runs, so `snakemake --report` needs no --cores
    threads: lambda wildcards: workflow.cores
    conda:
        "../../environment.yml"
    log:
        "logs/train_tempo/{model}/{task}.log",
    benchmark:
        "benchmarks/out/train_tempo/{model}/{task}.tsv"
    script:
        "../scripts/train_tempo.py"


rule adapter_gguf:
    # the adapter for llama.cpp (models.<m>.lora_path at inference)
    input:
        adapter="results/training/{model}/{task}/adapter",
        base="data/models/{model}/base",
        converter="data/tools/llama.cpp",
    output:
        gguf="results/training/{model}/{task}/adapter.gguf",
    conda:
        "../../environment.yml"
    log:
        "logs/adapter_gguf/{model}/{task}.log",
    script:
        "../scripts/adapter_gguf.py"


rule tempo:
    # `snakemake tempo --configfile config/tempo-cpu.yaml`: train, then evaluate tempo beside the other methods
    input:
        "results/figures/training.png",
        "results/tables/main.md",
        "results/results.duckdb",
