# Config validation (schema + defaults + cross-checks), readiness checks that must
# pass before any job starts, wildcard constraints and input functions.

from pathlib import Path

from snakemake.exceptions import WorkflowError

from anachron.config import check_ready, snapshot_dir, validate_config
from anachron.errors import ConfigError
from anachron.sources.registry import SOURCES, TASK_SOURCES, source_params

try:
    validate_config(config, Path(workflow.basedir) / "workflow" / "schemas" / "config.schema.yaml")
    check_ready(config)
except ConfigError as exc:
    raise WorkflowError(f"anachron configuration error:\n{exc}") from None

TASKS = config["run"]["tasks"]
METHODS = config["run"]["methods"]
MODELS = config["run"]["models"]
SNAPSHOT_DIR = str(snapshot_dir(config) or "")
GENERIC_SOURCES = sorted(SOURCES)


wildcard_constraints:
    task="|".join(TASKS),
    method="|".join(METHODS),
    model="[A-Za-z0-9_.-]+",


def run_outputs(kind, suffix="parquet"):
    """Paths of one per-run output kind for every task x method x model."""
    return expand(
        "results/{kind}/{task}/{method}/{model}.{suffix}",
        kind=kind,
        task=TASKS,
        method=METHODS,
        model=MODELS,
        suffix=suffix,
    )


def dataset_inputs(wildcards):
    """Raw inputs that build_dataset needs for a task."""
    if wildcards.task == "stock":
        return {
            "prices": "data/raw/yahoo/prices.parquet",
            "membership": "data/raw/sp500/membership.parquet",
            "sectors": "data/raw/sp500/sectors.parquet",
            "prices_manifest": "data/raw/yahoo/manifest.json",
            "sp500_manifest": "data/raw/sp500/manifest.json",
        }
    inputs = {}
    for source in TASK_SOURCES[wildcards.task]:
        inputs[source] = f"data/raw/{source}/data.parquet"
        inputs[f"{source}_manifest"] = f"data/raw/{source}/manifest.json"
    return inputs


def grounding_inputs(wildcards):
    """Point-in-time data the grounded verifier layer reads for a task."""
    if wildcards.task == "stock":
        return {"prices": "data/raw/yahoo/prices.parquet"}
    return {}
