"""Glue for rule verify_dataset: integrity checks; fails the workflow on a violation."""

import json
from pathlib import Path

import pandas as pd

from anachron.io import write_text
from anachron.logs import log_to
from anachron.report.datasets import dataset_report
from anachron.tasks.checks import check_instances

sm = snakemake  # noqa: F821 (injected by Snakemake)

with log_to(sm.log[0]) as log:
    frames = {Path(p).stem: pd.read_parquet(p) for p in sm.input.datasets}
    manifests = {Path(p).name.split(".")[0]: json.loads(Path(p).read_text()) for p in sm.input.manifests}
    cutoffs = {name: m["knowledge_cutoff"] for name, m in sm.params.models.items()}
    problems = [p for task, df in frames.items() for p in check_instances(task, df, cutoffs)]
    audits = {Path(p).name.split(".")[0]: pd.read_parquet(p) for p in sm.input.audits}
    report = dataset_report(frames, problems, manifests, audits)
    log.info("\n%s", report)
    if problems:
        raise SystemExit("dataset verification failed:\n" + "\n".join(problems))
    write_text(sm.output.report, report)
