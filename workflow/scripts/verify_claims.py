"""Glue for rule verify_claims: a verdict for every evidence claim of a run."""

import pandas as pd

from anachron.io import write_parquet
from anachron.logs import log_to
from anachron.tasks.registry import get_task
from anachron.verify import make_grounding
from anachron.verify.pipeline import verify_run

sm = snakemake  # noqa: F821 (injected by Snakemake)

with log_to(sm.log[0]) as log:
    task = get_task(sm.wildcards.task)
    run = pd.read_parquet(sm.input.run)
    instances = pd.read_parquet(sm.input.instances).set_index("instance_id", drop=False)
    contexts = {iid: task.grounding_context(instances.loc[iid]) for iid in run["instance_id"]}
    grounding_files = {k: v for k, v in sm.input.items() if k not in ("run", "instances")}
    claims = verify_run(
        run,
        contexts,
        grounding=make_grounding(sm.wildcards.task, grounding_files),
        layers=tuple(sm.params.layers),
        leak_on_same_day=bool(sm.params.leak_on_same_day),
    )
    write_parquet(claims, sm.output.claims)
    log.info(
        "%d claims: %s; layers: %s",
        len(claims),
        claims["verdict"].value_counts().to_dict(),
        claims["layer"].value_counts().to_dict(),
    )
