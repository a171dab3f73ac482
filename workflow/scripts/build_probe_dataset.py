"""Glue for rule probe_dataset: a task's instances neutered or date-shifted, with a record per instance (docs/metrics.md#probes)."""

import pandas as pd

from anachron.io import write_parquet
from anachron.logs import log_to
from anachron.tasks.probes import build_probe_dataset
from anachron.tasks.registry import get_task

sm = snakemake  # noqa: F821 (injected by Snakemake)

with log_to(sm.log[0]) as log:
    instances, records = build_probe_dataset(
        get_task(sm.wildcards.task), pd.read_parquet(sm.input.instances), sm.wildcards.probe,
        shift_days=int(sm.params.shift_days),
    )
    write_parquet(instances, sm.output.instances)
    write_parquet(records, sm.output.records)
    log.info("%s %s: %d of %d instances built; skipped by reason: %s", sm.wildcards.task, sm.wildcards.probe,
             len(instances), len(records), records["reason"].value_counts().to_dict())
