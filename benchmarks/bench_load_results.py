"""Peak memory and wall time of ``load_results`` on a paper-sized grid of synthetic run outputs.

Writes, in a temporary work directory, every file rule ``load_results`` reads
(workflow/rules/scoring.smk): the task datasets, and per task x method x model run the
completions, the run's LLM and tool calls, its metadata JSON, the claims with verdicts, the
verifier's calls, the instance scores and (every method but ``rag_unrestricted``, as the default
``shapley.methods``) the Shapley attributions of a sample of instances with their value calls;
plus a calibration table and planted claims. Column widths follow a real default run
(/work/defrun: fact ~85 characters, reason ~60, completion and trace a few KB); every string is
a distinct slice of a random word stream, so neither Parquet nor DuckDB can deduplicate it away.

Then it runs the real rule script ``workflow/scripts/load_results.py`` in a child process (with
the ``snakemake`` object the script expects) and reports the child's peak resident memory
(``ru_maxrss`` from ``wait4``), its wall time, the database size and the rows per table.

    python benchmarks/bench_load_results.py --claims 1000000 --json benchmarks/out/load_results.json

Target: under 2 GB peak RSS on 1,000,000 claims.
"""

from __future__ import annotations

import argparse
import json
import os
import runpy
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd

from anachron.io import write_json, write_parquet
from anachron.tables import (
    CALIBRATION_COLUMNS,
    CALL_LOG_COLUMNS,
    CLAIM_COLUMNS,
    PHI_COLUMNS,
    PLANTED_COLUMNS,
    RUN_COLUMNS,
    SCORE_COLUMNS,
    SHAPLEY_COLUMNS,
    TOOL_CALL_COLUMNS,
)

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "workflow" / "scripts" / "load_results.py"
TASKS = ["stock", "salary", "legal", "forecast"]
METHODS = ["temporal_hint", "rag", "rag_unrestricted", "self_correction", "timespec", "tempo"]
SEARCHING = {"rag", "rag_unrestricted"}
WORDS = (
    "revenue shares closed quarter reported fiscal year earnings guidance court ruled contract signed "
    "market index rose fell percent billion million company announced season player team agreement "
    "filed decision appeal justices opinion forecast question resolved probability interest rate "
    "inflation outlook growth decline analysts expected dividend buyback acquisition merger per share"
).split()


class _Text:
    """Distinct strings of a given mean length: slices of one long random word stream."""

    def __init__(self, rng: np.random.Generator, size: int = 4_000_000):
        self.rng = rng
        words = rng.choice(WORDS, size=size // 7)
        self.stream = " ".join(words)

    def __call__(self, n: int, mean: int) -> list[str]:
        lens = self.rng.integers(max(1, mean // 2), mean * 3 // 2 + 1, size=n)
        offs = self.rng.integers(0, len(self.stream) - lens.max() - 1, size=n)
        s = self.stream
        return [s[o:o + k] for o, k in zip(offs.tolist(), lens.tolist())]


def _dates(rng: np.random.Generator, n: int, start: str = "2018-01-01", days: int = 2500) -> np.ndarray:
    base = np.datetime64(start)
    return (base + rng.integers(0, days, size=n).astype("timedelta64[D]")).astype(str)


def _id_lists(rng: np.random.Generator, n: int, k_max: int) -> list[str]:
    """JSON lists of 0..k_max document ids (~15 characters each), as the tool-call log stores them."""
    ks = rng.integers(0, k_max + 1, size=n).tolist()
    ids = rng.integers(0, 250_000, size=(n, k_max)).tolist()
    return [json.dumps([f"news-{x:06d}" for x in row[:k]]) for row, k in zip(ids, ks)]


def _calls(rng, text, task, method, key, ids, steps, n_per) -> pd.DataFrame:
    """LLM call records: ``n_per`` calls per instance id."""
    n = len(ids) * n_per
    return pd.DataFrame({
        "task": task, "method": method, "model_key": key,
        "call_id": [f"{x:032x}" for x in rng.integers(0, 2**62, size=n).tolist()],
        "cache_key": [f"{x:016x}" * 4 for x in rng.integers(0, 2**62, size=n).tolist()],
        "model_name": key, "model": f"openai/Qwen/{key}", "provider": "openai",
        "sample_index": 0,
        "prompt_tokens": rng.integers(500, 6000, size=n), "completion_tokens": rng.integers(50, 2000, size=n),
        "latency_s": rng.uniform(0.2, 20, size=n), "cache_hit": rng.random(n) < 0.5,
        "error": None, "finish_reason": "stop",
        "started_at": [f"{d}T12:00:00.000000+00:00" for d in _dates(rng, n, "2026-01-01", 30)],
        "instance_id": np.repeat(ids, n_per), "step": np.resize(steps, n),
    }, columns=[*["task", "method", "model_key"], *CALL_LOG_COLUMNS, "instance_id", "step"])


def generate(work: Path, *, claims: int, n_methods: int, n_models: int, per_instance: int,
             shapley_sample: int, shapley_calls: int, seed: int = 0) -> dict[str, list[str]]:
    """Write the synthetic inputs under ``work``; return the rule's named inputs (lists of paths)."""
    rng = np.random.default_rng(seed)
    text = _Text(rng)
    methods = METHODS[:n_methods]
    models = [f"qwen3-{i}b" for i in range(n_models)]
    n_runs = len(TASKS) * len(methods) * len(models)
    n_inst = max(1, claims // (n_runs * per_instance))
    inputs: dict[str, list[str]] = {k: [] for k in (
        "instances", "runs", "calls", "tool_calls", "meta", "claims", "verify_calls", "scores",
        "phi", "shapley", "shapley_calls", "calibration", "planted", "training_log", "clean", "clean_calls", "probes")}
    res = work / "results"
    for task in TASKS:
        ids = np.array([f"{task}-eval-2019-12-01-{i:05d}" for i in range(n_inst)])
        split = np.where(rng.random(n_inst) < 0.9, "eval", "control")
        cutoff = _dates(rng, n_inst, "2019-01-01", 1500)
        inst = pd.DataFrame({"instance_id": ids, "task": task, "split": split, "cutoff_date": cutoff,
                             "inputs": text(n_inst, 1500), "label": text(n_inst, 90), "provenance": text(n_inst, 420)})
        p = res / "datasets" / f"{task}.parquet"
        write_parquet(inst, p)
        inputs["instances"].append(str(p))
        for method in methods:
            for model in models:
                stem = f"{task}/{method}/{model}"
                run = pd.DataFrame({
                    "instance_id": ids, "task": task, "method": method, "model": model, "split": split,
                    "cutoff_date": cutoff, "completion": text(n_inst, 2000), "finish_reason": "stop",
                    "llm_error": None, "parse_status": np.where(rng.random(n_inst) < 0.95, "ok", "not_json"),
                    "parse_error": None, "evidence": text(n_inst, 1000), "n_evidence_dropped": 0,
                    "reasoning": text(n_inst, 600), "prediction": text(n_inst, 12),
                    "n_llm_calls": rng.integers(1, 3, size=n_inst),
                    "trace": text(n_inst, 2000 if method in SEARCHING else 400),
                }, columns=RUN_COLUMNS)
                paths = {k: res / "runs" / f"{stem}.{k}.parquet" for k in ("calls", "tool_calls")}
                write_parquet(run, res / "runs" / f"{stem}.parquet")
                write_parquet(_calls(rng, text, task, method, model, ids, ["answer", "revise"], 2), paths["calls"])
                if method in SEARCHING:
                    n = n_inst * 3
                    tools = pd.DataFrame({
                        "task": task, "method": method, "model": model, "instance_id": np.repeat(ids, 3),
                        "seq": np.tile([0, 1, 2], n_inst), "query": text(n, 35), "mode": "restricted",
                        "cutoff_date": np.repeat(cutoff, 3), "returned": _id_lists(rng, n, 16), "consumed": _id_lists(rng, n, 12),
                        "after_cutoff": np.where(rng.random(n) < 0.2, '["d1"]', "[]"),
                        "invalid_entities": np.where(rng.random(n) < 0.05, '["X"]', "[]"), "restatements": "[]",
                        "query_intent_after_cutoff": rng.random(n) < 0.1, "error": None,
                        "entity_docs": _id_lists(rng, n, 5), "flag_reason": text(n, 125),
                    }, columns=TOOL_CALL_COLUMNS)
                else:
                    tools = pd.DataFrame(columns=TOOL_CALL_COLUMNS)
                write_parquet(tools, paths["tool_calls"])
                meta = res / "runs" / f"{stem}.meta.json"
                write_json(meta, {
                    "code_version": "0.1.0", "config_hash": "0" * 16, "finished_at": "2026-01-01T00:00:00+00:00",
                    "knowledge_cutoff": "2025-03-01", "method": method, "model": model, "model_id": f"openai/{model}",
                    "n_cache_hits": 0, "n_instances": n_inst, "n_llm_calls": 2 * n_inst, "n_tool_calls": len(tools),
                    "n_uncached_calls": 2 * n_inst, "parse_ok": n_inst, "started_at": "2026-01-01T00:00:00+00:00",
                    "task": task})
                n = n_inst * per_instance
                k = np.tile(np.arange(1, per_instance + 1), n_inst)
                evid = k <= per_instance * 3 // 4
                cid = np.char.add(np.char.add(np.repeat(ids, per_instance), np.where(evid, ":", ":r")), k.astype(str))
                verdict = rng.choice(["clean", "leaked", "undated", "ambiguous"], p=[0.7, 0.15, 0.1, 0.05], size=n)
                cl = pd.DataFrame({
                    "task": task, "method": method, "model": model, "instance_id": np.repeat(ids, per_instance),
                    "claim_id": cid, "source": np.where(evid, "evidence", "reasoning"),
                    "evidence_id": pd.array(np.where(evid, k, 0), dtype="Int64"), "fact": text(n, 85),
                    "declared_date_raw": _dates(rng, n), "declared_date": _dates(rng, n), "date_status": "parsed",
                    "date_rule": "iso", "effective_date": _dates(rng, n), "cutoff_date": np.repeat(cutoff, per_instance),
                    "category": rng.choice(["A1", "A2", "A3", "B1", "B2"], size=n), "category_rule": text(n, 12),
                    "extractor": "llm", "leaked": verdict == "leaked", "verdict": verdict,
                    "layer": rng.choice(["grounded", "rules", "declared", "llm"], size=n), "reason": text(n, 60),
                    "cited": rng.random(n) < 0.5, "declared_only": rng.random(n) < 0.2,
                }, columns=CLAIM_COLUMNS)
                cl.loc[~evid, "evidence_id"] = pd.NA
                write_parquet(cl, res / "claims" / f"{stem}.parquet")
                write_parquet(_calls(rng, text, task, method, "verifier", ids, ["extract", "plausibility"], 1),
                              res / "claims" / f"{stem}.calls.parquet")
                n_claims = np.full(n_inst, per_instance * 3 // 4)
                n_leaked = rng.binomial(n_claims, 0.15)
                sc = pd.DataFrame({
                    "task": task, "method": method, "model": model, "split": split, "instance_id": ids,
                    "parse_status": run["parse_status"], "parsed": run["parse_status"] == "ok",
                    "n_claims": n_claims, "n_leaked": n_leaked, "n_undated": rng.binomial(n_claims, 0.1),
                    "n_ambiguous": rng.binomial(n_claims, 0.05), "n_declared_only": rng.binomial(n_claims, 0.2),
                    "n_reasoning_claims": per_instance - n_claims, "n_reasoning_leaked": 0,
                    "olr": n_leaked / n_claims, "olr_strict": n_leaked / n_claims, "perf": rng.random(n_inst),
                    "n_evidence": n_claims, "n_cited": rng.binomial(n_claims, 0.5), "cov": rng.random(n_inst),
                }, columns=SCORE_COLUMNS)
                write_parquet(sc, res / "scores" / f"{stem}.parquet")
                inputs["runs"].append(str(res / "runs" / f"{stem}.parquet"))
                inputs["calls"].append(str(paths["calls"]))
                inputs["tool_calls"].append(str(paths["tool_calls"]))
                inputs["meta"].append(str(meta))
                inputs["claims"].append(str(res / "claims" / f"{stem}.parquet"))
                inputs["verify_calls"].append(str(res / "claims" / f"{stem}.calls.parquet"))
                inputs["scores"].append(str(res / "scores" / f"{stem}.parquet"))
                if method == "rag_unrestricted" or not shapley_sample:
                    continue
                m = min(shapley_sample, n_inst)
                sub = cl[cl["instance_id"].isin(ids[:m])]
                phi = sub.assign(split=np.repeat(split[:m], per_instance), phi=rng.normal(0, 0.1, len(sub)),
                                 abs_rank=np.tile(np.arange(1, per_instance + 1), m))[PHI_COLUMNS]
                sh = pd.DataFrame({
                    "task": task, "method": method, "model": model, "split": split[:m], "instance_id": ids[:m],
                    "n_claims": per_instance, "n_leaked": 1, "estimator": "leverage", "n_calls": shapley_calls,
                    "budget": 64, "n_failed": 0, "v_empty": rng.random(m), "v_all": rng.random(m),
                    "dclr": rng.random(m), "top1": rng.random(m), "top3": rng.random(m), "top5": rng.random(m),
                    "exact_mae": np.nan,
                }, columns=SHAPLEY_COLUMNS)
                for name, frame in (("phi", phi), ("shapley", sh),
                                    ("shapley_calls", _calls(rng, text, task, method, model, ids[:m], ["value"], shapley_calls))):
                    p = res / "shapley" / f"{stem}.{name}.parquet"
                    write_parquet(frame, p)
                    inputs[name].append(str(p))
    cal = pd.DataFrame([{"task": t, "layers": "grounded+rules", "kind": kd, "style": "all", "metric": "recall", "n": 100,
                         "n_flagged": 90, "n_undated": 3, "n_ambiguous": 1, "n_declared_only": 5, "rate": 0.9,
                         "ci_low": 0.83, "ci_high": 0.95} for t in TASKS for kd in ("post_cutoff", "pre_cutoff", "outcome")],
                       columns=CALIBRATION_COLUMNS)
    n = 9600
    planted = pd.DataFrame({"task": rng.choice(TASKS, size=n), "instance_id": text(n, 30), "cutoff_date": _dates(rng, n),
                            "fact": text(n, 70), "declared_date_raw": _dates(rng, n), "kind": "post_cutoff", "style": "date",
                            "truth_leaked": rng.random(n) < 0.5, "truth_date": _dates(rng, n)}, columns=PLANTED_COLUMNS)
    planted = planted.assign(layers="grounded+rules", leaked=planted["truth_leaked"], verdict="leaked", layer="rules",
                             reason=text(n, 60), effective_date=planted["truth_date"], declared_only=False, flagged=True,
                             correct=True)
    for name, frame in (("calibration", cal), ("planted", planted)):
        p = res / "calibration" / f"{name}.parquet"
        write_parquet(frame, p)
        inputs[name].append(str(p))
    return inputs


def _child(spec_path: str) -> None:
    """Run workflow/scripts/load_results.py as Snakemake would, with the inputs of ``spec_path``."""
    spec = json.loads(Path(spec_path).read_text())
    inputs = spec["inputs"]
    for key in ("clean", "clean_calls", "probes"):  # inputs of a spec written before perf_clean and the probes
        inputs.setdefault(key, [])
    sm = SimpleNamespace(
        input=SimpleNamespace(**{k: (v[0] if k in ("calibration", "planted") else v) for k, v in inputs.items()}),
        output=SimpleNamespace(db=spec["db"]),
        log=[spec["log"]],
        params=SimpleNamespace(bootstrap=spec["bootstrap"], prices={}),
    )
    runpy.run_path(str(SCRIPT), init_globals={"snakemake": sm}, run_name="__main__")


def measure(spec_path: Path) -> dict[str, float]:
    """Run the child on ``spec_path``; its wall time (s), peak RSS (MiB) and exit status."""
    cmd = [sys.executable, __file__, "--child", str(spec_path)]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise SystemExit(f"load_results failed (exit {proc.returncode}); see {json.loads(spec_path.read_text())['log']}")
    return {"wall_s": wall, "peak_rss_mib": usage.ru_maxrss / 1024, "user_s": usage.ru_utime, "sys_s": usage.ru_stime}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--claims", type=int, default=1_000_000, help="claims in all (spread evenly over the runs)")
    ap.add_argument("--methods", type=int, default=5, help="methods per task (the first N of %s)" % METHODS)
    ap.add_argument("--models", type=int, default=2)
    ap.add_argument("--claims-per-instance", type=int, default=8, help="3/4 from the evidence, the rest from the reasoning")
    ap.add_argument("--shapley-sample", type=int, default=100, help="attributed instances per run (0: no Shapley tables)")
    ap.add_argument("--shapley-calls", type=int, default=32, help="value calls per attributed instance")
    ap.add_argument("--n-resamples", type=int, default=2000, help="bootstrap resamples of the metric CIs")
    ap.add_argument("--workdir", type=Path, default=None, help="keep the inputs and database here (default: a temp dir, removed)")
    ap.add_argument("--reuse", action="store_true", help="with --workdir: reuse inputs generated there before")
    ap.add_argument("--json", type=Path, default=None, help="also write the report here")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        _child(args.child)
        return
    work = args.workdir or Path(tempfile.mkdtemp(prefix="bench_load_"))
    work.mkdir(parents=True, exist_ok=True)
    spec_path = work / "spec.json"
    try:
        t0 = time.perf_counter()
        if args.reuse and spec_path.exists():
            spec = json.loads(spec_path.read_text())
        else:
            inputs = generate(work, claims=args.claims, n_methods=args.methods, n_models=args.models,
                              per_instance=args.claims_per_instance, shapley_sample=args.shapley_sample,
                              shapley_calls=args.shapley_calls)
            spec = {"inputs": inputs, "db": str(work / "results" / "results.duckdb"), "log": str(work / "load_results.log"),
                    "bootstrap": {"n_resamples": args.n_resamples, "confidence": 0.95, "seed": 0}}
            spec_path.write_text(json.dumps(spec))
        gen_s = time.perf_counter() - t0
        input_bytes = sum(os.path.getsize(p) for paths in spec["inputs"].values() for p in paths)
        print(f"inputs: {input_bytes / 2**20:,.0f} MiB in {sum(map(len, spec['inputs'].values()))} files "
              f"(generated in {gen_s:.0f} s)", flush=True)
        got = measure(spec_path)
        import duckdb

        con = duckdb.connect(spec["db"], read_only=True)
        tables = [r[0] for r in con.execute("SELECT table_name FROM information_schema.tables WHERE table_type = 'BASE TABLE'").fetchall()]
        rows = {t: con.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0] for t in sorted(tables)}
        con.close()
        report = {**got, "db_mib": os.path.getsize(spec["db"]) / 2**20, "input_mib": input_bytes / 2**20,
                  "claims": rows.get("claims", 0), "rows": rows, "cpus": os.cpu_count()}
        print(f"load_results: {report['wall_s']:.1f} s wall ({got['user_s']:.1f} s user, {got['sys_s']:.1f} s sys), "
              f"peak RSS {report['peak_rss_mib']:,.0f} MiB, database {report['db_mib']:,.0f} MiB")
        print("rows: " + ", ".join(f"{t} {n:,}" for t, n in rows.items()))
        verdict = "under" if report["peak_rss_mib"] < 2048 else "OVER"
        print(f"{verdict} the 2 GiB target on {report['claims']:,} claims")
        if args.json:
            args.json.parent.mkdir(parents=True, exist_ok=True)
            args.json.write_text(json.dumps(report, indent=2) + "\n")
    finally:
        if args.workdir is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
