"""The SLURM profile (profiles/slurm) resolves the paper grid's DAG without submitting anything."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO

SNAKEMAKE = Path(sys.executable).with_name("snakemake")


def test_slurm_profile_dry_run_resolves_the_paper_grid(tmp_path):
    pytest.importorskip("snakemake_executor_plugin_slurm")
    # a dry run needs no keys, endpoints, EDGAR User-Agent or TEMPO weights (those are checked when jobs would start)
    hidden = ("ANACHRON_BASE_URL", "ANACHRON_API_KEY", "VERIFIER_BASE_URL", "VERIFIER_API_KEY", "ANACHRON_SEC_USER_AGENT")
    env = {k: v for k, v in os.environ.items() if k not in hidden}
    proc = subprocess.run(
        [str(SNAKEMAKE), "--profile", "profiles/slurm", "-n", "-d", str(tmp_path)],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=600,
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-3000:]
    assert re.search(r"Using profiles? profiles/slurm", out)
    counts = dict(re.findall(r"^(\w+)\s+(\d+)$", out, flags=re.M))
    # the paper grid: 4 tasks x 5 methods (+ tempo on 3 tasks) x 2 models, TEMPO trained per (task, model)
    assert int(counts["train_tempo"]) == 6
    assert int(counts["run_method"]) == int(counts["verify_claims"]) == int(counts["score_run"]) > 40
    assert "This was a dry-run" in out
    assert not list(tmp_path.glob("results/**/*.parquet"))  # nothing ran


def test_a_real_run_without_keys_stops_before_any_job(tmp_path):
    hidden = ("ANACHRON_BASE_URL", "ANACHRON_API_KEY", "VERIFIER_BASE_URL", "VERIFIER_API_KEY")
    env = {k: v for k, v in os.environ.items() if k not in hidden}
    proc = subprocess.run(
        [str(SNAKEMAKE), "--snakefile", "workflow/Snakefile", "--configfile", "config/paper.yaml",
         "-d", str(tmp_path), "--cores", "1"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=600,
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1
    assert "anachron configuration error" in out and "needs environment variable ANACHRON_API_KEY" in out
    assert "VERIFIER_BASE_URL" in out
    assert not (tmp_path / "data").exists() and not (tmp_path / "results").exists()
