"""A tiny end-to-end run of the real workflow: synthetic snapshot, real SmolLM2 model."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import duckdb
import pandas as pd
import pytest
import yaml

from conftest import REPO

pytestmark = pytest.mark.slow
SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))


def _snakemake(workdir: Path, *args: str) -> subprocess.CompletedProcess:
    cmd = [SNAKEMAKE, "--snakefile", str(REPO / "Snakefile"), "--directory", str(workdir),
           "--configfile", str(workdir / "config.yaml"), "--cores", "2", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=900)


@pytest.fixture(scope="module")
def workflow_run(fixture_snapshot, tmp_path_factory):
    llama_cpp = pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")
    del llama_cpp
    work = tmp_path_factory.mktemp("workflow")
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    config["snapshot_dir"] = str(fixture_snapshot)
    config["cache_dir"] = str(work / "cache")
    config["tasks"]["stock"]["windows"] = [
        {"name": "fixture", "split": "eval", "start": "2019-12-01", "end": "2020-06-01", "n": 3,
         "affected_sectors": ["Energy"]}
    ]
    config["run"]["sample"] = {"stock": 2}
    config["models"]["smollm2"]["params"]["max_tokens"] = 300
    (work / "config.yaml").write_text(yaml.safe_dump(config))
    first = _snakemake(work)
    assert first.returncode == 0, first.stderr[-4000:]
    return work


def test_outputs_and_database(workflow_run):
    work = workflow_run
    assert (work / "results" / "tables" / "main.md").exists()
    assert r"temporal\_hint" in (work / "results" / "tables" / "main.tex").read_text()
    con = duckdb.connect(str(work / "results" / "results.duckdb"), read_only=True)
    metrics = con.execute(
        "SELECT metric, n FROM metrics WHERE task='stock' AND method='temporal_hint' AND model='smollm2'"
    ).df().set_index("metric")
    assert {"olr", "perf", "cov", "parse_rate"} <= set(metrics.index)
    assert metrics.loc["parse_rate", "n"] == 2
    inst = con.execute("SELECT * FROM instances").df()
    assert len(inst) == 3 and set(inst["cutoff_date"]) == {"2019-11-30"}
    tickers = set(inst["inputs"].str.extractall(r'"ticker": "(\w+)"')[0])
    assert "FXTR" not in tickers and "GOLF" not in tickers  # survivorship-free universe
    n_ev = con.execute("SELECT sum(json_array_length(evidence::JSON)) FROM completions").fetchone()[0] or 0
    n_claims = con.execute("SELECT count(*) FROM claims").fetchone()[0]
    assert n_claims == n_ev
    if n_claims:
        layers = {r[0] for r in con.execute("SELECT DISTINCT layer FROM claims").fetchall()}
        assert layers <= {"grounded", "rules", "declared", "none"}
        assert con.execute("SELECT count(*) FROM claims WHERE reason IS NULL").fetchone()[0] == 0
    calls = con.execute("SELECT count(*), sum(cache_hit::INT) FROM llm_calls").fetchone()
    assert calls == (2, 0)
    con.close()


def test_rerun_is_a_no_op_and_forced_rerun_hits_the_cache(workflow_run):
    work = workflow_run
    dry = _snakemake(work, "-n")
    assert dry.returncode == 0
    assert "Nothing to be done" in dry.stdout + dry.stderr
    forced = _snakemake(work, "--forcerun", "run_method")
    assert forced.returncode == 0, forced.stderr[-3000:]
    calls = pd.read_parquet(work / "results" / "runs" / "stock" / "temporal_hint" / "smollm2.calls.parquet")
    assert len(calls) == 2 and calls["cache_hit"].all()
