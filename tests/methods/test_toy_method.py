"""Adding a method is one file: the toy method of ``tests/plugins/toy_method`` (runner, call pattern
and config block, registered once with ``register_method``) runs through the real workflow —
config validation with its own block, a mock-provider run, verification, scoring and
``load_results`` — and is counted by ``anachron estimate``, with no other module knowing about it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from conftest import REPO
from toy_workflow import PLUGINS, import_plugin, snakemake_toy, write_toy_workdir

toy_method = import_plugin("toy_method")


@pytest.fixture(scope="module")
def method_workflow(tmp_path_factory):
    work = tmp_path_factory.mktemp("toy-method")
    config = write_toy_workdir(work, ["toy_twice"])
    run = snakemake_toy(work, config)
    assert run.returncode == 0, (run.stdout + run.stderr)[-4000:]
    return work, config


def test_the_toy_method_runs_through_the_real_workflow(method_workflow):
    work, _ = method_workflow
    con = duckdb.connect(str(work / "results" / "results.duckdb"), read_only=True)
    assert con.execute("SELECT DISTINCT method FROM completions").fetchall() == [("toy_twice",)]
    # two generations per instance (sample 0 and 1), each a distinct cached call (besides the perf_clean re-ask)
    calls = con.execute("SELECT instance_id, count(DISTINCT cache_key) FROM llm_calls "
                        "WHERE method = 'toy_twice' AND step <> 'perf_clean' GROUP BY 1").fetchall()
    assert sorted(n for _, n in calls) == [2, 2]
    olr = dict(con.execute("SELECT instance_id, olr FROM instance_scores WHERE method = 'toy_twice'").fetchall())
    assert olr == {"toy-Ashby-2023-07-02": 0.5, "toy-Brill-2023-07-09": 0.0}
    assert con.execute("SELECT n_instances FROM runs WHERE method = 'toy_twice'").fetchone()[0] == 2
    con.close()
    # a second run repeats no call
    again = snakemake_toy(work, work / "toy.yaml", "--forcerun", "run_method")
    assert again.returncode == 0, again.stderr[-3000:]
    con = duckdb.connect(str(work / "results" / "results.duckdb"), read_only=True)
    assert con.execute("SELECT count(*) FILTER (WHERE NOT cache_hit) FROM llm_calls WHERE method = 'toy_twice'").fetchone()[0] == 0
    con.close()


def test_the_estimate_counts_the_toy_method_from_its_call_pattern(method_workflow):
    work, config = method_workflow
    env = {"PYTHONPATH": str(PLUGINS), "PATH": str(Path(sys.executable).parent)}
    r = subprocess.run([str(Path(sys.executable).with_name("anachron")), "estimate", str(config), "--format", "json",
                        "--datasets", str(work / "results" / "datasets"), "--retry-rate", "0"],
                       capture_output=True, text=True, env=env, timeout=120, cwd=work)
    assert r.returncode == 0, r.stderr[-2000:]
    rows = [row for row in json.loads(r.stdout)["rows"] if row.get("method") == "toy_twice" and row.get("stage") == "run"]
    assert rows and rows[0]["instances"] == 2 and rows[0]["calls"] == 4


def test_the_toy_method_config_block_is_its_own(tmp_path):
    config = write_toy_workdir(tmp_path, ["toy_twice"])
    data = json.loads(config.read_text())
    data["methods"] = {"toy_twice": {"max_evidence": 0}}
    config.write_text(json.dumps(data))
    run = snakemake_toy(tmp_path, config, "-n")
    out = run.stdout + run.stderr
    assert run.returncode != 0 and "config key methods.toy_twice.max_evidence" in out, out[-2000:]


def test_the_toy_method_runs_on_a_built_in_task_too(tmp_path):
    # the default config's stock task with the plugin's method: the DAG has its run, nothing else to add
    (tmp_path / "cfg.yaml").write_text(json.dumps({"plugins": ["toy_method"], "run": {"methods": ["toy_twice"]}, "probe_endpoints": False}))
    run = subprocess.run(
        [str(Path(sys.executable).with_name("snakemake")), "--snakefile", str(REPO / "workflow" / "Snakefile"),
         "--directory", str(tmp_path), "--configfile", str(REPO / "config" / "config.yaml"), str(tmp_path / "cfg.yaml"),
         "-n", "--quiet", "rules"],
        capture_output=True, text=True, timeout=300, env={**__import__("os").environ, "PYTHONPATH": str(PLUGINS)},
    )
    assert run.returncode == 0, (run.stdout + run.stderr)[-3000:]
    assert "run_method" in run.stdout


def test_no_other_module_names_the_toy_method():
    for root in (REPO / "src", REPO / "workflow", REPO / "config"):
        for path in root.rglob("*"):
            if path.is_file() and path.suffix in (".py", ".smk", ".yaml", ""):
                assert "toy_twice" not in path.read_text(errors="ignore"), path
    assert toy_method.CONFIG_SCHEMA["properties"]["max_evidence"]["minimum"] == 1
