"""Glue for rule calibrate_verifier: plant claims with known dates, verify them per layer set."""

from functools import partial

import pandas as pd

from anachron.io import write_parquet
from anachron.logs import log_to
from anachron.progress import job
from anachron.verify.calibration.evaluate import grounding_contexts, summarize_calibration, verify_planted
from anachron.verify.calibration.plant import plant_claims
from anachron.verify.layers.corpus import open_corpus_layer
from anachron.tables import PLANTED_COLUMNS
from anachron.tasks.registry import get_task
from anachron.verify.pipeline import verify_table
from anachron.verify.setup import verifier_client

sm = snakemake  # noqa: F821 (injected by Snakemake)

with log_to(sm.log[0]) as log, job("calibrate_verifier", unit="claim") as progress:
    cfg = dict(sm.params.calibration)
    files = {k: v for k, v in sm.input.items() if not k.startswith(("dataset_", "run_")) and k != "corpus_index"}
    corpus = open_corpus_layer(sm.input.corpus_index, **sm.params.corpus) if "corpus_index" in sm.input.keys() else None
    data = {k: pd.read_parquet(v) for k, v in files.items()}
    planted, groundings, contexts = [], {}, {}
    # real news leaks may go without a readable date only when every calibrated layer set reads the corpus
    corpus_dated = all("corpus" in layers for layers in cfg["layer_sets"])
    for name in sm.params.uncalibrated:
        log.info("%s: left out of calibration (the task has no planter: Task.planter returns None)", name)
    for name in sm.params.tasks:
        task = get_task(name)
        instances = pd.read_parquet(sm.input[f"dataset_{name}"])
        runs = [sm.input[k] for k in sm.input.keys() if k.startswith(f"run_{name}_")]
        completions = pd.concat([pd.read_parquet(p) for p in runs], ignore_index=True) if runs else None
        planted.append(plant_claims(task, instances, data, n_per_kind=cfg["n_per_kind"], seed=cfg["seed"],
                                    completions=completions, n_real_per_kind=cfg.get("n_real_per_kind"),
                                    corpus_dated=corpus_dated))
        groundings[name] = task.make_grounding(files)
        contexts.update(grounding_contexts(task, instances))
        log.info("%s: %d planted claims", name, len(planted[-1]))
    planted = pd.concat(planted, ignore_index=True) if planted else pd.DataFrame(columns=PLANTED_COLUMNS)
    client, _, params = verifier_client(sm.params.verifier, sm.params.cache_dir)
    llm = {"client": client, "params": params, "batch_size": sm.params.batch_size} if client else None
    verify_fn = partial(verify_table, contexts=contexts, groundings=groundings, llm=llm, corpus=corpus,
                        leak_on_same_day=bool(sm.params.leak_on_same_day), progress=True)
    verified = verify_planted(planted, lambda df, layers: verify_fn(df, layers=layers), cfg["layer_sets"])
    progress.n = len(verified)
    table = summarize_calibration(verified)
    write_parquet(verified, sm.output.planted)
    write_parquet(table, sm.output.table)
    overall = table[(table["style"] == "all")]
    for r in overall.itertuples(index=False):
        log.info("%s %s %s: %s = %.3f (n=%d)", r.task, r.layers, r.kind, r.metric, r.rate, r.n)
