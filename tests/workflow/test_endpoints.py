"""The workflow against a loopback endpoint (real ``snakemake``): the probe before any job, failed
calls below the threshold re-run once by the next run, an endpoint that dies mid-run, and run_method
jobs of one endpoint overlapping within its shared concurrency.

The datasets are written by hand (run_method's inputs exist, so no source is read); the endpoint is
the loopback test server (``anachron.llm.testserver.TestServer``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from anachron.io import write_parquet
from anachron.llm.testserver import TestServer

from conftest import REPO
from endpoint_fixtures import closed_port_url, forecast_instances

pytestmark = pytest.mark.slow
SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))
ENV, KEY_ENV = "TEST_WF_BASE_URL", "TEST_WF_API_KEY"


def model(name: str, **over) -> dict:
    m = {"model": f"openai/stub-{name}", "knowledge_cutoff": "2022-01-01", "base_url_env": ENV, "api_key_env": KEY_ENV,
         "concurrency": 2, "max_retries": 0, "timeout_s": 10, "retry_base_delay_s": 0.0, "retry_max_delay_s": 0.0,
         "params": {"temperature": 0}}
    return {**m, **over}


def workdir(tmp_path: Path, n_instances: int, models: dict, run: dict | None = None, **config) -> Path:
    """A work directory with a hand-made forecast dataset and a config running temporal_hint on ``models``
    (``run``: more keys of the config's ``run`` block)."""
    work = tmp_path / "work"
    write_parquet(forecast_instances(n_instances), work / "results" / "datasets" / "forecast.parquet")
    (work / "results" / "datasets" / "report.md").write_text("# made-up dataset\n")
    cfg = {"run": {"tasks": ["forecast"], "methods": ["temporal_hint"], "models": list(models), "splits": ["eval"],
                   **(run or {})},
           "models": models, "cache_dir": str(work / "cache"), **config}
    (work / "test.yaml").write_text(yaml.safe_dump(cfg))
    return work


def snakemake(work: Path, url: str, *args: str) -> subprocess.CompletedProcess:
    """``snakemake`` on ``work``'s config with the endpoint at ``url``; targets: every run's metadata."""
    targets = [str(p) for p in _metas(work)]
    env = {**os.environ, ENV: url, KEY_ENV: "placeholder-key"}
    cmd = [SNAKEMAKE, "--snakefile", str(REPO / "workflow" / "Snakefile"), "--directory", str(work),
           "--configfile", str(work / "test.yaml"), "--cores", "4", *targets, *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env)


def _metas(work: Path) -> list[Path]:
    cfg = yaml.safe_load((work / "test.yaml").read_text())
    return [Path(f"results/runs/forecast/temporal_hint/{m}.meta.json") for m in cfg["run"]["models"]]


def meta(work: Path, name: str) -> dict:
    return json.loads((work / "results" / "runs" / "forecast" / "temporal_hint" / f"{name}.meta.json").read_text())


def test_endpoint_down_or_key_rejected_stops_the_run_before_any_job(tmp_path):
    work = workdir(tmp_path, 2, {"a": model("a")})
    url = closed_port_url()
    down = snakemake(work, url)
    assert down.returncode != 0
    port = url.split(":")[2].split("/")[0]
    assert f"endpoint {ENV} (http://127.0.0.1:{port}) of model(s) a: not answering" in down.stderr
    assert "probe_endpoints=False" in down.stderr and "placeholder-key" not in down.stderr
    assert "rule run_method" not in down.stdout + down.stderr and not (work / "results" / "runs").exists()
    dry = snakemake(work, url, "-n")  # a dry run does not probe
    assert dry.returncode == 0 and "run_method" in dry.stdout
    with TestServer(api_key="key-the-probe-lacks") as srv:  # the probe's GET /models gets a 401
        rejected = snakemake(work, srv.base_url)
        stats = srv.stats()
    assert rejected.returncode != 0 and f"the endpoint rejected the API key in {KEY_ENV}" in rejected.stderr
    assert stats["unauthorized"] >= 1 and stats["requests"] == 0  # no chat request was sent


def test_failed_calls_below_the_threshold_rerun_once_then_nothing(tmp_path):
    work = workdir(tmp_path, 6, {"a": model("a"), "b": model("b")}, run={"max_failed_share": 0.5})
    failing = {"on": True}

    def fail(body):  # model b's call for instance 2 fails while "on"
        hit = body["model"] == "stub-b" and "made-up index 2 " in body["messages"][-1]["content"]
        return 500 if failing["on"] and hit else None

    with TestServer(status_for=fail) as srv:
        first = snakemake(work, srv.base_url)
        assert first.returncode == 0, first.stderr[-3000:]
        assert "anachron: 1 run(s) finished with LLM calls that failed after retries" in first.stderr
        assert "forecast/temporal_hint/b: 1 of 6 uncached calls, 1 instance(s), endpoint TEST_WF_BASE_URL" in first.stderr
        a1, b1 = meta(work, "a"), meta(work, "b")
        assert (a1["n_failed_calls"], b1["n_failed_calls"], b1["failed_share"]) == (0, 1, pytest.approx(1 / 6))
        failing["on"] = False
        sent = srv.stats()["requests"]
        dry = snakemake(work, srv.base_url, "-n")
        outputs = [line for line in dry.stdout.splitlines() if line.strip().startswith("output:")]
        assert len(outputs) == 1 and "temporal_hint/b.parquet" in outputs[0]
        assert "Params have changed since last execution" in dry.stdout
        second = snakemake(work, srv.base_url)
        assert second.returncode == 0, second.stderr[-3000:]
        assert srv.stats()["requests"] == sent + 1  # only the failed call is sent again
        assert "finished with LLM calls that failed" not in second.stderr
        b2 = meta(work, "b")
        assert b2["n_failed_calls"] == 0 and b2["retry_token"] == f"retry:{b1['finished_at']}"
        assert meta(work, "a") == a1  # the run without failures did not re-run
        third = snakemake(work, srv.base_url, "-n")
        assert "Nothing to be done" in third.stdout + third.stderr


def test_an_endpoint_that_dies_mid_run_fails_the_job_and_the_rerun_completes_it(tmp_path):
    work = workdir(tmp_path, 24, {"a": model("a", max_retries=2)})
    with TestServer(latency_s=0.02, stop_after=6) as srv:  # closes its port after 6 answers
        died = snakemake(work, srv.base_url, "--config", "probe_endpoints=False")
    answered = srv.stats()["ok"]
    assert died.returncode != 0
    port = srv.port
    assert f"endpoint {ENV} (http://127.0.0.1:{port})" in died.stderr
    assert "EndpointDown" in died.stderr and "re-running `snakemake` continues" in died.stderr
    assert not (work / "results" / "runs" / "forecast" / "temporal_hint" / "a.meta.json").exists()
    with TestServer() as back:
        again = snakemake(work, back.base_url)
    assert again.returncode == 0, again.stderr[-3000:]
    assert back.stats()["requests"] == 24 - answered == meta(work, "a")["n_uncached_calls"]


def test_jobs_of_one_endpoint_overlap_within_its_shared_concurrency(tmp_path):
    models = {name: model(name) for name in "abcd"}
    work = workdir(tmp_path, 8, models, endpoints={ENV: {"concurrency": 4}})
    with TestServer(latency_s=0.4) as srv:
        out = snakemake(work, srv.base_url)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "endpoint_test_wf_base_url=1" in out.stdout + out.stderr  # each job takes one unit of the endpoint
    assert 2 < srv.max_in_flight() <= 4  # jobs at once, never more calls than the endpoint's 4 slots


def test_resources_on_the_command_line_lower_the_endpoint_limit_inside_the_jobs(tmp_path):
    models = {name: model(name, concurrency=4) for name in "ab"}
    work = workdir(tmp_path, 8, models, endpoints={ENV: {"concurrency": 8}})
    with TestServer(latency_s=0.3) as srv:
        out = snakemake(work, srv.base_url, "--resources", "endpoint_test_wf_base_url=2")
    assert out.returncode == 0, out.stderr[-3000:]
    assert "endpoint_test_wf_base_url=1" in out.stdout + out.stderr
    assert srv.max_in_flight() <= 2 and srv.stats()["requests"] == 16  # not the models' 4, nor the config's 8
