"""The SLURM profile (profiles/slurm) resolves the paper grid's DAG without submitting anything."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = Path(sys.executable).with_name("snakemake")


def test_slurm_profile_dry_run_resolves_the_paper_grid(tmp_path):
    pytest.importorskip("snakemake_executor_plugin_slurm")
    env = {**os.environ, "ANACHRON_BASE_URL": "http://127.0.0.1:9/v1", "ANACHRON_API_KEY": "placeholder",
           "VERIFIER_BASE_URL": "http://127.0.0.1:9/v1", "VERIFIER_API_KEY": "placeholder",
           "ANACHRON_SEC_USER_AGENT": "Test Runner test@example.org"}
    for m in ("qwen3-30b-a3b", "qwen3.5-35b-a3b"):  # config/paper.yaml's hf_path (TEMPO training weights)
        (tmp_path / "data" / "models" / m / "hf").mkdir(parents=True)
    proc = subprocess.run(
        [str(SNAKEMAKE), "--profile", "profiles/slurm", "-n", "-d", str(tmp_path)],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=600,
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-3000:]
    assert "Using profile profiles/slurm" in out
    counts = dict(re.findall(r"^(\w+)\s+(\d+)$", out, flags=re.M))
    # the paper grid: 4 tasks x 5 methods (+ tempo on 3 tasks) x 2 models, TEMPO trained per (task, model)
    assert int(counts["train_tempo"]) == 6
    assert int(counts["run_method"]) == int(counts["verify_claims"]) == int(counts["score_run"]) > 40
    assert "This was a dry-run" in out
    assert not list(tmp_path.glob("results/**/*.parquet"))  # nothing ran
