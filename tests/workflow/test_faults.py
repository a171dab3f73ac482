"""The whole workflow against the loopback test server (anachron.llm.testserver): an ``openai/`` model,
temporal_hint on the synthetic snapshot's stock and forecast instances.

* faults (429/500, hangs, malformed bodies, truncated content, resets) change no result, and the
  extra calls they cost are reported;
* a run killed mid-way (SIGKILL of snakemake's process group) resumes to the same results without
  repeating a completed call;
* neither the API key nor credentials in the base URL end up in any file the run writes.

Datasets are built once per module; each scenario runs on a copy of that work directory with its
own LLM cache.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import duckdb
import pandas as pd
import pytest

from anachron.llm.testserver import FAULT_KINDS, FaultRates, TestServer

from conftest import REPO, write_workflow_snapshot

pytestmark = pytest.mark.slow
pytest.importorskip("openai")

SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))
URL_ENV, KEY_ENV = "ANACHRON_TEST_SERVER_URL", "ANACHRON_TEST_SERVER_KEY"
CONCURRENCY = 4
TASKS = ("stock", "forecast")


def model_entry(url_env: str = URL_ENV, key_env: str = KEY_ENV, model_id: str = "test-model") -> dict:
    """An ``openai/`` model on the test server: short timeout (a hang costs 1 s) and back-off."""
    return {"model": f"openai/{model_id}", "knowledge_cutoff": "2024-06-30", "base_url_env": url_env,
            "api_key_env": key_env, "concurrency": CONCURRENCY, "max_retries": 8, "timeout_s": 1.0,
            "retry_base_delay_s": 0.02, "retry_max_delay_s": 0.2,
            "params": {"temperature": 0.0, "max_tokens": 300, "seed": 0}}


#: Overrides of config/config.yaml + .test/config/e2e.yaml (JSON is YAML): temporal_hint on stock and
#: forecast, no Shapley, perf_clean or probe (their calls are not what is compared), no EDGAR.
CONFIG = {
    "tasks": {"stock": {"windows": [
        {"name": f"w{i}", "split": "eval", "start": start, "end": "2020-07-01", "n": 6, "affected_sectors": ["Energy"]}
        for i, start in enumerate(("2019-12-01", "2020-01-02", "2020-02-03"))]}},
    "run": {"tasks": list(TASKS), "methods": ["temporal_hint"], "models": ["srv"], "sample": {"stock": 18, "forecast": 8}},
    "shapley": {"tasks": []},
    "perf_clean": {"enabled": False},
    "probes": {"methods": []},
    "calibration": {"n_per_kind": 5},
    "sources": {"edgar": {"enabled": False}},
    "models": {"srv": model_entry()},
}
RUNS = [f"results/runs/{t}/temporal_hint/srv.parquet" for t in TASKS]
TARGETS = [*RUNS, "results/results.duckdb"]


def snakemake_cmd(work: Path, snapshot: Path, config: dict, *args: str) -> list[str]:
    path = work / "faults.yaml"
    path.write_text(json.dumps(config))
    return [SNAKEMAKE, "--snakefile", str(REPO / "workflow" / "Snakefile"), "--directory", str(work),
            "--configfile", str(REPO / "config" / "config.yaml"), str(REPO / ".test" / "config" / "e2e.yaml"), str(path),
            "--config", f"snapshot_dir={snapshot}", f"cache_dir={work / 'cache'}", "--cores", "2",
            "--scheduler", "greedy", *args]


def server_env(**urls_and_keys: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), os.environ.get("PYTHONPATH", "")]),
            **urls_and_keys}


def run_workflow(work: Path, snapshot: Path, env: dict[str, str], *args: str, config: dict = CONFIG) -> subprocess.CompletedProcess:
    proc = subprocess.run(snakemake_cmd(work, snapshot, config, *args), env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return proc


def results(work: Path, *, metrics: bool = True) -> dict[str, pd.DataFrame]:
    """What a fault must not change: each instance's answer, parse status, evidence and prediction (the
    run tables less their call traces and call counts) and, with ``metrics``, every metric with its CI
    (from results.duckdb)."""
    runs = pd.concat([pd.read_parquet(work / "results" / "runs" / t / "temporal_hint" / "srv.parquet") for t in TASKS])
    out = {"runs": runs.drop(columns=["trace", "n_llm_calls"]).sort_values(["task", "instance_id"], ignore_index=True)}
    if metrics:
        con = duckdb.connect(str(work / "results" / "results.duckdb"), read_only=True)
        try:
            out["metrics"] = con.execute("SELECT * FROM metrics ORDER BY ALL").df()
        finally:
            con.close()
    return out


def assert_same_results(work: Path, reference: dict[str, pd.DataFrame]) -> None:
    got = results(work, metrics="metrics" in reference)
    for name, frame in reference.items():
        pd.testing.assert_frame_equal(got[name], frame, obj=name)


@pytest.fixture(scope="module")
def base(tmp_path_factory, fixture_snapshot) -> tuple[Path, Path]:
    """(work dir with the raw data, news included, and the datasets built; snapshot dir)."""
    root = tmp_path_factory.mktemp("faults")
    snapshot = write_workflow_snapshot(root / "snapshot", fixture_snapshot)
    work = root / "base"
    work.mkdir()
    with TestServer() as srv:
        run_workflow(work, snapshot, server_env(**{URL_ENV: srv.base_url, KEY_ENV: "unused"}),
                     "results/datasets/report.md", "data/raw/news/data.parquet")
    return work, snapshot


def scenario(base: tuple[Path, Path], name: str) -> Path:
    """A copy of the base work dir (modification times kept, so no dataset is rebuilt)."""
    work = base[0].parent / name
    shutil.copytree(base[0], work, symlinks=True)
    return work


@pytest.fixture(scope="module")
def clean(base) -> tuple[dict[str, pd.DataFrame], int]:
    """The fault-free run: its results and the number of calls it made."""
    work = scenario(base, "clean")
    with TestServer(latency_s=0.05, api_key="k-clean") as srv:
        run_workflow(work, base[1], server_env(**{URL_ENV: srv.base_url, KEY_ENV: "k-clean"}), *TARGETS)
        stats = srv.stats()
    assert stats["requests"] == stats["ok"] > 0
    ref = results(work)
    assert set(ref["runs"]["parse_status"]) == {"ok"} and ref["runs"]["llm_error"].isna().all()
    assert len(ref["runs"]) == stats["requests"]  # one call per instance
    return ref, stats["requests"]


def test_faults_change_no_result(base, clean):
    reference, n_clean = clean
    work = scenario(base, "faulty")
    faults = FaultRates(rate_limit=0.1, server_error=0.1, hang=0.05, malformed=0.05, truncated=0.05, reset=0.05,
                        retry_after_s=0.1)
    # seed 6: with today's prompts every fault kind occurs at least once (not asserted: the draws follow the
    # request bodies, so another prompt wording draws other faults)
    with TestServer(latency_s=0.05, faults=faults, api_key="k-faults", seed=6) as srv:
        env = server_env(**{URL_ENV: srv.base_url, KEY_ENV: "k-faults"})
        t0 = time.perf_counter()
        run_workflow(work, base[1], env, *TARGETS)
        wall = time.perf_counter() - t0
        n_cut = int((results(work, metrics=False)["runs"]["parse_status"] == "truncated").sum())
        if n_cut:  # an answer cut twice (its one retry too) is kept as truncated, never cached: the
            run_workflow(work, base[1], env, "--forcerun", "run_method", *TARGETS)  # next run repairs it
        stats = srv.stats()
    n_faults = {k: stats[k] for k in FAULT_KINDS}
    extra = stats["requests"] - n_clean
    report = (f"fault-injected run: {stats['requests']} calls for {n_clean} fault-free ones (extra calls: {extra}); "
              f"faults {n_faults}; {n_cut} answer(s) cut twice needed a re-run; wall {wall:.1f} s")
    print(report)
    assert sum(n_faults.values()) >= 3, report
    assert stats["unauthorized"] == 0, report
    assert_same_results(work, reference)


def test_a_killed_run_resumes_without_repeating_calls(base, clean):
    reference, n_clean = clean
    work = scenario(base, "killed")
    with TestServer(latency_s=0.3, api_key="k-kill") as srv:
        env = server_env(**{URL_ENV: srv.base_url, KEY_ENV: "k-kill"})
        proc = subprocess.Popen(snakemake_cmd(work, base[1], CONFIG, *RUNS), env=env, start_new_session=True,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.time() + 300
            while srv.stats()["ok"] < 2 * CONCURRENCY and proc.poll() is None and time.time() < deadline:
                time.sleep(0.01)
            time.sleep(0.15)  # into the next calls' latency: the answered ones are in the cache by now
        finally:
            os.killpg(proc.pid, signal.SIGKILL)  # snakemake and its jobs
            proc.wait()
        time.sleep(0.5)  # calls cut off by the kill have reached the server by now
        before = srv.stats()
        cached_at_kill = len(list((work / "cache").glob("??/*.json")))
        assert 0 < before["ok"] < n_clean, before
        srv.latency_s = 0.05
        run_workflow(work, base[1], env, "--unlock")  # the kill left snakemake's lock behind
        run_workflow(work, base[1], env, *RUNS)
        total = srv.stats()["requests"]
    print(f"kill-and-resume: {before['requests']} calls before the kill ({before['ok']} answered, "
          f"{cached_at_kill} in the cache), {total} in all for {n_clean} fault-free ones")
    # only the calls not completed at the kill (sent, but their answer not yet in the cache) are asked
    # again; the two runs' jobs overlap (an endpoint job takes one core), so up to 2 x CONCURRENCY
    # calls may have been open
    open_at_kill = before["requests"] - cached_at_kill
    assert 0 <= open_at_kill <= 2 * CONCURRENCY
    assert total == n_clean + open_at_kill
    assert_same_results(work, {"runs": reference["runs"]})


def test_no_secret_reaches_any_file(base):
    key = "mk-" + uuid.uuid4().hex  # built here: no key-like literal in the repository
    password = "mu-" + uuid.uuid4().hex
    work = scenario(base, "secrets")
    config = {**CONFIG, "run": {**CONFIG["run"], "tasks": ["stock"], "models": ["srv", "srv_userinfo"]},
              "models": {"srv": model_entry(), "srv_userinfo": model_entry("ANACHRON_TEST_SERVER_URL_2", KEY_ENV, "test-model-2")}}
    faults = FaultRates(rate_limit=0.1, server_error=0.1, reset=0.1, retry_after_s=0.05)  # logged retries too
    # credentials in the path (the server checks the key) and as user:password@ (httpx then sends them
    # as Basic auth instead of the key, so that server checks nothing)
    with TestServer(latency_s=0.02, faults=faults, api_key=key) as keyed, TestServer(latency_s=0.02, faults=faults) as plain:
        env = server_env(**{URL_ENV: f"http://127.0.0.1:{keyed.port}/{password}/v1", KEY_ENV: key,
                            "ANACHRON_TEST_SERVER_URL_2": f"http://user:{password}@127.0.0.1:{plain.port}/v1"})
        proc = run_workflow(work, base[1], env, "results/results.duckdb", config=config)
        assert keyed.stats()["ok"] > 0 and keyed.stats()["unauthorized"] == 0
        assert plain.stats()["ok"] > 0
    markers = (key.encode(), password.encode())
    assert not any(m in (proc.stdout + proc.stderr).encode() for m in markers)
    searched, leaks = 0, []
    for sub in ("results", "logs", ".snakemake", "cache", "benchmarks"):
        for path in (work / sub).rglob("*"):
            if path.is_file():
                searched += 1
                data = path.read_bytes()
                leaks += [f"{path.relative_to(work)}: {m.decode()[:3]}..." for m in markers if m in data]
    assert searched > 50 and (work / "cache").is_dir()
    assert not leaks, leaks
