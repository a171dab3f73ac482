"""What a run_method or verify_claims job imports: the rule scripts' modules, every task and method,
the HTTP and mock providers; none of the heavy libraries only some steps need (scipy ~0.8 s,
torch, transformers, matplotlib, llama_cpp, bm25s, duckdb), which every job would otherwise
pay at start-up (benchmarks/bench_job_overhead.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from conftest import REPO

HEAVY = ("scipy", "torch", "transformers", "trl", "peft", "matplotlib", "llama_cpp", "bm25s", "duckdb")

JOB_IMPORTS = """
import json, sys
import pandas as pd
from anachron.io import write_json, write_parquet
from anachron.logs import log_to
from anachron.methods.registry import get_method, method_names
from anachron.methods.runner import run_method
from anachron.tasks.registry import get_task
from anachron.llm.providers import make_provider
from anachron.llm.types import ModelSpec
from anachron.verify.pipeline import verify_run
for t in ("stock", "salary", "legal", "forecast"):
    get_task(t)
for m in method_names():
    get_method(m)
for model in ("openai/some-model", "mock/dry"):
    make_provider(ModelSpec(name="m", model=model, knowledge_cutoff="2024-01-01"))
print(json.dumps(sorted(m for m in %r if m in sys.modules)))
"""


def test_a_job_imports_no_heavy_library():
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "ANACHRON_API_KEY": "x", "ANACHRON_BASE_URL": "http://127.0.0.1:9/v1"}
    r = subprocess.run([sys.executable, "-c", JOB_IMPORTS % (HEAVY,)], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    assert json.loads(r.stdout.strip().splitlines()[-1]) == []
