"""Glue for rule shapley: claim Shapley values, Shapley-DCLR and Top-K for one run (docs/metrics.md#shapley-dclr)."""

import pandas as pd

from anachron.io import write_parquet
from anachron.llm.cache import LLMCache
from anachron.llm.client import CallLog, LLMClient
from anachron.llm.types import ModelSpec
from anachron.logs import log_to
from anachron.methods.runner import sample_instances
from anachron.progress import job
from anachron.attribution.shapley import shapley_for_run
from anachron.tasks.registry import get_task

sm = snakemake  # noqa: F821 (injected by Snakemake)

w = sm.wildcards
with log_to(sm.log[0]) as log, job(f"shapley {w.task}/{w.method}/{w.model}") as progress:
    cfg = dict(sm.params.shapley)
    task = get_task(sm.wildcards.task)
    run = pd.read_parquet(sm.input.run)
    chosen = sample_instances(run, sorted(run["split"].unique()), cfg["sample"], sm.params.seed)
    spec = ModelSpec(name=sm.wildcards.model, **dict(sm.params.model_config))
    call_log = CallLog()
    client = LLMClient(spec, LLMCache(sm.params.cache_dir), call_log)
    params = {**spec.params, "max_tokens": cfg["max_tokens"]}
    phi, per_instance = shapley_for_run(
        chosen,
        pd.read_parquet(sm.input.claims),
        pd.read_parquet(sm.input.instances),
        task,
        client,
        params=params,
        budget=cfg["budget"],
        seed=sm.params.seed,
        exact_max=cfg["exact_max"],
        agreement_max_claims=cfg["agreement_max_claims"],
    )
    progress.n = len(chosen)
    write_parquet(phi, sm.output.phi)
    write_parquet(per_instance, sm.output.instances)
    calls = call_log.frame(task=sm.wildcards.task, method=sm.wildcards.method, model_key=sm.wildcards.model)
    write_parquet(calls, sm.output.calls)
    log.info(
        "%d instances attributed (%d claims); model calls %d (cache hits %d); max calls per instance %s (budget %d)",
        len(per_instance), len(phi), len(calls), int(calls["cache_hit"].sum()) if len(calls) else 0,
        int(per_instance["n_calls"].max()) if len(per_instance) else 0, cfg["budget"],
    )
