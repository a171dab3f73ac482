import json

import duckdb
import pandas as pd
import pytest

from anachron.metrics.derived import derive_with
from anachron.cli import main
from anachron.report.render import format_main, main_table
from anachron.store import TABLES
from anachron.store.load import write_database


@pytest.fixture()
def db(tmp_path):
    inst = pd.DataFrame([{"instance_id": f"i{k}", "task": "stock", "split": "eval", "cutoff_date": "2019-11-30",
                          "inputs": "{}", "label": "{}", "provenance": "{}"} for k in range(3)])
    scores = pd.DataFrame([{"task": "stock", "method": "temporal_hint", "model": "m", "split": "eval",
                            "instance_id": f"i{k}", "parse_status": "ok", "parsed": True, "n_claims": 2,
                            "n_leaked": k % 2, "n_undated": int(k == 0), "n_ambiguous": 0, "n_declared_only": k,
                            "olr": (k % 2) / 2, "olr_strict": (k % 2 + int(k == 0)) / 2, "perf": 0.5 + 0.1 * k,
                            "n_evidence": 2, "n_cited": 2, "cov": 1.0} for k in range(3)])
    paths = {}
    runs = inst[["instance_id", "task", "split", "cutoff_date"]].assign(method="temporal_hint", model="m", parse_status="ok")
    for name, df in {"instances": inst, "scores": scores, "runs": runs,
                     "calls": pd.DataFrame([{"cache_key": "k", "cache_hit": True}]),
                     "claims": pd.DataFrame([{"claim_id": "i0:1", "leaked": False}])}.items():
        paths[name] = tmp_path / f"{name}.parquet"
        df.to_parquet(paths[name])
    meta = tmp_path / "meta.json"
    meta.write_text(json.dumps({"task": "stock", "method": "temporal_hint", "model": "m", "n_llm_calls": 1}))
    out = tmp_path / "results.duckdb"
    counts = write_database(out, instances=[paths["instances"]], run_meta=[meta], completions=[paths["runs"]],
                            llm_calls=[paths["calls"]], claims=[paths["claims"]],
                            instance_scores=[paths["scores"]], derive=derive_with({"n_resamples": 200}))
    assert counts["instances"] == 3 and counts["metrics"] == 8
    return out


def test_database_tables_and_view(db):
    con = duckdb.connect(str(db), read_only=True)
    names = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    assert set(TABLES) <= names and "main_table" in names
    olr = con.execute("SELECT olr, olr_n FROM main_table").fetchone()
    assert olr == (pytest.approx(1 / 6), 3)
    strict, declared_only = con.execute("SELECT olr_strict, declared_only_rate FROM main_table").fetchone()
    assert strict == pytest.approx(1 / 3) and declared_only == pytest.approx(3 / 6)
    table = format_main(main_table(con))
    con.close()
    row = table.iloc[0]
    assert row["OLR % [95% CI]"].startswith("16.7 [") and row["strict OLR % [95% CI]"].startswith("33.3 [")
    assert row["declared-only % [95% CI]"].startswith("50.0 [")
    assert list(table.columns).index("strict OLR % [95% CI]") == list(table.columns).index("n (OLR)") + 1
    assert not list(db.parent.glob(".results.duckdb*"))  # no temp files left


def test_instance_scores_written_before_strict_olr_still_load(tmp_path):
    """Old score files (no olr_strict / n_ambiguous / n_declared_only) load as NULL; the metrics then have n = 0."""
    old = pd.DataFrame([{"task": "stock", "method": "temporal_hint", "model": "m", "split": "eval", "instance_id": "i0",
                         "parse_status": "ok", "parsed": True, "n_claims": 1, "n_leaked": 0, "n_undated": 0, "olr": 0.0,
                         "perf": 0.5, "n_evidence": 1, "n_cited": 0, "cov": 0.0}])
    old.to_parquet(tmp_path / "scores.parquet")
    out = tmp_path / "results.duckdb"
    write_database(out, instances=[], run_meta=[], completions=[], llm_calls=[], claims=[],
                   instance_scores=[tmp_path / "scores.parquet"], derive=derive_with({"n_resamples": 50}))
    con = duckdb.connect(str(out), read_only=True)
    got = dict(con.execute("SELECT metric, n FROM metrics").fetchall())
    table = format_main(main_table(con))
    con.close()
    assert got["olr"] == 1 and got["olr_strict"] == 0 and got["declared_only_rate"] == 1
    assert table.iloc[0]["strict OLR % [95% CI]"] == "–"


def test_cli_query_is_read_only(db, capsys):
    assert main(["query", "SELECT count(*) AS n FROM instances", "--db", str(db), "--format", "csv"]) == 0
    assert capsys.readouterr().out.strip().splitlines() == ["n", "3"]
    assert main(["query", "DELETE FROM instances", "--db", str(db)]) == 2
    assert "read-only" in capsys.readouterr().err.lower()


def test_cli_summary_and_missing_db(db, tmp_path, capsys):
    assert main(["summary", "--db", str(db)]) == 0
    assert "temporal_hint" in capsys.readouterr().out
    assert main(["summary", "--db", str(tmp_path / "nope.duckdb")]) == 1
    assert "snakemake" in capsys.readouterr().err


def test_cli_help(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert "query" in out and "show" in out and "summary" in out and "results.duckdb" in out


def test_summary_lists_flagged_tool_calls_and_trace_metrics_load(tmp_path, capsys):
    """Flag reasons are stored in ``tool_calls`` and listed by ``anachron summary``; undefined rates are NULL."""
    from anachron.retrieval.trace import score_call
    from anachron.retrieval.search import SearchHit, validity_index

    def hit(doc_id, day, ticker, restates=None):
        return SearchHit(doc_id=doc_id, title=doc_id, snippet="", published_at=day, score=1.0, source="t",
                         entities=(f"ticker:{ticker}",), restates=restates)

    cutoff = pd.Timestamp("2021-06-01").date()
    validity = validity_index(pd.DataFrame([{"entity": "ticker:OLD", "valid_from": None, "valid_to": "2021-06-01"}]))
    calls = []
    for iid, hits in (("i0", [hit("d1", "2021-02-04", "DLT"), hit("d2", "2021-09-17", "DLT", restates="d1")]),
                      ("i1", [hit("d3", "2021-05-01", "OLD")]), ("i2", [])):
        calls.append({"task": "stock", "method": "rag", "model": "m", "instance_id": iid, "seq": 0, "query": "q",
                      "mode": "enforced", "cutoff_date": "2021-06-01", "query_intent_after_cutoff": False,
                      "error": None, **score_call(hits, cutoff, validity=validity)})
    pd.DataFrame(calls).to_parquet(tmp_path / "calls.parquet")
    runs = pd.DataFrame([{"instance_id": f"i{k}", "task": "stock", "split": "eval", "method": "rag", "model": "m",
                          "parse_status": "ok"} for k in range(4)])  # i3 made no search call
    runs.to_parquet(tmp_path / "runs.parquet")
    runs.assign(parsed=True, n_claims=0, n_leaked=0, olr=0.0, perf=0.5, cov=1.0).drop(columns="parse_status").to_parquet(
        tmp_path / "scores.parquet")
    out = tmp_path / "results.duckdb"
    write_database(out, instances=[], run_meta=[], completions=[tmp_path / "runs.parquet"], llm_calls=[], claims=[],
                   instance_scores=[tmp_path / "scores.parquet"], tool_calls=[tmp_path / "calls.parquet"],
                   derive=derive_with({"n_resamples": 50}))
    con = duckdb.connect(str(out), read_only=True)
    metrics = {m: (v, n) for m, v, n in con.execute("SELECT metric, value, n FROM metrics").fetchall()}
    reasons = dict(con.execute("SELECT instance_id, flag_reason FROM tool_calls").fetchall())
    con.close()
    assert metrics["tclr"] == (pytest.approx(0.25), 4) and metrics["tclr_tool_using"] == (pytest.approx(1 / 3), 3)
    assert metrics["survivorship"] == (1.0, 1)  # only i1 returned an entity the validity table knows
    assert reasons["i2"] is None
    assert reasons["i1"] == "entity ticker:OLD (doc d3) no longer valid at 2021-06-01 (removed 2021-06-01)"
    assert main(["summary", "--db", str(out)]) == 0
    text = capsys.readouterr().out
    assert "Flagged tool calls: 2 of 3" in text
    assert "stock/rag/m i0 #0: restatement d2 dated 2021-09-17 > 2021-06-01 revises d1" in text
    assert main(["summary", "--db", str(out), "--format", "csv"]) == 0
    assert "Flagged" not in capsys.readouterr().out  # machine-readable formats print the table only


def test_format_main_tolerates_missing_counts():
    import numpy as np
    import pandas as pd

    row = {c: np.nan for c in ["n", "olr", "olr_ci_low", "olr_ci_high", "olr_n", "olr_strict", "olr_strict_ci_low", "olr_strict_ci_high",
                               "declared_only_rate", "declared_only_rate_ci_low", "declared_only_rate_ci_high", "perf", "perf_ci_low",
                               "perf_ci_high", "perf_n", "cov", "parse_rate"]}
    row.update(task="stock", method="rag", model="m", split="eval", n=4)
    out = format_main(pd.DataFrame([row]).astype({"perf_n": "Int64", "olr_n": "Int64"}))
    assert out.loc[0, "n"] == 4 and out.loc[0, "n (Perf)"] == 0 and out.loc[0, "n (OLR)"] == 0
