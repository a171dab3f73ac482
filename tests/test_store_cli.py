import json

import duckdb
import pandas as pd
import pytest

from anachron.cli import main
from anachron.store import TABLES
from anachron.store.load import write_database


@pytest.fixture()
def db(tmp_path):
    inst = pd.DataFrame([{"instance_id": f"i{k}", "task": "stock", "split": "eval", "cutoff_date": "2019-11-30",
                          "inputs": "{}", "label": "{}", "provenance": "{}"} for k in range(3)])
    scores = pd.DataFrame([{"task": "stock", "method": "temporal_hint", "model": "m", "split": "eval",
                            "instance_id": f"i{k}", "parse_status": "ok", "parsed": True, "n_claims": 2,
                            "n_leaked": k % 2, "n_undated": 0, "olr": (k % 2) / 2, "perf": 0.5 + 0.1 * k,
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
                            instance_scores=[paths["scores"]], bootstrap={"n_resamples": 200})
    assert counts["instances"] == 3 and counts["metrics"] == 5
    return out


def test_database_tables_and_view(db):
    con = duckdb.connect(str(db), read_only=True)
    names = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    assert set(TABLES) <= names and "main_table" in names
    olr = con.execute("SELECT olr, olr_n FROM main_table").fetchone()
    assert olr == (pytest.approx(1 / 6), 3)
    con.close()
    assert not list(db.parent.glob(".results.duckdb*"))  # no temp files left


def test_cli_query_is_read_only(db, capsys):
    assert main(["query", "SELECT count(*) AS n FROM instances", "--db", str(db), "--format", "csv"]) == 0
    assert capsys.readouterr().out.strip().splitlines() == ["n", "3"]
    assert main(["query", "DELETE FROM instances", "--db", str(db)]) == 2
    assert "read-only" in capsys.readouterr().err.lower()


def test_cli_show_and_missing_db(db, tmp_path, capsys):
    assert main(["show", "--db", str(db)]) == 0
    assert "temporal_hint" in capsys.readouterr().out
    assert main(["show", "--db", str(tmp_path / "nope.duckdb")]) == 1
    assert "snakemake" in capsys.readouterr().err


def test_cli_help(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert "query" in out and "show" in out and "results.duckdb" in out
