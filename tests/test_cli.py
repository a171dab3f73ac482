"""``anachron show``: the list of runs, one instance as a case study (text and JSON), bad input.

Built on the shared fixture database (tests/results_fixture.py). :func:`_frames` adds, in this
file only, what the scenario lacks for a case study: two reasoning claims and a reasoning with
citations on ``stock/rag_unrestricted/m1`` instance ``stock-2``, one leaked reasoning claim on
``stock/rag/m1`` instance ``stock-0``, and a supervisor trace of the real shape on
``stock/timespec/m1`` instance ``stock-1``.
"""

from __future__ import annotations

import json

import duckdb
import pandas as pd
import pytest
from results_fixture import scenario, write_results_db

from anachron.cli import main
from anachron.report.case import WIDTH, case_study, case_text

RUN_KEYS = ("task", "method", "model")


def _row_of(df: pd.DataFrame, **match) -> int:
    hit = df.index[(df[list(match)] == pd.Series(match)).all(axis=1)]
    assert len(hit) == 1, match
    return hit[0]


def _frames() -> dict:
    f = scenario()
    claims, comps, scores = f["claims"], f["completions"], f["instance_scores"]
    ru = {"task": "stock", "method": "rag_unrestricted", "model": "m1"}
    base = claims.loc[_row_of(claims, **ru, claim_id="stock-2:e1")].to_dict()
    extra = [
        {**base, "claim_id": "stock-2:r1", "source": "reasoning", "evidence_id": None,
         "fact": "Sales jumped in March 2021", "declared_date_raw": None, "declared_date": None,
         "date_status": "undated", "effective_date": "2021-03-01", "leaked": True, "verdict": "leaked",
         "layer": "rules", "reason": "dated from the text (mentions month 'March 2021')", "cited": False},
        {**base, "claim_id": "stock-2:r2", "source": "reasoning", "evidence_id": None,
         "fact": "Margins held through late 2019 or 2020", "declared_date_raw": None, "declared_date": None,
         "date_status": "undated", "effective_date": None, "leaked": False, "verdict": "ambiguous",
         "layer": "rules", "reason": "the period straddles the cutoff", "cited": False},
    ]
    rag = {"task": "stock", "method": "rag", "model": "m1"}
    rbase = claims.loc[_row_of(claims, **rag, claim_id="stock-0:e1")].to_dict()
    extra.append({**rbase, "claim_id": "stock-0:r1", "source": "reasoning", "evidence_id": None,
                  "fact": "Orders doubled in 2022", "leaked": True, "verdict": "leaked", "layer": "rules",
                  "reason": "dated from the text (mentions year '2022')", "effective_date": "2022-01-01"})
    f["claims"] = pd.concat([claims, pd.DataFrame(extra)], ignore_index=True)
    comps.loc[_row_of(comps, **ru, instance_id="stock-2"), "reasoning"] = (
        "Because [2], answer 0. Sales jumped in March 2021 [1]. Margins held through late 2019 or 2020 [9].")
    i = _row_of(scores, **ru, instance_id="stock-2")
    scores.loc[i, ["n_reasoning_claims", "n_reasoning_leaked"]] = [2, 1]
    i = _row_of(scores, **rag, instance_id="stock-0")
    scores.loc[i, ["n_reasoning_claims", "n_reasoning_leaked"]] = [1, 1]
    trace = [
        {"step": "generate", "cache_key": "k1", "parse_status": "ok"},
        {"step": "supervise", "extractor": "deterministic", "n_claims": 2, "n_flagged": 1, "claims": [
            {"text": "The company beat estimates in February 2020", "category": "A4", "source": "evidence",
             "flagged": True, "effective_date": None, "how": "taxonomy",
             "reason": "category A4: the outcome or its consequence", "cached": False},
            {"text": "Revenue rose in 2018", "category": "A1", "source": "reasoning", "flagged": False,
             "effective_date": "2018-03-01", "how": "search",
             "reason": "earliest supporting document doc-7 dated 2018-03-01", "cached": False}]},
        {"step": "regenerate", "cache_key": "k2", "parse_status": "ok", "n_avoided": 1},
        {"step": "resupervise", "extractor": "deterministic", "n_claims": 1, "n_flagged": 0, "claims": [
            {"text": "Revenue rose in 2018", "category": "A1", "source": "reasoning", "flagged": False,
             "effective_date": "2018-03-01", "how": "search", "reason": "cached", "cached": True}]},
        {"step": "aggregate", "cache_key": "k3", "parse_status": "ok", "n_facts": 1},
    ]
    ts = {"task": "stock", "method": "timespec", "model": "m1"}
    comps.loc[_row_of(comps, **ts, instance_id="stock-1"), "trace"] = json.dumps(trace)
    return f


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    return write_results_db(tmp_path_factory.mktemp("show"), _frames())


def _show(capsys, *args: str) -> tuple[int, str, str]:
    rc = main(["show", *args])
    cap = capsys.readouterr()
    return rc, cap.out, cap.err


def _line(text: str, needle: str) -> str:
    hits = [ln for ln in text.splitlines() if needle in ln]
    assert len(hits) == 1, (needle, hits)
    return hits[0]


def test_leaked_claims_are_marked_on_their_lines(db, capsys):
    rc, out, _ = _show(capsys, "stock/temporal_hint/m1", "stock-0", "--db", str(db))
    assert rc == 0
    claims = out.split("Claims (")[1].split("Reasoning (")[0]
    for k in (1, 2):
        assert _line(claims, f"stock fact {k} of instance 0").lstrip().startswith("[LEAKED]")
    assert _line(claims, "stock fact 3 of instance 0").lstrip().startswith("[ok]")
    assert _line(claims, "stock fact 4 of instance 0").lstrip().startswith("[UNDATED]")
    assert "Cutoff date: 2020-01-01" in out
    assert "declared 2021-03-01 (dated); effective 2021-03-01; cutoff 2020-01-01" in out
    assert "leaked by the rules layer: dated 2021-03-01, after the cutoff 2020-01-01" in out
    assert "Perf 0.600   OLR 0.500   strict OLR 0.750" in out
    assert 'truth (label): {"answer": 0}' in out and "prediction: 0" in out
    assert "Other instances" not in out  # the instance was given
    assert "Retrieval trace" not in out  # temporal_hint does not search
    assert max(len(ln) for ln in out.splitlines()) <= WIDTH


def test_default_instance_is_the_most_leaked(db, tmp_path, capsys):
    rc, out, _ = _show(capsys, "stock/rag_unrestricted/m1", "--db", str(db))
    assert rc == 0
    # stock-0 and stock-2 both have OLR 0.5; stock-2 has a leaked reasoning claim more
    assert out.startswith("Case study: stock/rag_unrestricted/m1, instance stock-2 (eval split)")
    assert "the most leaked claims (3)" in out
    others = out.split("Other instances of stock/rag_unrestricted/m1 (5)")[1]
    ids = [ln.split()[0] for ln in others.splitlines() if ln.startswith("  stock-")]
    assert ids == ["stock-0", "stock-1", "stock-3", "stock-4", "stock-5"]  # eval first, most leaked first
    # ties on leaked claims go to the higher OLR: stock-2 (OLR 0.25) over stock-0 (OLR 0, one reasoning leak)
    assert _show(capsys, "stock/rag/m1", "--db", str(db))[1].startswith("Case study: stock/rag/m1, instance stock-2")
    # ties on leaked claims and OLR go to the smaller id (the plain scenario: stock-0 and stock-2)
    plain = write_results_db(tmp_path / "plain")
    assert "instance stock-0 (eval split)" in _show(capsys, "stock/rag_unrestricted/m1", "--db", str(plain))[1]


def test_reasoning_citations_are_resolved(db, capsys):
    out = _show(capsys, "stock/rag_unrestricted/m1", "stock-2", "--db", str(db))[1]
    reasoning = out.split("Reasoning (")[1].split("Retrieval trace")[0]
    assert "[2] -> [LEAKED] stock fact 2 of instance 2 (reported after the cutoff)" in reasoning
    assert "[1] -> [LEAKED] stock fact 1 of instance 2 (reported after the cutoff)" in reasoning
    assert "[9] -> no evidence item with this id" in reasoning
    assert _line(reasoning, "Sales jumped").lstrip().startswith("[LEAKED]")  # the reasoning claim's verdict
    assert _line(reasoning, "Margins held").lstrip().startswith("[AMBIGUOUS]")
    claims = out.split("Claims (")[1].split("Reasoning (")[0]
    assert _line(claims, "reasoning r1").lstrip().startswith("[LEAKED]")
    assert "declared none (undated); effective 2021-03-01" in claims


def test_json_has_claims_with_verdicts_and_dates(db, capsys):
    rc, out, _ = _show(capsys, "stock/temporal_hint/m1", "stock-0", "--db", str(db), "--format", "json")
    assert rc == 0
    doc = json.loads(out)
    assert doc["run"]["model_id"] == "mock/m1" and doc["instance"]["cutoff_date"] == "2020-01-01"
    assert doc["instance"]["label"] == {"answer": 0} and doc["completion"]["prediction"] == 0
    by_fact = {c["fact"]: c for c in doc["claims"]}
    leaked = by_fact["stock fact 1 of instance 0 (reported after the cutoff)"]
    assert (leaked["verdict"], leaked["mark"], leaked["layer"]) == ("leaked", "[LEAKED]", "rules")
    assert (leaked["declared_date_raw"], leaked["declared_date"], leaked["effective_date"]) == ("2021-03-01",) * 3
    undated = by_fact["stock fact 4 of instance 0"]
    assert undated["verdict"] == "undated" and undated["declared_date"] is None
    assert [c["verdict"] for c in doc["claims"]].count("leaked") == 2
    assert doc["scores"]["olr"] == 0.5 and doc["scores"]["olr_strict"] == 0.75
    assert doc["retrieval"] is None and doc["chosen_by"] == "given"
    assert doc["llm_calls"]["n_calls"] == 1 and doc["llm_calls"]["prompt_tokens"] == 1000


def test_retrieval_trace_lists_the_flagged_call(db, capsys):
    out = _show(capsys, "stock/rag_unrestricted/m1", "stock-1", "--db", str(db))[1]
    trace = out.split("Retrieval trace (2 search calls, 1 flagged):")[1].split("Method steps")[0]
    second = trace.split("#1")[1]
    assert "consumed 1 of 2 returned: doc-1-1; not consumed: doc-late-1" in second
    assert "FLAGGED: returned 1 document dated after the cutoff" in second
    assert "FLAGGED" not in trace.split("#1")[0]
    doc = json.loads(_show(capsys, "stock/rag_unrestricted/m1", "stock-1", "--db", str(db), "--format", "json")[1])
    calls = doc["retrieval"]["calls"]
    assert [c["flag_reason"] for c in calls] == [None, "returned 1 document dated after the cutoff"]
    assert calls[1]["after_cutoff"] == ["doc-late-1"] and doc["retrieval"]["scores"]["tclr"] == 0.5


def test_supervised_steps_show(db, capsys):
    out = _show(capsys, "stock/timespec/m1", "stock-1", "--db", str(db))[1]
    steps = out.split("Method steps (the supervisor's verdicts under supervise):")[1].split("LLM calls")[0]
    names = [ln.split(".", 1)[1].split(":")[0].strip() for ln in steps.splitlines() if ln[:5].strip().rstrip(".").isdigit()]
    assert names == ["generate", "supervise", "regenerate", "resupervise", "aggregate"]
    assert _line(steps, "beat estimates").lstrip().startswith("[FLAGGED]")
    assert "not dated (taxonomy): category A4: the outcome or its consequence" in steps
    assert "dated 2018-03-01 by search (cached): cached" in steps
    assert "n_avoided 1" in steps and "cache_key" not in steps
    assert "LLM calls (2; 2000 prompt + 400 completion tokens; cache hits 0; 3.0 s):" in out
    doc = case_study(duckdb.connect(str(db), read_only=True), "stock", "timespec", "m1", "stock-1")
    assert doc["supervised"] and [s["step"] for s in doc["steps"]][1] == "supervise"
    assert doc["retrieval"] == {"n_calls": 0, "n_flagged": 0, "scores": None, "calls": [], "available": True}


def test_list_without_arguments(db, capsys):
    rc, out, _ = _show(capsys, "--db", str(db))
    assert rc == 0
    head = _line(out, "with leak").split()
    assert head == ["run", "eval", "control", "parse", "mean", "OLR", "with", "leak"]
    assert _line(out, "stock/rag_unrestricted/m1 ").split() == ["stock/rag_unrestricted/m1", "4", "2", "100%", "0.250", "4"]
    assert _line(out, "legal/timespec/m1 ").split() == ["legal/timespec/m1", "4", "2", "100%", "0.000", "0"]
    assert "anachron show stock/temporal_hint/m2 " in out and "anachron summary" in out
    assert max(len(ln) for ln in out.splitlines()) <= WIDTH
    doc = json.loads(_show(capsys, "--db", str(db), "--format", "json")[1])
    assert len(doc["runs"]) == 8 and doc["missing"] == []
    run = next(r for r in doc["runs"] if (r["task"], r["method"], r["model"]) == ("stock", "rag", "m1"))
    assert run["splits"] == {"eval": 4, "control": 2} and run["n_with_leak"] == 2  # stock-2; stock-0 by its reasoning
    assert run["mean_olr"] == pytest.approx(0.25 / 6)


def test_unknown_run_and_instance(db, tmp_path, capsys):
    rc, out, err = _show(capsys, "stock/rag/m9", "--db", str(db))
    assert rc == 2 and out == ""
    assert f"no run stock/rag/m9 in {db}" in err and "stock/rag/m1, stock/rag_unrestricted/m1" in err
    assert "run.models" in err and "snakemake --cores N" in err
    rc, _, err = _show(capsys, "stock/rag/m1", "stock-9", "--db", str(db))
    assert rc == 2 and "no instance 'stock-9' in run stock/rag/m1" in err and "stock-0, stock-1" in err
    rc, _, err = _show(capsys, "stock/rag", "--db", str(db))
    assert rc == 2 and "TASK/METHOD/MODEL" in err
    missing = tmp_path / "nope.duckdb"
    rc, _, err = _show(capsys, "stock/rag/m1", "--db", str(missing))
    assert rc == 1 and str(missing) in err and "snakemake" in err
    empty = write_results_db(tmp_path / "empty", {})
    rc, out, _ = _show(capsys, "--db", str(empty))
    assert rc == 0 and out.startswith(f"No runs in {empty}")


def _older(tmp_path, *statements: str):
    """The fixture database with ``statements`` applied (what an older version wrote)."""
    path = write_results_db(tmp_path, _frames())
    con = duckdb.connect(str(path))
    for s in statements:
        con.execute(s)
    con.close()
    return path


def test_older_database_names_what_is_missing(tmp_path, capsys):
    db = _older(tmp_path / "a", "DROP TABLE tool_calls", "DROP TABLE claims")
    rc, out, _ = _show(capsys, "stock/rag_unrestricted/m1", "stock-2", "--db", str(db))
    assert rc == 0
    flat = " ".join(out.split())
    assert "table tool_calls (the retrieval trace)" in flat and "table claims (verdicts)" in flat
    assert "Rebuild it from the run outputs with this version: snakemake --forcerun load_results\n" in out
    # the evidence items of the completion stand in for the claims, without verdicts
    assert _line(out.split("Reasoning (")[0], "stock fact 1 of instance 2").lstrip().startswith("[?]")
    assert "Perf 0.700   OLR 0.500" in out and "Retrieval trace: not in this database (table tool_calls)" in out
    out = " ".join(_show(capsys, "stock/temporal_hint/m1", "--db", str(db))[1].split())
    assert "table claims (verdicts)" in out and "tool_calls" not in out  # temporal_hint does not search

    db = _older(tmp_path / "b", "ALTER TABLE tool_calls DROP COLUMN flag_reason", "DROP TABLE instance_scores")
    rc, out, _ = _show(capsys, "stock/rag_unrestricted/m1", "--db", str(db))
    assert rc == 0 and "column tool_calls.flag_reason" in out and "table instance_scores" in " ".join(out.split())
    assert "FLAGGED" not in out and "Retrieval trace (2 search calls" in out
    rc, out, _ = _show(capsys, "--db", str(db))
    assert rc == 0 and _line(out, "stock/rag/m1 ").split() == ["stock/rag/m1", "4", "2", "100%", "–", "–"]
    assert "table instance_scores" in " ".join(out.split())


def test_case_text_wraps_long_content(db):
    con = duckdb.connect(str(db), read_only=True)
    doc = case_study(con, "legal", "temporal_hint", "m1")
    con.close()
    doc["claims"][0]["fact"] = "word " * 60
    doc["reasoning"]["sentences"][0]["text"] = "A long sentence " * 20
    lines = case_text(doc).splitlines()
    assert max(len(ln) for ln in lines) <= WIDTH
    assert doc["instance"]["instance_id"] == "legal-0"  # OLR 1.0, four leaked claims


def test_show_help_has_examples(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["show", "--help"])
    out = capsys.readouterr().out
    assert exc.value.code == 0 and "[LEAKED]" in out and "TASK/METHOD/MODEL" in out
    assert "anachron show stock/rag_unrestricted/smollm2" in out and "--format json" in out


def test_show_sets_the_probe_answers_and_perf_clean_beside_the_answer(tmp_path, capsys):
    f = _frames()
    comps = f["completions"]
    mine = comps[(comps["task"] == "stock") & (comps["method"] == "temporal_hint") & (comps["model"] == "m1")]
    probe = mine.assign(method="temporal_hint@neutered", reasoning="Company A is surely CYGR [1].")
    f["completions"] = pd.concat([comps, probe], ignore_index=True)
    db = write_results_db(tmp_path, f)
    rc, out, _ = _show(capsys, "stock/temporal_hint/m1", "stock-0", "--db", str(db))
    flat = " ".join(out.split())
    assert rc == 0 and "Side by side" in out
    assert "neutered cutoff 2020-01-01 parse ok prediction 0 Perf 0.500 OLR 0.000; names the entity: CYGR" in flat
    assert "prediction changed: yes" in flat.split("date_shift cutoff")[1]
    assert "perf_clean 0.300 (asked)" in flat
    rc, out, _ = _show(capsys, "stock/temporal_hint/m1", "stock-3", "--db", str(db))
    assert "neutered skipped: names_are_common_words" in " ".join(out.split())
    rc, out, _ = _show(capsys, "stock/rag/m1", "stock-0", "--db", str(db))
    assert "Side by side" not in out  # no probe and no perf_clean for this run
