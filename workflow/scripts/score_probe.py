"""Glue for rule score_probe: a probe run paired instance by instance with its method's run (docs/metrics.md#probes)."""

import pandas as pd

from anachron.io import write_parquet
from anachron.logs import log_to
from anachron.methods.runner import sample_instances
from anachron.metrics.probes import pair_probe
from anachron.plan import split_variant

sm = snakemake  # noqa: F821 (injected by Snakemake)

with log_to(sm.log[0]) as log:
    method, probe = split_variant(sm.wildcards.method)
    sampled = sample_instances(pd.read_parquet(sm.input.instances), list(sm.params.splits), sm.params.sample, sm.params.seed)
    pairs = pair_probe(
        sampled, pd.read_parquet(sm.input.records),
        pd.read_parquet(sm.input.base_run), pd.read_parquet(sm.input.base_scores),
        pd.read_parquet(sm.input.probe_run), pd.read_parquet(sm.input.probe_scores),
        task=sm.wildcards.task, method=method, model=sm.wildcards.model, probe=probe,
    )
    write_parquet(pairs, sm.output.pairs)
    log.info("%s: %d sampled instances; status %s; skipped by reason %s", sm.wildcards.method, len(pairs),
             pairs["status"].value_counts().to_dict(), pairs["reason"].value_counts().to_dict())
