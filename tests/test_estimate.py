"""`anachron estimate`: the call counts of the methods' patterns against real runs with the mock
provider, instances from datasets or the config, the comparison with a results database, the CLI."""

from __future__ import annotations

import json
import shutil
from collections import Counter

import duckdb
import numpy as np
import pandas as pd
import pytest

from anachron.cli import main
from anachron.config import load_config, validate_config
from anachron.estimate import (
    Assumptions,
    actual_usage,
    batched_calls,
    compare,
    estimate,
    prompt_tokens,
    retry_factor,
    summarize,
)
from anachron.llm.client import CallLog, LLMClient
from anachron.llm.providers import MockProvider
from anachron.llm.types import ChatResult, ModelSpec
from anachron.methods.rag import run_rag_enforced
from anachron.methods.supervised import run_self_correction, run_timespec
from anachron.methods.temporal_hint import run_temporal_hint
from anachron.metrics.shapley import n_value_calls, shapley_values
from anachron.tasks.stock import StockTask
from conftest import REPO
from fictional_corpus import FakeSearch, query_json, stock_row
from results_fixture import scenario, write_results_db

COMPANIES = [("CYGR", "Cygnet Robotics"), ("ESKF", "Eskerfield Foods")]
#: 3 instances cut off on one day, 2 on another: the date judge batches claims per cutoff.
CUTOFFS = ["2019-11-30"] * 3 + ["2020-02-28"] * 2
FIRST = [  # an answer with two A1-A3 claims, one public after every cutoff (flagged: regenerated)
    {"id": 1, "fact": "Cygnet Robotics opened a plant in Ohio in June 2019.", "source_date": "2019-06-10"},
    {"id": 2, "fact": "Cygnet Robotics announced a merger with Eskerfield Foods in June 2020.", "source_date": "2020-06-15"},
]
SECOND = [  # the regenerated answer: two new claims, none flagged
    {"id": 1, "fact": "Eskerfield Foods hired a new chief financial officer in May 2019.", "source_date": "2019-05-20"},
    {"id": 2, "fact": "Cygnet Robotics signed a supply deal with a railway operator in July 2019.", "source_date": "2019-07-02"},
]
SPEC = ModelSpec(name="m", model="mock/m", knowledge_cutoff="2023-01-01", concurrency=2, params={"max_tokens": 100})


def _answer(evidence) -> str:
    return json.dumps({"evidence": evidence, "reasoning": "See [1] and [2].", "prediction": ["CYGR", "ESKF"]})


def scripted(request) -> str | ChatResult:
    """Answers by step: the first answer has a flagged claim, the regenerated one two new clean
    claims; the date judge finds every date plausible; the llm extractor's answer is unusable."""
    step = request.tag.get("step")
    if step == "queries":
        return query_json("Cygnet Robotics plant 2019", "Eskerfield Foods dividend 2019", "railway orders 2019")
    if step == "plausibility":
        n = request.tag["n_items"]
        return json.dumps({"verdicts": [{"index": i, "plausible": True, "corrected_date": None, "reason": "fits"}
                                        for i in range(n)]})
    if step == "extract_claims":
        return "no claims today"
    return _answer(SECOND if step in ("regenerate", "aggregate") else FIRST)


@pytest.fixture()
def dataset(tmp_path):
    rows = pd.DataFrame([stock_row(f"s{i}", c, COMPANIES) for i, c in enumerate(CUTOFFS)])
    (tmp_path / "datasets").mkdir()
    rows.to_parquet(tmp_path / "datasets" / "stock.parquet", index=False)
    return rows


def small_config(methods: dict, **over) -> dict:
    cfg = {
        "run": {"tasks": ["stock"], "methods": list(methods), "models": ["m"], "splits": ["eval"], "sample": {}},
        "models": {"m": {"model": "mock/m", "knowledge_cutoff": "2023-01-01", "params": {"max_tokens": 100}}},
        "methods": json.loads(json.dumps(methods)),  # validation fills the defaults in place
        "shapley": {"tasks": []},
        "perf_clean": {"enabled": False},
        # the run patterns apart from the verifier's searches (the corpus layer's are counted below)
        "verify": {"layers": ["grounded", "rules"]},
        **over,
    }
    return validate_config(cfg)


def actual_steps(client: LLMClient) -> Counter:
    return Counter(r["step"] for r in client.call_log.records)


def estimated_steps(est, method: str) -> dict[str, float]:
    run = est.steps[(est.steps["stage"] == "run") & (est.steps["method"] == method)]
    return run.groupby("step")["calls"].sum().to_dict()


EXACT = Assumptions(claims_per_instance=2, flagged_share=1.0, retry_rate=0.0)


def test_temporal_hint_and_rag_patterns_match_their_runs(dataset, tmp_path):
    cfg = small_config({"temporal_hint": {}, "rag": {"queries_min": 3, "queries_max": 3}})
    est = estimate(cfg, tmp_path / "datasets", EXACT)
    client = LLMClient(SPEC, None, CallLog(), provider=MockProvider(SPEC, answers=scripted))
    run_temporal_hint(dataset, StockTask(), client, params={})
    assert estimated_steps(est, "temporal_hint") == dict(actual_steps(client)) == {"generate": 5}
    client = LLMClient(SPEC, None, CallLog(), provider=MockProvider(SPEC, answers=scripted))
    search = FakeSearch()
    _, tool_calls = run_rag_enforced(dataset, StockTask(), client, params={}, search=search, queries_min=3, queries_max=3)
    assert estimated_steps(est, "rag") == dict(actual_steps(client)) == {"queries": 5, "generate": 5}
    searches = est.searches.set_index("method").loc["rag", "searches"]
    assert searches == len(tool_calls) == len(search.calls) == 15


@pytest.mark.parametrize("extractor", ["deterministic", "llm"])
def test_self_correction_pattern_matches_its_run(dataset, tmp_path, extractor):
    settings = {"batch_size": 2, "extractor": extractor}
    est = estimate(small_config({"self_correction": settings}), tmp_path / "datasets", EXACT)
    client = LLMClient(SPEC, None, CallLog(), provider=MockProvider(SPEC, answers=scripted))
    run_self_correction(dataset, StockTask(), client, params={}, **settings)
    actual = actual_steps(client)
    # judge: round 1 holds 3 x 2 claims at one cutoff (3 batches of 2) and 2 x 2 at the other (2 batches),
    # round 2 the same for the two new claims of each regenerated answer
    expected = {"generate": 5, "plausibility": 10, "regenerate": 5, "aggregate": 5}
    if extractor == "llm":
        expected["extract_claims"] = 10
    assert dict(actual) == expected
    assert estimated_steps(est, "self_correction") == expected


def test_timespec_pattern_matches_its_run(dataset, tmp_path):
    settings = {"queries_min": 3, "queries_max": 3, "extractor": "deterministic"}
    est = estimate(small_config({"timespec": settings}), tmp_path / "datasets", EXACT)
    client = LLMClient(SPEC, None, CallLog(), provider=MockProvider(SPEC, answers=scripted))
    search = FakeSearch()
    _, tool_calls = run_timespec(dataset, StockTask(), client, params={}, search=search, **settings)
    assert dict(actual_steps(client)) == estimated_steps(est, "timespec") == {
        "queries": 5, "generate": 5, "regenerate": 5, "aggregate": 5}
    counts = est.searches.set_index("method").loc["timespec"]
    assert counts["searches"] == len(tool_calls) == 15
    unfiltered = sum(1 for _, _, as_of in search.calls if as_of is None)
    assert counts["claim_searches"] == unfiltered == 5 * 2 * 2  # 2 claims, 2 supervision rounds


def test_expected_retries_and_flagged_share_scale_the_counts(dataset, tmp_path):
    cfg = small_config({"self_correction": {"batch_size": 2, "extractor": "deterministic"}})
    est = estimate(cfg, tmp_path / "datasets", Assumptions(claims_per_instance=2, flagged_share=0.0, retry_rate=0.5))
    steps = estimated_steps(est, "self_correction")
    assert steps["generate"] == pytest.approx(5 * (1 + 0.5 + 0.25))  # asked again at most twice
    assert steps["plausibility"] == pytest.approx(5 * 1.5)  # the judge: once
    assert steps["regenerate"] == 0
    assert retry_factor(0, 0.9) == 1 and retry_factor(2, 0.1) == pytest.approx(1.11)
    assert batched_calls(None, 4, 3, 2) == 8  # unknown cutoffs: one group per instance
    assert batched_calls(["a", "a", "b"], 3, 3, 2) == 3 + 2


def test_shapley_calls_are_those_of_the_estimator(dataset, tmp_path):
    for n in range(0, 8):
        for budget in (2, 5, 16, 64):
            res = shapley_values(n, lambda m: np.atleast_2d(m).sum(1).astype(float), budget=budget, seed=0, exact_max=4)
            assert res.n_calls == n_value_calls(n, budget=budget, exact_max=4)
    cfg = small_config({"temporal_hint": {}}, shapley={"tasks": ["stock"], "sample": 2, "budget": 8,
                                                        "agreement_max_claims": 3})
    est = estimate(cfg, tmp_path / "datasets", Assumptions(claims_per_instance=3))
    row = est.steps[est.steps["stage"] == "shapley"].iloc[0]
    # 2 instances; 3 claims: 2^3 = 8 coalitions fit the budget, exact (no agreement run)
    assert row["instances"] == 2 and row["calls"] == 2 * 8
    est = estimate(cfg, tmp_path / "datasets", Assumptions(claims_per_instance=4))
    assert est.steps[est.steps["stage"] == "shapley"]["calls"].iloc[0] == 2 * 8  # Leverage SHAP: the budget


def test_perf_clean_and_probe_runs_are_counted(dataset, tmp_path):
    cfg = small_config({"temporal_hint": {}}, perf_clean={"sample": 2},
                       probes={"methods": ["temporal_hint"], "sample": 3})
    est = estimate(cfg, tmp_path / "datasets", EXACT)
    clean = est.steps[est.steps["stage"] == "perf_clean"]
    assert len(clean) == 1 and clean["instances"].iloc[0] == 2 and clean["calls"].iloc[0] == 2 * 2  # at most two asks
    for probe in ("neutered", "date_shift"):
        assert estimated_steps(est, f"temporal_hint@{probe}") == {"generate": 3.0}  # as the method calls, on its sample


def test_tokens_and_cost_from_rendered_prompts_and_prices(dataset, tmp_path):
    cfg = small_config({"temporal_hint": {}}, models={
        "m": {"model": "openai/m", "knowledge_cutoff": "2023-01-01", "params": {"max_tokens": 100}}},
        prices={"m": {"usd_per_million_input_tokens": 2.0, "usd_per_million_output_tokens": 10.0}})
    est = estimate(cfg, tmp_path / "datasets", Assumptions(retry_rate=0.0, completion_share=0.5))
    row = est.steps.iloc[0]
    per_prompt = np.mean([prompt_tokens(StockTask().messages(r)) for _, r in dataset.iterrows()])
    assert row["prompt_tokens"] == pytest.approx(5 * per_prompt)
    assert row["completion_tokens"] == 5 * 50
    assert row["cost_usd"] == pytest.approx((5 * per_prompt * 2.0 + 250 * 10.0) / 1e6)
    unpriced = estimate(small_config({"temporal_hint": {}}, models={
        "m": {"model": "openai/m", "knowledge_cutoff": "2023-01-01"}}), tmp_path / "datasets")
    assert unpriced.steps["cost_usd"].isna().all() and unpriced.steps["completion_tokens"].isna().all()
    assert any("no price for ['m']" in n for n in unpriced.notes)


def test_instances_follow_the_sample_and_without_a_dataset_the_config(dataset, tmp_path):
    cfg = small_config({"temporal_hint": {}, "rag": {"sample": 2}}, run={
        "tasks": ["stock", "legal"], "methods": ["temporal_hint", "rag"], "models": ["m"], "splits": ["eval", "control"],
        "sample": {"stock": 4, "legal": 3}})
    s = summarize(estimate(cfg, tmp_path / "datasets")).set_index(["task", "method"])
    assert s.loc[("stock", "temporal_hint"), "instances"] == 4 and s.loc[("stock", "rag"), "instances"] == 2
    assert s.loc[("stock", "rag"), "instances_basis"] == "dataset"
    # no legal dataset: at most the sample per split
    assert s.loc[("legal", "temporal_hint"), "instances"] == 3 * 2
    assert s.loc[("legal", "temporal_hint"), "instances_basis"] == "config, at most"
    assert np.isnan(s.loc[("legal", "temporal_hint"), "prompt_tokens"])
    default = load_config(REPO / "config" / "config.yaml")
    s = summarize(estimate(default, tmp_path / "empty")).set_index(["task", "stage", "method"])
    assert s.loc[("stock", "run", "temporal_hint"), "instances"] == 20  # the window's n, the sample 20
    assert s.loc[("salary", "run", "temporal_hint"), "instances"] == 10 * 2
    unknown = validate_config({"run": {"tasks": ["legal"], "methods": ["temporal_hint"], "models": ["smollm2"]}})
    s = summarize(estimate(unknown, tmp_path / "empty"))
    # the default verifier layers search the corpus: a verify stage of claim searches, no model calls
    assert s["stage"].tolist() == ["run", "verify", "shapley", "perf_clean"]
    assert s["instances_basis"].eq("unknown").all() and s.loc[s["stage"] != "verify", "calls"].isna().all()


def fixture_config() -> dict:
    return validate_config({
        "run": {"tasks": ["stock", "legal"], "methods": ["temporal_hint", "rag", "rag_unrestricted", "timespec"],
                "models": ["m1", "m2"], "splits": ["eval", "control"]},
        "methods": {"rag_unrestricted": {"tasks": ["stock"]}},
        "models": {"m1": {"model": "mock/m1", "knowledge_cutoff": "2021-01-01", "params": {"max_tokens": 200}},
                   "m2": {"model": "openai/m2", "knowledge_cutoff": "2021-01-01", "params": {"max_tokens": 200}}},
        "prices": {"m1": {"usd_per_million_input_tokens": 3.0, "usd_per_million_output_tokens": 15.0}},
        "shapley": {"tasks": []},
    })


@pytest.fixture()
def fixture_run(tmp_path):
    frames = scenario()
    (tmp_path / "datasets").mkdir()
    for task, df in frames["instances"].groupby("task"):
        df.to_parquet(tmp_path / "datasets" / f"{task}.parquet", index=False)
    db = write_results_db(tmp_path / "db", frames, prices={"m1": (3.0, 15.0)})
    return tmp_path, db


def test_comparison_with_a_run(fixture_run):
    tmp_path, db = fixture_run
    cfg = fixture_config()
    est = estimate(cfg, tmp_path / "datasets", Assumptions(retry_rate=0.0))
    con = duckdb.connect(str(db), read_only=True)
    actual, notes = actual_usage(con, cfg)
    assert notes == []
    # the fixture's instances are not real task inputs: no prompt to measure, said in a note
    assert any("do not render as stock prompts" in n for n in est.notes)
    cmp = compare(summarize(est), actual).set_index(["task", "stage", "method", "model"])
    th = cmp.loc[("stock", "run", "temporal_hint", "m1")]
    assert th["instances"] == 6 and th["calls_est"] == 6 == th["calls_actual"] and th["cache_hits"] == 2
    assert th["prompt_tokens_actual"] == 6000 and th["completion_tokens_actual"] == 1200
    assert th["completion_tokens_est"] == 6 * 200  # max_tokens: the upper bound
    assert th["cost_spent_usd"] == pytest.approx(4 * 0.006) and th["cost_all_usd"] == pytest.approx(6 * 0.006)
    rag = cmp.loc[("stock", "run", "rag", "m1")]
    assert rag["searches_actual"] == 12 and rag["searches_est"] == 6 * 12  # stock: at most 12 queries each
    m2 = cmp.loc[("stock", "run", "temporal_hint", "m2")]
    assert m2["calls_actual"] == 6 and np.isnan(m2["cost_all_usd"]) and np.isnan(m2["cost_usd_est"])
    assert np.isnan(cmp.loc[("legal", "run", "rag", "m2"), "calls_actual"])  # planned, not in the database
    # an older database without cost_usd: priced with the config's prices
    old = tmp_path / "old.duckdb"
    shutil.copy(db, old)
    w = duckdb.connect(str(old))
    w.execute("ALTER TABLE llm_calls DROP COLUMN cost_usd")
    w.close()
    old_actual, notes = actual_usage(duckdb.connect(str(old), read_only=True), cfg)
    assert "older version" in notes[0]
    pd.testing.assert_frame_equal(old_actual.sort_values(list(old_actual.columns[:4])).reset_index(drop=True),
                                  actual.sort_values(list(actual.columns[:4])).reset_index(drop=True))
    w = duckdb.connect(str(old))
    w.execute("DROP TABLE tool_calls")
    w.execute("DROP TABLE llm_calls")
    w.close()
    none, notes = actual_usage(duckdb.connect(str(old), read_only=True), cfg)
    assert not len(none) and "no llm_calls table" in notes[0]
    assert compare(summarize(est), none)["calls_actual"].isna().all()


def test_cli_estimate_after_a_run_and_as_json(fixture_run, capsys):
    tmp_path, db = fixture_run
    cfg_path = tmp_path / "config.yaml"
    cfg = fixture_config()
    cfg_path.write_text(json.dumps({k: cfg[k] for k in ("run", "methods", "models", "prices", "shapley")}))
    assert main(["estimate", str(cfg_path), "--datasets", str(tmp_path / "datasets"), "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert f"Estimate vs {db}" in out and "cost_spent_usd" in out
    assert main(["estimate", str(cfg_path), "--datasets", str(tmp_path / "datasets"), "--db", str(db),
                 "--format", "json", "--retry-rate", "0"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["assumptions"]["retry_rate"] == 0
    row = next(r for r in doc["comparison"] if (r["task"], r["stage"], r["method"], r["model"]) == ("legal", "run", "timespec", "m1"))
    assert row["calls_actual"] == 12 and row["cost_spent_usd"] == pytest.approx(8 * 0.006)
    assert {r["stage"] for r in doc["rows"]} == {"run", "verify", "perf_clean"}  # the corpus layer's claim searches
    assert all(r["calls"] == 0 for r in doc["rows"] if r["stage"] == "verify")


def test_cli_estimate_of_the_paper_config_needs_no_key_and_no_dataset(tmp_path, monkeypatch, capsys):
    for var in ("ANACHRON_BASE_URL", "ANACHRON_API_KEY", "VERIFIER_BASE_URL", "VERIFIER_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(tmp_path)
    assert main(["estimate", str(REPO / "config" / "paper.yaml"), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    rows = pd.DataFrame(doc["rows"])
    assert set(rows["stage"]) == {"run", "verify", "shapley", "perf_clean", "calibration"}
    assert {"temporal_hint@neutered", "rag@date_shift"} <= set(rows["method"])  # the paper grid's probes
    stock = rows[(rows["task"] == "stock") & (rows["stage"] == "run") & (rows["method"] == "temporal_hint")]
    assert stock["instances"].tolist() == [200, 200]  # the eval and control windows, 100 each
    assert stock["instances_basis"].iloc[0] == "config, at most"
    assert stock["calls"].tolist() == [pytest.approx(200 * 1.0525)] * 2
    legal = rows[(rows["task"] == "legal") & (rows["stage"] != "calibration")]
    assert legal["instances_basis"].eq("unknown").all() and legal["calls"].isna().all()
    assert any("snakemake --cores 2 results/datasets/legal.parquet" in n for n in doc["notes"])


def test_cli_estimate_bad_input(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("prices: {nope: {usd_per_million_input_tokens: 1, usd_per_million_output_tokens: 1}}\n")
    assert main(["estimate", str(bad)]) == 2
    assert "config key prices.nope" in capsys.readouterr().err
    bad.write_text("run: {tasks: [stock\n")
    assert main(["estimate", str(bad)]) == 2
    assert "bad.yaml" in capsys.readouterr().err
    assert main(["estimate", str(tmp_path / "missing.yaml")]) == 1
    assert "missing.yaml" in capsys.readouterr().err
    assert main(["estimate", str(REPO / "config" / "config.yaml"), "--retry-rate", "2"]) == 2
    assert "--retry-rate" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["estimate", "--help"])
    assert "before anything runs" in capsys.readouterr().out


def test_verifier_calls_and_corpus_searches(dataset, tmp_path):
    corpus_only = small_config({"temporal_hint": {}}, verify={"layers": ["grounded", "rules", "corpus"]})
    s = summarize(estimate(corpus_only, tmp_path / "datasets", EXACT)).set_index("stage")
    assert s.loc["verify", "calls"] == 0 and s.loc["verify", "claim_searches"] == 5 * 2  # one search per claim
    llm = small_config({"temporal_hint": {}}, verify={"layers": ["grounded", "rules", "llm"], "extractor": "llm",
                                                       "model": "m", "batch_size": 2})
    est = estimate(llm, tmp_path / "datasets", EXACT)
    steps = est.steps[est.steps["stage"] == "verify"].set_index("step")
    assert steps.loc["extract_claims", "calls"] == 5  # one per answer
    assert steps.loc["plausibility", "calls"] == 3 + 2  # 2 claims each, batches of 2 per cutoff date
    assert not any("no price" in n for n in est.notes)  # a mock model is free
