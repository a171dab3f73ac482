"""Whole-workflow throughput against an OpenAI-compatible endpoint, and the same workload through inspect_ai.

What it measures: temporal_hint over every eval and control instance of the four tasks,
run as a user runs it (``snakemake --cores C`` on the run outputs) against the loopback test server
(:class:`anachron.llm.testserver.TestServer`) answering after a fixed latency, with one endpoint
limit of ``--concurrency`` calls in flight shared by all ``run_method`` jobs. Reported:

- ``wall_s``: the whole ``snakemake`` command, start to exit (DAG, job start-up, calls, outputs);
- ``ideal_s``: calls x latency / concurrency, the time the calls alone need at that limit;
- ``ratio``: wall / ideal (the target is <= 1.2);
- with ``--faults``: a second run against a server injecting faults (20 % 429/500, 5 % hangs,
  5 % malformed bodies, 5 % truncated answers, 5 % connection resets); whether every instance
  completed with the same result as the fault-free run, and the extra requests it took;
- with ``--inspect-python``: the same prompts through inspect_ai (installed only in that
  interpreter's environment: ``python -m venv V && V/bin/pip install inspect-ai openai``), same
  server, same limit; the ratio of the two wall times.

The datasets are not part of the measurement: they are copied (timestamps kept) from a finished run
(``--datasets-from``, default the repository root after ``make run``) into ``--workdir``.

    .venv/bin/python benchmarks/bench_endpoint_run.py --datasets-from /path/to/finished/run \\
        --latency 0.5 --concurrency 32 --cores 4 --faults --inspect-python /tmp/inspect/bin/python
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd
import yaml

from anachron.llm.testserver import FaultRates, TestServer

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))
TASKS = ["stock", "salary", "legal", "forecast"]
BASE_ENV, KEY_ENV = "BENCH_BASE_URL", "BENCH_API_KEY"
FAULTS = FaultRates(rate_limit=0.10, server_error=0.10, hang=0.05, malformed=0.05, truncated=0.05, reset=0.05)
#: run-table columns that must be equal between two runs of the same workload
SAME = ["instance_id", "task", "split", "completion", "parse_status", "evidence", "reasoning", "prediction"]


def write_config(workdir: Path, concurrency: int, timeout_s: float) -> Path:
    """The benchmark's config overrides (merged onto config/config.yaml)."""
    cfg = {
        "run": {"tasks": TASKS, "methods": ["temporal_hint"], "models": ["bench"], "splits": ["eval", "control"],
                "sample": {t: None for t in TASKS}},
        "models": {"bench": {
            "model": "openai/bench-model", "knowledge_cutoff": "2024-06-30",
            "base_url_env": BASE_ENV, "api_key_env": KEY_ENV,
            "concurrency": concurrency, "timeout_s": timeout_s, "max_retries": 8,
            "retry_base_delay_s": 0.2, "retry_max_delay_s": 2.0,
            "params": {"temperature": 0.0, "max_tokens": 512},
        }},
        "endpoints": {BASE_ENV: {"concurrency": concurrency}},
    }
    path = workdir / "bench.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path


def prepare(workdir: Path, source: Path) -> None:
    """Copy a finished run's raw data and datasets into ``workdir`` (timestamps kept: nothing rebuilds)."""
    for rel in ("data/raw", "results/datasets"):
        src = source / rel
        if not src.is_dir():
            raise SystemExit(f"{src} is missing: run the default workflow there first (make run), or pass --datasets-from")
        if not (workdir / rel).exists():
            (workdir / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copytree(src, workdir / rel, copy_function=shutil.copy2)


def run_workflow(workdir: Path, config: Path, server: TestServer, cache: Path, cores: int, *, rerun: bool = False) -> dict:
    """One timed ``snakemake`` run of the temporal_hint targets against ``server``: from scratch (a
    fresh cache), or with ``rerun`` a forced re-run of the same runs on the same cache (answers that
    did not parse are asked again with a fresh sample; everything else comes from the cache)."""
    targets = [f"results/runs/{t}/temporal_hint/bench.parquet" for t in TASKS]
    if not rerun:
        shutil.rmtree(workdir / "results" / "runs", ignore_errors=True)
        shutil.rmtree(cache, ignore_errors=True)
    env = {**os.environ, BASE_ENV: server.base_url, KEY_ENV: "bench"}
    cmd = [SNAKEMAKE, *targets, "--snakefile", str(REPO / "workflow" / "Snakefile"), "--directory", str(workdir),
           "--configfile", str(REPO / "config" / "config.yaml"), str(config),
           "--config", f"cache_dir={cache}", "--cores", str(cores), *(["--forcerun", "run_method"] if rerun else []),
           "--quiet", "all"]
    before = server.stats()
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"snakemake failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
    after = server.stats()
    runs = pd.concat([pd.read_parquet(workdir / t) for t in targets], ignore_index=True)
    metas = [json.loads((workdir / t.replace(".parquet", ".meta.json")).read_text()) for t in targets]
    return {
        "wall_s": wall,
        "requests": after["requests"] - before["requests"],
        "instances": len(runs),
        "uncached_calls": sum(m["n_uncached_calls"] for m in metas),
        "failed_calls": sum(m.get("n_failed_calls", 0) for m in metas),
        "unparsed": int((runs["parse_status"] != "ok").sum()),
        "runs": runs,
        "faults": {k: after.get(k, 0) - before.get(k, 0) for k in after if k not in ("requests", "ok")},
    }


def messages_of(cache: Path) -> list[dict]:
    """The requests of a run (messages, response schema, params) from its cache entries."""
    out = []
    for path in sorted(cache.glob("??/*.json")):
        rec = json.loads(path.read_text())
        out.append(rec["request"])
    return out


INSPECT_SCRIPT = r'''
import json, sys, time
from inspect_ai import Task, eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ChatMessageSystem, ChatMessageUser
from inspect_ai.solver import generate

requests = [json.loads(line) for line in open(sys.argv[1])]
conc, max_tokens, log_dir = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
def msgs(r):
    return [ChatMessageSystem(content=m["content"]) if m["role"] == "system" else ChatMessageUser(content=m["content"])
            for m in r["messages"]]
task = Task(dataset=[Sample(input=msgs(r), id=str(i)) for i, r in enumerate(requests)], solver=generate())
t0 = time.perf_counter()
logs = inspect_eval(task, model="openai-api/bench/bench-model", max_connections=conc, display="none",
                    log_dir=log_dir, max_tokens=max_tokens, temperature=0.0, max_retries=8, timeout=30)
print(json.dumps({"eval_s": time.perf_counter() - t0, "status": logs[0].status,
                  "samples": len(logs[0].samples or [])}))
'''


def run_inspect(python: str, requests: list[dict], server: TestServer, concurrency: int) -> dict:
    """The same requests through inspect_ai (in its own interpreter), timed as a whole process."""
    with tempfile.TemporaryDirectory() as tmp:
        reqs = Path(tmp) / "requests.jsonl"
        reqs.write_text("".join(json.dumps(r) + "\n" for r in requests))
        script = Path(tmp) / "inspect_workload.py"
        script.write_text(INSPECT_SCRIPT)
        env = {**os.environ, "BENCH_BASE_URL": server.base_url, "BENCH_API_KEY": "bench"}
        before = server.stats()["requests"]
        t0 = time.perf_counter()
        proc = subprocess.run([python, str(script), str(reqs), str(concurrency), "512", str(Path(tmp) / "logs")],
                              env=env, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        if proc.returncode != 0:
            raise SystemExit(f"inspect_ai run failed:\n{proc.stderr[-4000:]}")
        out = json.loads(proc.stdout.strip().splitlines()[-1])
        return {"wall_s": wall, "requests": server.stats()["requests"] - before, **out}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--datasets-from", type=Path, default=REPO, help="a finished run's directory (data/raw, results/datasets)")
    ap.add_argument("--workdir", type=Path, default=REPO / "benchmarks" / "out" / "endpoint-run")
    ap.add_argument("--latency", type=float, default=0.5, help="server latency per call, seconds")
    ap.add_argument("--concurrency", type=int, default=32, help="calls in flight on the endpoint")
    ap.add_argument("--cores", type=int, default=4, help="snakemake --cores")
    ap.add_argument("--faults", action="store_true", help="also run against a fault-injecting server and compare")
    ap.add_argument("--inspect-python", help="python of an environment with inspect-ai installed")
    ap.add_argument("--json", type=Path, help="write the numbers here")
    args = ap.parse_args(argv)

    workdir = args.workdir.resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    prepare(workdir, args.datasets_from.resolve())
    config = write_config(workdir, args.concurrency, timeout_s=5.0 if args.faults else 60.0)
    report: dict = {"latency_s": args.latency, "concurrency": args.concurrency, "cores": args.cores}

    with TestServer(latency_s=args.latency) as server:
        clean = run_workflow(workdir, config, server, workdir / "cache-clean", args.cores)
        ideal = clean["requests"] * args.latency / args.concurrency
        report["anachron"] = {k: v for k, v in clean.items() if k not in ("runs", "faults")}
        report["anachron"].update(ideal_s=ideal, ratio=clean["wall_s"] / ideal)
        if args.inspect_python:
            ins = run_inspect(args.inspect_python, messages_of(workdir / "cache-clean"), server, args.concurrency)
            report["inspect_ai"] = {**ins, "ratio_to_ideal": ins["wall_s"] / ideal,
                                    "anachron_over_inspect": clean["wall_s"] / ins["wall_s"]}
    if args.faults:
        def same(run: dict) -> int:
            a = clean["runs"][SAME].sort_values("instance_id").reset_index(drop=True)
            b = run["runs"][SAME].sort_values("instance_id").reset_index(drop=True)
            return int((a == b).all(axis=1).sum()) if len(a) == len(b) else 0

        with TestServer(latency_s=args.latency, faults=FAULTS, seed=1) as server:
            faulty = run_workflow(workdir, config, server, workdir / "cache-faults", args.cores)
            # answers cut off three times in a row (5 % each) stay unparsed; a re-run asks them again
            again = run_workflow(workdir, config, server, workdir / "cache-faults", args.cores, rerun=True)
        report["faults"] = {
            "wall_s": faulty["wall_s"], "requests": faulty["requests"], "injected": faulty["faults"],
            "extra_requests": faulty["requests"] - clean["requests"], "instances": faulty["instances"],
            "failed_calls": faulty["failed_calls"], "unparsed": faulty["unparsed"],
            "instances_equal_to_fault_free": same(faulty),
            "rerun": {"wall_s": again["wall_s"], "requests": again["requests"], "unparsed": again["unparsed"],
                      "instances_equal_to_fault_free": same(again)},
        }

    print(json.dumps(report, indent=2))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
