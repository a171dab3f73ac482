"""Glue for rule build_dataset: the point-in-time instance table of one task."""

from anachron.io import write_json, write_parquet
from anachron.logs import log_to
from anachron.tasks.build import build_task_dataset

sm = snakemake  # noqa: F821 (injected by Snakemake)

with log_to(sm.log[0]) as log:
    instances, exclusions, manifest, audit = build_task_dataset(
        sm.wildcards.task,
        dict(sm.input.items()),
        dict(sm.params.task_config),
        knowledge_cutoffs=dict(sm.params.knowledge_cutoffs),
        leak_on_same_day=bool(sm.params.leak_on_same_day),
    )
    write_parquet(instances, sm.output.instances)
    write_parquet(exclusions, sm.output.exclusions)
    write_parquet(audit, sm.output.audit)
    write_json(sm.output.manifest, manifest)
    log.info("%s: %s", sm.wildcards.task, manifest["counts"])
