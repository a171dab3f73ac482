"""The DAG a config plans (snakemake -n): a run of some tasks fetches and indexes only what those tasks read."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from conftest import REPO

SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))


def _dry_run(work: Path, overrides: dict) -> str:
    (work / "c.yaml").write_text(json.dumps({"probe_endpoints": False, **overrides}))
    snap = work / "snapshot"
    snap.mkdir(exist_ok=True)
    r = subprocess.run(
        [SNAKEMAKE, "--snakefile", str(REPO / "workflow" / "Snakefile"), "--directory", str(work),
         "--configfile", str(REPO / "config" / "config.yaml"), str(work / "c.yaml"),
         "--config", f"snapshot_dir={snap}", "-n"],
        capture_output=True, text=True, timeout=300,
    )
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    return r.stdout


def test_a_retrieval_run_of_one_task_fetches_only_that_tasks_sources(tmp_path):
    out = _dry_run(tmp_path, {"run": {"tasks": ["stock"], "methods": ["rag"]}})
    fetched = set(re.findall(r"wildcards: source=(\w+)", out))
    assert fetched == {"edgar", "news"}  # stock's grounding (EDGAR) and the snapshot's dated news
    corpus = re.search(r"rule build_corpus:\n\s+input: ([^\n]+)", out).group(1)
    assert "sp500/membership" in corpus and "yahoo/prices" in corpus
    assert not any(s in corpus for s in ("oyez", "nba", "nhl", "forecastbench"))


def test_salary_alone_fetches_no_market_data(tmp_path):
    out = _dry_run(tmp_path, {"run": {"tasks": ["salary"], "methods": ["temporal_hint"]}})
    fetched = set(re.findall(r"wildcards: source=(\w+)", out))
    assert {"nba", "nhl"} <= fetched and "edgar" not in fetched and "oyez" not in fetched
