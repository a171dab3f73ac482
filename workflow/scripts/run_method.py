"""Glue for rule run_method: one method x model over one task's sampled instances."""

import pandas as pd

from anachron.io import write_json, write_parquet
from anachron.logs import log_to
from anachron.methods.runner import RETRY_STATE_KEYS, retry_state_path, run_method
from anachron.progress import job

sm = snakemake  # noqa: F821 (injected by Snakemake)

w = sm.wildcards
with log_to(sm.log[0]) as log, job(f"{w.task}/{w.method}/{w.model}") as progress:
    retrieval = None
    if "index" in sm.input.keys():
        retrieval = {"index": sm.input.index, "entities": sm.input.entities, **dict(sm.params.retrieval)}
    run, calls, tool_calls, meta = run_method(
        pd.read_parquet(sm.input.instances),
        task_name=sm.wildcards.task,
        method_name=sm.wildcards.method,
        model_name=sm.wildcards.model,
        model_config=dict(sm.params.model_config),
        method_config=dict(sm.params.method_config),
        cache_dir=sm.params.cache_dir,
        splits=list(sm.params.splits),
        sample=sm.params.sample,
        seed=sm.params.seed,
        retrieval=retrieval,
        adapter=sm.input.adapter if "adapter" in sm.input.keys() else None,
        max_failed_share=sm.config["run"]["max_failed_share"],
        retry_token=sm.params.retry,
        endpoints=dict(sm.config.get("endpoints") or {}),
        probe_instances=pd.read_parquet(sm.input.probe) if "probe" in sm.input.keys() else None,
    )
    progress.n = len(run)
    write_parquet(run, sm.output.run)
    write_parquet(calls, sm.output.calls)
    write_parquet(tool_calls, sm.output.tool_calls)
    write_json(sm.output.meta, meta)
    # the retry state that the `retry` param reads next time (not an output: it survives a re-run)
    write_json(retry_state_path(sm.output.meta), {k: meta[k] for k in RETRY_STATE_KEYS})
    log.info("wrote %s (%d rows)", sm.output.run, len(run))
