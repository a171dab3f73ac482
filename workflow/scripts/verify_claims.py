"""Glue for rule verify_claims: a verdict for every claim of a run (docs/verification.md)."""

import pandas as pd

from anachron.io import write_parquet
from anachron.logs import log_to
from anachron.progress import job
from anachron.tasks.registry import get_task
from anachron.verify.layers.corpus import open_corpus_layer
from anachron.verify.pipeline import extract_run_claims, verify_run
from anachron.verify.setup import verifier_client

sm = snakemake  # noqa: F821 (injected by Snakemake)

w = sm.wildcards
with log_to(sm.log[0]) as log, job(f"verify {w.task}/{w.method}/{w.model}") as progress:
    task = get_task(sm.wildcards.task)
    run = pd.read_parquet(sm.input.run)
    instances = pd.read_parquet(sm.input.instances).set_index("instance_id", drop=False)
    contexts = {iid: task.grounding_context(instances.loc[iid]) for iid in run["instance_id"]}
    grounding_files = {k: v for k, v in sm.input.items() if k not in ("run", "instances", "corpus_index")}
    corpus = open_corpus_layer(sm.input.corpus_index, **sm.params.corpus) if "corpus" in sm.params.layers else None
    client, call_log, params = verifier_client(sm.params.verifier, sm.params.cache_dir)
    claims_by_instance = None
    if sm.params.extractor == "llm":
        claims_by_instance = extract_run_claims(run, instances, task, client, params, contexts)
    claims = verify_run(
        run,
        contexts,
        grounding=task.make_grounding(grounding_files),
        layers=tuple(sm.params.layers),
        leak_on_same_day=bool(sm.params.leak_on_same_day),
        task=task,
        claims_by_instance=claims_by_instance,
        llm={"client": client, "params": params, "batch_size": sm.params.batch_size} if client else None,
        corpus=corpus,
        progress=True,
        workers=sm.threads,
    )
    progress.n = len(run)
    write_parquet(claims, sm.output.claims)
    write_parquet(call_log.frame(
        task=sm.wildcards.task, method=sm.wildcards.method, model_key=(sm.params.verifier or {}).get("name", "")
    ), sm.output.calls)
    if corpus is not None:
        log.info("corpus layer: %d searches, %d failed%s", corpus.n_searches, corpus.n_errors,
                 f" (last: {corpus.last_error})" if corpus.n_errors else "")
    log.info(
        "%d claims (%s): %s; layers: %s; categories: %s",
        len(claims),
        claims["source"].value_counts().to_dict() if len(claims) else {},
        claims["verdict"].value_counts().to_dict() if len(claims) else {},
        claims["layer"].value_counts().to_dict() if len(claims) else {},
        claims["category"].value_counts().to_dict() if len(claims) else {},
    )
