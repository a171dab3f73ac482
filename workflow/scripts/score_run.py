"""Glue for rule score_run: per-instance OLR, Perf, Cov and parse status."""

import pandas as pd

from anachron.io import write_parquet
from anachron.logs import log_to
from anachron.metrics.core import instance_scores
from anachron.tasks.registry import get_task

sm = snakemake  # noqa: F821 (injected by Snakemake)

with log_to(sm.log[0]) as log:
    task = get_task(sm.wildcards.task)
    instances = pd.read_parquet(sm.input.instances).set_index("instance_id", drop=False)
    scores = instance_scores(
        pd.read_parquet(sm.input.run),
        pd.read_parquet(sm.input.claims),
        lambda iid, prediction: task.perf(instances.loc[iid], prediction),
    )
    write_parquet(scores, sm.output.scores)
    log.info("%d instances scored; mean OLR %.4f, mean Perf %.4f", len(scores), scores["olr"].mean(), scores["perf"].mean())
