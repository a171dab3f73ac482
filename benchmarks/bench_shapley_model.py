"""Leverage SHAP against exact enumeration on real model calls (a finished workflow's claims).

Takes instances of one run (``results/runs/{task}/{method}/{model}.parquet`` and its claims)
with at most ``--max-claims`` claims, computes exact Shapley values (2^n coalition calls) and
Leverage SHAP at each ``--budgets`` value, and reports per instance and overall: n, the calls each
estimator used, the mean absolute error of φ against exact (MAE) and MAE / mean|φ|, and the
Shapley-DCLR both give. Every coalition call goes through the workflow's LLM cache, so the
Leverage SHAP coalitions (a subset of the exact ones) cost nothing extra and a rerun is free.

A 135M model writes few claims per answer; ``--pool`` pools the claims every method of the run's
task made for the same instance (deduplicated by text) to reach larger claim sets.

Usage::

    .venv/bin/python benchmarks/bench_shapley_model.py --task stock --method temporal_hint \\
        --model smollm2 --instances 3 --max-claims 8 --budgets 16 32 [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import pandas as pd

from anachron.config import load_config
from anachron.llm.cache import LLMCache
from anachron.llm.client import CallLog, LLMClient
from anachron.llm.types import ModelSpec
from anachron.metrics.shapley import exact_shapley, shapley_dclr, shapley_values
from anachron.attribution.shapley import ModelValue, impute_failed
from anachron.tasks.registry import get_task


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", default="config/config.yaml")
    ap.add_argument("--task", default="stock")
    ap.add_argument("--method", default="temporal_hint")
    ap.add_argument("--model", default="smollm2")
    ap.add_argument("--instances", type=int, default=3, help="instances to attribute (smallest claim sets first)")
    ap.add_argument("--min-claims", type=int, default=5)
    ap.add_argument("--max-claims", type=int, default=8)
    ap.add_argument("--budgets", type=int, nargs="+", default=[16, 32])
    ap.add_argument("--seeds", type=int, default=5, help="Leverage SHAP seeds per budget")
    ap.add_argument("--pool", action="store_true", help="pool the claims of every method for an instance")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()

    cfg = load_config(args.config)
    spec = ModelSpec(name=args.model, **cfg["models"][args.model])
    client = LLMClient(spec, LLMCache(cfg["cache_dir"]), CallLog())
    params = {**spec.params, "max_tokens": cfg["shapley"]["max_tokens"]}
    task = get_task(args.task)
    base = Path("results")
    if args.pool:
        frames = [pd.read_parquet(p) for p in sorted((base / "claims" / args.task).glob(f"*/{args.model}.parquet"))]
        claims = pd.concat(frames, ignore_index=True)
        claims["_key"] = claims["fact"].str.lower().str.split().str.join(" ")
        claims = claims.drop_duplicates(["instance_id", "_key"])
    else:
        claims = pd.read_parquet(base / "claims" / args.task / args.method / f"{args.model}.parquet")
    instances = pd.read_parquet(base / "datasets" / f"{args.task}.parquet").set_index("instance_id", drop=False)
    sizes = claims.groupby("instance_id").size()
    chosen = sizes[(sizes >= args.min_claims) & (sizes <= args.max_claims)].sort_values().index[: args.instances]
    rows = []
    for iid in chosen:
        c = claims[claims["instance_id"] == iid]
        facts, leaked = [str(f) for f in c["fact"]], c["leaked"].to_numpy(dtype=bool)
        n = len(facts)
        t0 = time.time()
        exact_value = ModelValue(task, instances.loc[iid], facts, client, params)
        exact = exact_shapley(n, impute_failed(exact_value))
        t_exact = time.time() - t0
        scale = float(np.mean(np.abs(exact))) or float("nan")
        for budget in args.budgets:
            errs, dclrs, calls = [], [], []
            for seed in range(args.seeds):
                res = shapley_values(n, impute_failed(ModelValue(task, instances.loc[iid], facts, client, params)),
                                     budget=budget, seed=seed)
                errs.append(float(np.mean(np.abs(res.phi - exact))))
                dclrs.append(shapley_dclr(res.phi, leaked))
                calls.append(res.n_calls)
            rows.append({"instance_id": iid, "n": n, "budget": budget, "estimator": res.method,
                         "calls": int(max(calls)), "exact_calls": 2 ** n, "mae": float(np.mean(errs)),
                         "nmae": float(np.mean(errs)) / scale, "dclr_exact": shapley_dclr(exact, leaked),
                         "dclr_est": float(np.nanmean(dclrs)) if not np.all(np.isnan(dclrs)) else float("nan"),
                         "failed_coalitions": exact_value.n_failed, "exact_seconds": round(t_exact, 1)})
    table = pd.DataFrame(rows)
    print(table.to_markdown(index=False) if len(table) else "no instance with a claim count in range")
    if len(table):
        summary = table.groupby("budget").agg(instances=("instance_id", "size"), mean_n=("n", "mean"),
                                              mae=("mae", "mean"), nmae=("nmae", "mean"), max_calls=("calls", "max"))
        print()
        print(summary.to_markdown())
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
