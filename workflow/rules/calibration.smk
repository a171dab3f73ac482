# Calibration of the verifier (docs/verification.md#calibration): claims with known dates planted into real
# completions' wording, verified by each configured layer set; recall on planted leaks and
# the false-positive rate on planted clean claims, per task (loaded into results.duckdb and
# rendered as results/tables/calibration.md with the control-split OLR floor).


rule calibrate_verifier:
    input:
        unpack(calibration_inputs),
    output:
        table="results/calibration/calibration.parquet",
        planted="results/calibration/planted.parquet",
    params:
        calibration=config["calibration"],
        tasks=CALIBRATED_TASKS,
        uncalibrated=[t for t in TASKS if t not in CALIBRATED_TASKS],
        corpus=config["verify"]["corpus"],
        leak_on_same_day=config["leak_on_same_day"],
        verifier=resolved_model(config["verify"]["model"]),
        batch_size=config["verify"]["batch_size"],
        cache_dir=config["cache_dir"],
    conda:
        "../../environment.yml"
    log:
        "logs/calibrate_verifier.log",
    script:
        "../scripts/calibrate_verifier.py"
