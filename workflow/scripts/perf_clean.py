"""Glue for rule perf_clean: each leaked answer's prediction asked again without its leaked evidence (docs/metrics.md#leakage-adjusted-perf)."""

import pandas as pd

from anachron.attribution.clean import clean_scores
from anachron.io import write_parquet
from anachron.llm.cache import LLMCache
from anachron.llm.client import CallLog, LLMClient
from anachron.llm.types import ModelSpec
from anachron.logs import log_to
from anachron.methods.runner import sample_instances
from anachron.progress import job
from anachron.tasks.registry import get_task

sm = snakemake  # noqa: F821 (injected by Snakemake)

w = sm.wildcards
with log_to(sm.log[0]) as log, job(f"perf_clean {w.task}/{w.method}/{w.model}") as progress:
    cfg = dict(sm.params.perf_clean)
    run = pd.read_parquet(sm.input.run)
    chosen = sample_instances(run, sorted(run["split"].unique()), cfg["sample"], sm.params.seed)
    spec = ModelSpec(name=w.model, **dict(sm.params.model_config))
    call_log = CallLog()
    client = LLMClient(spec, LLMCache(sm.params.cache_dir), call_log)
    scores = clean_scores(chosen, pd.read_parquet(sm.input.claims), pd.read_parquet(sm.input.instances), get_task(w.task),
                          client, params={**spec.params, "max_tokens": cfg["max_tokens"]})
    progress.n = len(scores)
    write_parquet(scores, sm.output.scores)
    calls = call_log.frame(task=w.task, method=w.method, model_key=w.model)
    write_parquet(calls, sm.output.calls)
    log.info("%d answers; status %s; strict %s; model calls %d (cache hits %d)", len(scores),
             scores["status"].value_counts().to_dict(), scores["status_strict"].value_counts().to_dict(), len(calls),
             int(calls["cache_hit"].sum()) if len(calls) else 0)
