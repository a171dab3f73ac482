"""Where the fixed time of a fully cached ``run_method`` job goes.

A run against a real endpoint spends most of its time waiting for answers; what is left is
a fixed cost per ``run_method`` job (4-7 s when measured before the lazy imports), paid again by every job and, on
a cluster, by every job's own Snakemake process. This benchmark times a job whose every model
call is already cached (the mock provider, ``.test/config/mock.yaml``), two ways:

1. **Snakemake**: ``snakemake --forcerun`` of one ``run_method`` output in a scratch copy of a
   workdir (``--workdir``: where the default datasets and corpus are built), after one
   untimed run that fills the cache. Reports the whole command's wall time and the job's own
   (the rule's ``benchmark:`` file); the difference is Snakemake's start-up and DAG, paid once
   per invocation locally and once per job on a cluster.
2. **Breakdown**: the rule script's body in a fresh interpreter, step by step: interpreter
   start, the imports (Snakemake's script module, pandas, the runner), reading the instances,
   and inside :func:`anachron.methods.runner.run_method` the task and method look-up (their
   modules' imports), the cache and client, the retrieval index (RAG methods), the method
   itself (cache hits only), the code version, and writing the four outputs.

    python benchmarks/bench_job_overhead.py --workdir /work/default --task stock --methods temporal_hint rag
    python benchmarks/bench_job_overhead.py --workdir . --json benchmarks/out/job_overhead.json
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))
MODEL = "dry"  # the mock model of .test/config/mock.yaml
#: Methods with a supervisor model: timed through Snakemake only (the breakdown runs no supervisor).
SUPERVISED = ("self_correction", "timespec")


def scratch_workdir(source: Path, dest: Path) -> None:
    """Copy what run_method reads (datasets, corpus, the raw data they were built from) with their
    modification times, so Snakemake (``--rerun-triggers mtime``) rebuilds none of it."""
    for part in ("data/raw", "results/datasets", "results/corpus"):
        if (source / part).exists():
            shutil.copytree(source / part, dest / part, copy_function=shutil.copy2, dirs_exist_ok=True)


def snakemake_cmd(work: Path, *args: str) -> list[str]:
    return [SNAKEMAKE, "--snakefile", str(ROOT / "workflow" / "Snakefile"), "--directory", str(work),
            "--configfile", str(ROOT / "config" / "config.yaml"), str(ROOT / ".test" / "config" / "mock.yaml"),
            "--config", f"cache_dir={work / 'cache'}", "--cores", "2", "--rerun-triggers", "mtime", *args]


def time_snakemake(work: Path, task: str, method: str, repeats: int) -> dict[str, float]:
    """Median wall time of ``snakemake --forcerun`` of one cached run_method job, and of the job itself."""
    target = f"results/runs/{task}/{method}/{MODEL}.parquet"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    first = subprocess.run(snakemake_cmd(work, "--", target), capture_output=True, text=True, env=env)
    if first.returncode:
        raise SystemExit(f"snakemake failed:\n{first.stderr[-3000:]}")
    total, job = [], []
    for _ in range(repeats):
        t0 = time.perf_counter()
        r = subprocess.run(snakemake_cmd(work, "--forcerun", target, "--", target), capture_output=True, text=True, env=env)
        total.append(time.perf_counter() - t0)
        if r.returncode:
            raise SystemExit(f"snakemake failed:\n{r.stderr[-3000:]}")
        bench = (work / "benchmarks" / "out" / "run_method" / task / method / f"{MODEL}.tsv").read_text().splitlines()
        job.append(float(bench[-1].split("\t")[0]))
    return {"snakemake_s": statistics.median(total), "job_s": statistics.median(job),
            "snakemake_overhead_s": statistics.median(total) - statistics.median(job)}


def time_batch(work: Path, task: str, methods: list[str]) -> dict[str, float]:
    """One ``snakemake --forcerun`` of every method's cached job, one job at a time (``--cores 1``):
    the whole command's wall time and the sum of the jobs' own."""
    targets = [f"results/runs/{task}/{m}/{MODEL}.parquet" for m in methods]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    cmd = snakemake_cmd(work, "--forcerun", *targets, "--", *targets)
    cmd[cmd.index("--cores") + 1] = "1"
    t0 = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    total = time.perf_counter() - t0
    if r.returncode:
        raise SystemExit(f"snakemake failed:\n{r.stderr[-3000:]}")
    jobs = sum(float((work / "benchmarks" / "out" / "run_method" / task / m / f"{MODEL}.tsv").read_text().splitlines()[-1].split("\t")[0])
               for m in methods)
    return {"snakemake_s": total, "jobs_s": jobs, "n_jobs": len(methods)}


def _child(spec: dict[str, Any]) -> None:
    """The rule script's work, timed step by step; prints the steps as JSON (stdout's last line)."""
    steps: list[tuple[str, float]] = []
    mark = [time.perf_counter()]

    def step(name: str) -> None:
        now = time.perf_counter()
        steps.append((name, now - mark[0]))
        mark[0] = now

    import snakemake.script  # noqa: F401  (unpickling the rule's `snakemake` object imports it)
    step("import snakemake.script")
    import pandas as pd
    step("import pandas")
    from anachron.io import write_json, write_parquet
    from anachron.logs import log_to
    import anachron.methods.runner as runner
    step("import anachron.methods.runner (+io, logs)")

    def timed(name: str, fn: Any) -> Any:
        def wrapper(*a: Any, **k: Any) -> Any:
            step("(runner) setup")
            out = fn(*a, **k)
            step(name)
            return out
        return wrapper

    runner.get_task = timed("get_task (task module import)", runner.get_task)
    get_method = runner.get_method

    def get_method_timed(name: str) -> Any:
        step("(runner) setup")
        fn = get_method(name)
        step("get_method (method module import)")
        return timed("the method (every call a cache hit)", fn)

    runner.get_method = get_method_timed
    runner.LLMCache = timed("LLMCache open", runner.LLMCache)
    runner.LLMClient = timed("LLMClient", runner.LLMClient)
    runner.code_version = timed("code_version (git)", runner.code_version)
    import anachron.retrieval.backends as backends

    backends.open_search = timed("open_search (BM25 index, entities)", backends.open_search)
    out = Path(spec["out"])
    with log_to(str(out / "job.log")):
        instances = pd.read_parquet(spec["instances"])
        step("read instances")
        retrieval = {"index": spec["index"], "entities": spec["entities"]} if spec["index"] else None
        run, calls, tool_calls, meta = runner.run_method(instances, retrieval=retrieval, **spec["kwargs"])
        step("(runner) frames and metadata")
        write_parquet(run, out / "run.parquet")
        write_parquet(calls, out / "calls.parquet")
        write_parquet(tool_calls, out / "tool_calls.parquet")
        write_json(out / "meta.json", meta)
        step("write outputs")
    merged: dict[str, float] = {}
    for name, s in steps:
        merged[name] = merged.get(name, 0.0) + s
    print(json.dumps({"steps": merged, "n_calls": len(calls), "n_hits": int(calls["cache_hit"].sum()) if len(calls) else 0}))


def breakdown(work: Path, task: str, method: str) -> dict[str, Any]:
    """The child's steps (s), plus interpreter start-up and the whole process's wall time."""
    import yaml

    config = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    mock = yaml.safe_load((ROOT / ".test" / "config" / "mock.yaml").read_text())
    searching = method in ("rag", "rag_unrestricted", "timespec")
    if method in SUPERVISED:
        raise SystemExit(f"{method}: the breakdown does not resolve a supervisor model; time it with Snakemake only")
    # as workflow/rules/common.smk's method_params and method_sample
    block = dict((config.get("methods") or {}).get(method) or {})
    method_config = {k: v for k, v in block.items() if k not in ("sample", "tasks")}
    caps = [c for c in ((config["run"].get("sample") or {}).get(task), block.get("sample")) if c is not None]
    spec = {
        "out": str(work / "breakdown"), "instances": str(work / "results" / "datasets" / f"{task}.parquet"),
        "index": str(work / "results" / "corpus" / "bm25") if searching else None,
        "entities": str(work / "results" / "corpus" / "entities.parquet") if searching else None,
        "kwargs": {"task_name": task, "method_name": method, "model_name": MODEL,
                   "model_config": mock["models"][MODEL], "method_config": method_config,
                   "cache_dir": str(work / "cache"), "splits": list(config["run"]["splits"]),
                   "sample": min(caps) if caps else None, "seed": config["seed"]},
    }
    Path(spec["out"]).mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True, env=env)
    start_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, __file__, "--child", json.dumps(spec)], capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t0
    if r.returncode:
        raise SystemExit(f"breakdown failed:\n{r.stderr[-3000:]}")
    got = json.loads(r.stdout.strip().splitlines()[-1])
    return {"interpreter_s": start_s, "process_s": wall, **got}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workdir", type=Path, default=Path("."), help="where the default datasets and corpus are built")
    ap.add_argument("--task", default="stock")
    ap.add_argument("--methods", nargs="+", default=["temporal_hint", "rag", "rag_unrestricted", "self_correction", "timespec"],
                    help="methods to time (the breakdown skips the supervised ones)")
    ap.add_argument("--repeats", type=int, default=3, help="timed snakemake runs per method (median)")
    ap.add_argument("--no-snakemake", action="store_true", help="only the in-process breakdown")
    ap.add_argument("--json", type=Path, default=None, help="also write the report here")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        _child(json.loads(args.child))
        return
    if not (args.workdir / "results" / "datasets" / f"{args.task}.parquet").exists():
        raise SystemExit(f"{args.workdir}/results/datasets/{args.task}.parquet is missing: build the default datasets first")
    report: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="bench_job_") as tmp:
        work = Path(tmp)
        scratch_workdir(args.workdir, work)
        for method in args.methods:
            r: dict[str, Any] = {}
            if not args.no_snakemake:
                r.update(time_snakemake(work, args.task, method, args.repeats))
            if method not in SUPERVISED:
                r.update(breakdown(work, args.task, method))
            report[method] = r
            print(f"\n{args.task}/{method}/{MODEL}" + (f" (cached: {r['n_hits']}/{r['n_calls']} calls)" if "steps" in r else ""))
            if "snakemake_s" in r:
                print(f"  snakemake --forcerun, whole command {r['snakemake_s']:6.2f} s = job {r['job_s']:.2f} s "
                      f"+ Snakemake start-up and DAG {r['snakemake_overhead_s']:.2f} s")
            if "steps" in r:
                print(f"  rule script in a fresh interpreter   {r['process_s']:6.2f} s:")
                print(f"    {'interpreter start':<45} {r['interpreter_s']:6.3f} s")
                for name, s in r["steps"].items():
                    print(f"    {name:<45} {s:6.3f} s")
        batch = None
        if not args.no_snakemake and len(args.methods) > 1:
            batch = time_batch(work, args.task, args.methods)
            start = statistics.median(r["snakemake_overhead_s"] for r in report.values())
            batch["per_job_scheduling_s"] = (batch["snakemake_s"] - batch["jobs_s"] - start) / batch["n_jobs"]
            print(f"\nall {batch['n_jobs']} jobs in one snakemake --cores 1: {batch['snakemake_s']:.2f} s = jobs "
                  f"{batch['jobs_s']:.2f} s + start-up {start:.2f} s + scheduling {batch['per_job_scheduling_s']:.2f} s per job")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"task": args.task, "methods": report, "batch": batch}, indent=2) + "\n")


if __name__ == "__main__":
    main()
