"""Glue for rule train_tempo: GRPO + LoRA with the two-mode reward for one (model, task)."""

from pathlib import Path

import pandas as pd

from anachron.io import write_parquet
from anachron.logs import log_to
from anachron.progress import job
from anachron.tasks.registry import get_task
from anachron.training.extra import require_training_extra
from anachron.training.scoring import score_completions
from anachron.training.trainer import settings_for, train_tempo, write_summary
from anachron.verify.layers.corpus import open_corpus_layer

sm = snakemake  # noqa: F821 (injected by Snakemake)

w = sm.wildcards
with log_to(sm.log[0]) as log, job(f"train_tempo {w.task}/{w.model}", unit="step", calls=False) as progress:
    require_training_extra()
    import torch

    block = dict(sm.params.training)
    torch.set_num_threads(int(block.get("threads") or sm.threads))
    task = get_task(sm.wildcards.task)
    instances = pd.read_parquet(sm.input.instances).set_index("instance_id", drop=False)
    grounding_files = {k: v for k, v in sm.input.items() if k not in ("instances", "report", "base", "corpus_index", "grammar_vocab")}
    grounding = task.make_grounding(grounding_files)
    layers = tuple(sm.params.layers)
    corpus = open_corpus_layer(sm.input.corpus_index, **sm.params.corpus) if "corpus" in layers else None

    def score_fn(ids, texts, finish):
        return score_completions(task, instances, ids, texts, finish, grounding=grounding, layers=layers, corpus=corpus,
                                 leak_on_same_day=bool(sm.params.leak_on_same_day))

    base = sm.input.base if "base" in sm.input.keys() else str(Path(sm.params.model_config["hf_path"]).expanduser())
    out_dir = Path(sm.output.adapter).parent
    result = train_tempo(task=task, instances=instances.reset_index(drop=True), base_dir=base, out_dir=out_dir,
                         settings=settings_for(block, sm.params.model_config, sm.params.method_settings,
                                               grammar_vocab=dict(sm.input.items()).get("grammar_vocab")),
                         score_fn=score_fn, model_name=sm.wildcards.model)
    progress.n = int(result.summary["steps"])
    write_parquet(result.log, sm.output.log)
    write_summary(sm.output.summary, result.summary)
    log.info("trained %s/%s in %.0fs: validation OLR %s -> %s (best step %s)", sm.wildcards.model, sm.wildcards.task,
             result.summary["wall_s"], result.summary["base_val"]["val_olr"], result.summary["final_val"]["val_olr"],
             result.summary["best_step"])
