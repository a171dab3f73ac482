"""A short TEMPO run on one GPU: validation OLR before and after, and the two-phase curriculum.

Trains a LoRA adapter on a 0.5B-1.5B instruct model (any local transformers directory, e.g.
Qwen2.5-0.5B-Instruct or SmolLM2-1.7B-Instruct) with the project's trainer and reward
(:func:`anachron.training.trainer.train_tempo`, :func:`anachron.training.scoring.score_completions`)
on one task's train split, in bfloat16, generating rollouts with vLLM when it is installed
(``--vllm auto``), under the evaluation's output grammar as the CPU run (``--grammar on``: vLLM's
structured outputs with the same GBNF, otherwise the llama.cpp grammar in transformers generation;
docs/methods.md#tempo-grammar). Prints, and writes as JSON, the greedy validation OLR / strict OLR / Perf / Cov /
parse rate of the base model (step 0) and after training, and the fraction of groups in
performance mode at every step (TEMPO paper, Table 3)::

    python benchmarks/tempo_gpu.py --base-dir /models/Qwen2.5-0.5B-Instruct --workdir . --task salary \
        --steps 60 --out benchmarks/out/tempo_gpu

``--workdir`` is where the workflow built the datasets, the corpus index and raw data
(``results/datasets/{task}.parquet``, ``results/corpus/bm25`` and the task's grounding files under
``data/raw``); the reward's verifier has the default ``verify.layers``; ``benchmarks/tempo_gpu.sh`` builds them from a
snapshot first. Defaults follow the paper (G = 12 at temperature 0.6, 8 prompts per step, LoRA r = 32,
lr 2e-5, beta_KL 0.05, clip [0.9, 2.0]) except the number of steps.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import logging
import sys
import time
from pathlib import Path

import pandas as pd


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base-dir", required=True, help="local transformers model directory (no hub download)")
    ap.add_argument("--workdir", default=".", help="directory with results/datasets and data/raw (default: .)")
    ap.add_argument("--task", default="salary", choices=["stock", "salary", "legal"])
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--prompts-per-step", type=int, default=8)
    ap.add_argument("--num-generations", type=int, default=12)
    ap.add_argument("--max-completion-length", type=int, default=768)
    ap.add_argument("--validation-instances", type=int, default=32)
    ap.add_argument("--validation-points", type=int, default=6)
    ap.add_argument("--vllm", choices=["auto", "on", "off"], default="auto")
    ap.add_argument("--grammar", choices=["on", "off"], default="on",
                    help="rollouts and validation under the evaluation's output grammar (docs/methods.md#tempo-grammar; default on)")
    ap.add_argument("--grammar-vocab", default=None,
                    help="GGUF holding the model's vocabulary for the grammar (default: the GGUF --base-dir was exported from, "
                         "else a vocabulary-only GGUF converted with llama.cpp's convert_hf_to_gguf.py into --out)")
    ap.add_argument("--repetition-penalty", type=float, default=1.1,
                    help="llama.cpp's repetition penalty in rollouts and validation under the grammar, as evaluation (default 1.1)")
    ap.add_argument("--out", default="benchmarks/out/tempo_gpu", help="output directory (adapters, log.parquet, report.json)")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")

    import torch

    from anachron.config import validate_config
    from anachron.tasks.registry import get_task
    from anachron.training.scoring import score_completions
    from anachron.training.export import llama_cpp_converter, vocab_gguf
    from anachron.training.trainer import TrainSettings, train_tempo, write_summary
    from anachron.training.weights import MANIFEST_NAME
    from anachron.verify.layers.corpus import open_corpus_layer

    if not torch.cuda.is_available():
        print("no CUDA device: this benchmark is for a GPU (config/tempo-cpu.yaml is the CPU run)", file=sys.stderr)
        return 2
    work = Path(args.workdir)
    task = get_task(args.task)
    instances = pd.read_parquet(work / f"results/datasets/{args.task}.parquet")
    files = {k: str(work / v) for k, v in task.grounding_inputs(edgar=(work / "data/raw/edgar/data.parquet").exists()).items()}
    grounding = task.make_grounding({k: v for k, v in files.items() if Path(v).exists()})
    indexed = instances.set_index("instance_id", drop=False)

    # the verifier evaluation uses: the default verify.layers (the corpus layer over the workdir's index)
    verify = validate_config({})["verify"]
    layers = tuple(x for x in verify["layers"] if x != "llm")
    corpus = open_corpus_layer(work / "results/corpus/bm25", **verify["corpus"]) if "corpus" in layers else None

    def score_fn(ids, texts, finish):
        return score_completions(task, indexed, ids, texts, finish, grounding=grounding, layers=layers, corpus=corpus)

    use_vllm = args.vllm == "on" or (args.vllm == "auto" and importlib.util.find_spec("vllm") is not None)
    grammar_vocab = args.grammar_vocab
    if args.grammar == "on" and grammar_vocab is None and not (Path(args.base_dir) / MANIFEST_NAME).is_file():
        converter = llama_cpp_converter(Path(args.out) / "llama.cpp")
        grammar_vocab = str(vocab_gguf(Path(args.base_dir), Path(args.out) / "vocab.gguf", converter_dir=converter))
    settings = TrainSettings(
        grammar=args.grammar == "on", grammar_vocab=grammar_vocab,
        repetition_penalty=args.repetition_penalty if args.grammar == "on" else 1.0,
        steps=args.steps, prompts_per_step=args.prompts_per_step, num_generations=args.num_generations,
        max_completion_length=args.max_completion_length, validation_instances=args.validation_instances,
        validation_points=args.validation_points, validation_batch_size=16, device="cuda", bf16=True,
        use_vllm=use_vllm, gradient_checkpointing=True,
    )
    t0 = time.perf_counter()
    out = Path(args.out)
    result = train_tempo(task=task, instances=instances, base_dir=args.base_dir, out_dir=out, settings=settings,
                         score_fn=score_fn, model_name=Path(args.base_dir).name)
    result.log.to_parquet(out / "log.parquet")
    log = result.log
    per_step = log.loc[log["step"] > 0, ["step", "perf_mode_fraction", "mean_leak", "mean_reward", "parse_fail_rate"]]
    val = log.loc[log["val_n"].notna(), ["step", "val_olr", "val_olr_strict", "val_perf", "val_cov", "val_parse_rate"]]
    report = {
        "model": Path(args.base_dir).name, "task": args.task, "steps": args.steps, "vllm": use_vllm, "grammar": args.grammar,
        "gpu": torch.cuda.get_device_name(0), "wall_s": round(time.perf_counter() - t0, 1),
        "peak_gpu_memory_gib": round(torch.cuda.max_memory_allocated() / 2**30, 2),
        "validation": val.to_dict(orient="records"), "per_step": per_step.to_dict(orient="records"),
        "best_step": result.summary["best_step"],
    }
    write_summary(out / "report.json", report)
    print(val.to_string(index=False))
    print(per_step.to_string(index=False))
    print(json.dumps({k: report[k] for k in ("model", "task", "steps", "vllm", "grammar", "gpu", "wall_s", "peak_gpu_memory_gib", "best_step")}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
