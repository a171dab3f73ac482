"""A tiny end-to-end run of the real workflow: synthetic snapshot, real SmolLM2 model."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import duckdb
import pandas as pd
import pytest

from anachron.report import FIGURE_NAMES, htmlcheck
from anachron.report.registry import FORMATS
from anachron.report.tables import TABLE_NAMES
from anachron.tables import EVIDENCE_USABLE

from conftest import REPO, write_workflow_snapshot

pytestmark = [pytest.mark.slow, pytest.mark.local_runtime]
SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))


def _snakemake(workdir: Path, *args: str) -> subprocess.CompletedProcess:
    """The workflow in ``workdir`` on the default config with the e2e overrides of ``.test/``."""
    cmd = [SNAKEMAKE, "--snakefile", str(REPO / "workflow" / "Snakefile"), "--directory", str(workdir),
           "--configfile", str(REPO / "config" / "config.yaml"), str(REPO / ".test" / "config" / "e2e.yaml"),
           "--config", f"snapshot_dir={workdir / 'snapshot'}", f"cache_dir={workdir / 'cache'}",
           "--cores", "2", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=2400)


@pytest.fixture(scope="module")
def workflow_run(fixture_snapshot, tmp_path_factory):
    llama_cpp = pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")
    del llama_cpp
    work = tmp_path_factory.mktemp("workflow")
    write_workflow_snapshot(work / "snapshot", fixture_snapshot)
    first = _snakemake(work)
    assert first.returncode == 0, first.stderr[-4000:]
    return work


def test_outputs_and_database(workflow_run):
    work = workflow_run
    assert (work / "results" / "tables" / "main.md").exists()
    for name in FIGURE_NAMES:  # every figure drawn from the run's database, as PNG and PDF
        assert (work / "results" / "figures" / f"{name}.png").read_bytes()[:4] == b"\x89PNG"
        assert (work / "results" / "figures" / f"{name}.pdf").read_bytes()[:4] == b"%PDF"
    assert r"temporal\_hint" in (work / "results" / "tables" / "main.tex").read_text()
    for name in TABLE_NAMES:  # every report table in every format; the training table says why it is empty
        for ext in FORMATS:
            assert (work / "results" / "tables" / f"{name}.{ext}").stat().st_size > 0, (name, ext)
    assert "TEMPO training did not run" in (work / "results" / "tables" / "training.html").read_text()
    con = duckdb.connect(str(work / "results" / "results.duckdb"), read_only=True)
    assert con.execute("SELECT count(*) FROM report_main").fetchone()[0] > 0
    metrics = con.execute(
        "SELECT metric, n FROM metrics WHERE task='stock' AND method='temporal_hint' AND model='smollm2'"
    ).df().set_index("metric")
    assert {"olr", "perf", "cov", "parse_rate"} <= set(metrics.index)
    assert metrics.loc["parse_rate", "n"] == 2
    tasks = {r[0] for r in con.execute("SELECT DISTINCT task FROM metrics").fetchall()}
    assert tasks == {"stock", "salary", "legal", "forecast"}
    inst = con.execute("SELECT * FROM instances WHERE task = 'stock'").df()
    assert len(inst) == 3 and set(inst["cutoff_date"]) == {"2019-11-30"}
    tickers = set(inst["inputs"].str.extractall(r'"ticker": "(\w+)"')[0])
    assert "FXTR" not in tickers and "GOLF" not in tickers  # survivorship-free universe
    n_ev = con.execute("SELECT sum(json_array_length(evidence::JSON)) FROM completions").fetchone()[0] or 0
    n_claims = con.execute("SELECT count(*) FROM claims WHERE source = 'evidence'").fetchone()[0]
    assert n_claims == n_ev
    if n_claims:
        layers = {r[0] for r in con.execute("SELECT DISTINCT layer FROM claims").fetchall()}
        assert layers <= {"grounded", "rules", "declared", "none"}
        assert con.execute("SELECT count(*) FROM claims WHERE reason IS NULL").fetchone()[0] == 0
        cats = {r[0] for r in con.execute("SELECT DISTINCT category FROM claims").fetchall()}
        assert cats and cats <= {"A1", "A2", "A3", "A4", "A5", "B1", "B2"}
    n_instances = con.execute("SELECT sum(n_instances) FROM runs").fetchone()[0]
    n_calls, n_uncached, n_keys = con.execute(
        "SELECT count(*), count(*) FILTER (WHERE NOT cache_hit), count(DISTINCT cache_key) FROM llm_calls"
    ).fetchone()
    assert n_calls >= n_instances
    assert n_uncached == n_keys  # a call is made once; repeats (shared RAG queries) are cache hits
    tool_calls = con.execute("SELECT method, mode, count(*) FROM tool_calls GROUP BY ALL ORDER BY 1").fetchall()
    assert [(m, mode) for m, mode, _ in tool_calls] == [
        ("rag", "enforced"), ("rag_unrestricted", "unrestricted"), ("timespec", "enforced")]
    assert con.execute("SELECT count(*) FROM metrics WHERE metric = 'tclr'").fetchone()[0] == 3
    # supervised methods: the final answer is the aggregator's, after a supervision step
    traces = con.execute("SELECT method, trace FROM completions WHERE method IN ('self_correction', 'timespec')").fetchall()
    assert {m for m, _ in traces} == {"self_correction", "timespec"}
    for _, trace in traces:
        steps = [s["step"] for s in __import__("json").loads(trace)]
        assert "supervise" in steps and steps[-1] == "aggregate"
    # Shapley-DCLR: within the budget, efficient, rendered
    shap = con.execute("SELECT * FROM shapley").df()
    if len(shap):
        assert (shap["n_calls"] <= 8).all()
        phi = con.execute("SELECT instance_id, method, sum(phi) AS s FROM claim_shapley GROUP BY ALL").df()
        merged = phi.merge(shap, on=["instance_id", "method"])
        assert ((merged["s"] - (merged["v_all"] - merged["v_empty"])).abs() < 1e-9).all()
    assert "Shapley-DCLR" in (work / "results" / "tables" / "dclr.md").read_text()
    # calibration on planted claims, per task and layer set
    cal = con.execute("SELECT DISTINCT task, layers FROM calibration").fetchall()
    assert ("stock", "grounded+rules") in cal and ("legal", "rules") in cal
    assert "control" in (work / "results" / "tables" / "calibration.md").read_text().lower()
    assert "Enforcement effect" in (work / "results" / "tables" / "enforcement.md").read_text()
    # the probes: temporal_hint again on neutered and date-shifted instances, paired with its own answers
    probes = con.execute("SELECT task, probe, status, reason FROM probe_scores").df()
    assert set(probes["probe"]) == {"neutered", "date_shift"} and set(probes["task"]) == tasks
    assert set(probes["status"]) <= {"paired", "skipped"} and probes.loc[probes["status"] == "skipped", "reason"].notna().all()
    shifted = con.execute("SELECT p.probe_cutoff_date, c.cutoff_date FROM probe_scores p JOIN completions c ON "
                          "c.method = 'temporal_hint@date_shift' AND c.task = p.task AND c.instance_id = p.instance_id "
                          "WHERE p.probe = 'date_shift' AND p.status = 'paired'").fetchall()
    assert shifted and all(a == b for a, b in shifted)  # the shifted run answered as of the shifted cutoff
    assert con.execute("SELECT count(*) FROM main_table WHERE method LIKE '%@%'").fetchone()[0] == 0
    assert "Probes" in (work / "results" / "tables" / "probes.md").read_text()
    clean = con.execute("SELECT status FROM clean_scores").df()
    assert len(clean) and set(clean["status"]) <= {"kept", "asked", "empty_evidence", "invalid_answer", "unparsed"}
    assert (work / "results" / "datasets" / "report.md").read_text().count("VIOLATION") == 0
    assert (work / "data" / "raw" / "edgar" / "data.parquet").exists()
    con.close()


def test_html_report_shows_every_table_and_figure(workflow_run, tmp_path):
    """`snakemake --report` builds, and in headless Chromium every table and figure renders (where a
    browser is installed: anachron.report.htmlcheck)."""
    work = workflow_run
    report = work / "results" / "report.html"
    built = _snakemake(work, "--report", str(report))
    assert built.returncode == 0, built.stderr[-3000:]
    text = report.read_text()
    expected = [f"results/tables/{n}.html" for n in TABLE_NAMES] + [f"results/figures/{n}.png" for n in FIGURE_NAMES]
    assert all(f'"{name}"' in text for name in expected)
    pytest.importorskip("playwright", reason="playwright is not installed")
    try:
        htmlcheck.find_chromium()
    except FileNotFoundError:
        pytest.skip("no Chromium binary")
    checks = htmlcheck.check_report(report, tmp_path / "shots", expected=expected)
    assert [c for c in checks if c.problems] == [], htmlcheck.summary(checks)
    assert len(checks) == len(expected)


def test_rerun_is_a_no_op_and_forced_rerun_hits_the_cache(workflow_run):
    work = workflow_run
    dry = _snakemake(work, "-n")
    assert dry.returncode == 0
    assert "Nothing to be done" in dry.stdout + dry.stderr
    runs = [(t, "temporal_hint") for t in ("stock", "salary", "legal", "forecast")]
    runs += [("stock", m) for m in ("rag", "rag_unrestricted", "self_correction", "timespec")]
    # answers that did not parse are not cached as final: a re-run asks those instances again, so
    # only instances whose every step parsed must be served wholly from the cache
    parsed = {}
    for task, method in runs:
        run = pd.read_parquet(work / "results" / "runs" / task / method / "smollm2.parquet")
        clean = [all(st.get("parse_status", "ok") in EVIDENCE_USABLE for st in json.loads(t)) for t in run["trace"]]
        parsed[task, method] = set(run.loc[clean, "instance_id"])
    forced = _snakemake(work, "--forcerun", "run_method")
    assert forced.returncode == 0, forced.stderr[-3000:]
    n_served = 0
    for task, method in runs:
        calls = pd.read_parquet(work / "results" / "runs" / task / method / "smollm2.calls.parquet")
        done = calls[calls["instance_id"].isin(parsed[task, method])]
        assert done["cache_hit"].all(), (task, method)
        n_served += len(done)
    assert n_served >= len(runs)
