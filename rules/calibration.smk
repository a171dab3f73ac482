# Calibration of the verifier (DESIGN §5): claims with known dates planted into real
# completions' wording, verified by each configured layer set; recall on planted leaks and
# the false-positive rate on planted clean claims, per task (loaded into results.duckdb and
# rendered as results/tables/calibration.md with the control-split OLR floor).


def calibration_inputs(wildcards):
    """Datasets of every task, the point-in-time data the grounded layer reads, and the
    Temporal Hint runs whose evidence wording the planted claims imitate."""
    inputs = {f"dataset_{t}": f"results/datasets/{t}.parquet" for t in TASKS}
    inputs["prices"] = "data/raw/yahoo/prices.parquet"
    inputs["sp500_changes"] = "data/raw/sp500/changes.parquet"
    inputs["sp500_sectors"] = "data/raw/sp500/sectors.parquet"
    if EDGAR:
        inputs["edgar"] = "data/raw/edgar/data.parquet"
    for t, m, mo in RUNS:
        if m == "temporal_hint":
            inputs[f"run_{t}_{mo}"] = f"results/runs/{t}/{m}/{mo}.parquet"
    return inputs


rule calibrate_verifier:
    input:
        unpack(calibration_inputs),
    output:
        table="results/calibration/calibration.parquet",
        planted="results/calibration/planted.parquet",
    params:
        calibration=config["calibration"],
        tasks=TASKS,
        leak_on_same_day=config["leak_on_same_day"],
        verifier=resolved_model(config["verify"]["model"]),
        batch_size=config["verify"]["batch_size"],
        cache_dir=config["cache_dir"],
    conda:
        "../environment.yml"
    log:
        "logs/calibrate_verifier.log",
    script:
        "../workflow/scripts/calibrate_verifier.py"
