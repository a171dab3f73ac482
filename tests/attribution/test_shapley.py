"""Claim attributions of a run (Shapley-DCLR): coalition prompts, model-call budget, efficiency, parse failures."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from anachron.llm.client import CallLog, LLMClient
from anachron.attribution.shapley import shapley_for_run
from anachron.llm.providers import MockProvider
from anachron.llm.types import ChatRequest, ModelSpec
from anachron.methods.supervision.prompts import FACTS_HEADER
from anachron.metrics.shapley import aggregate_shapley
from anachron.tasks.stock import StockTask
from fictional_corpus import stock_row

SPEC = ModelSpec(name="fake", model="mock/fake-model", knowledge_cutoff="2023-01-01", concurrency=4)
COMPANIES = [("CYGR", "Cygnet Robotics"), ("ESKF", "Eskerfield Foods")]
FACTS = [
    "Cygnet Robotics won a large defence contract.",  # pushes CYGR first (the true ranking)
    "Eskerfield Foods lost its biggest customer.",      # also pushes CYGR first
    "Eskerfield Foods opened a new bakery.",            # no effect
    "The sector index is made of 40 companies.",        # no effect
]


def coalition_provider(garble: str | None = None) -> MockProvider:
    """The mock provider ranking CYGR first when the prompt's fact list holds a 'won' or 'lost'
    fact; it garbles when the list holds ``garble``."""

    def answer(request: ChatRequest) -> str:
        user = request.messages[-1]["content"]
        listed = user.split("\n\n")[0] if user.startswith(FACTS_HEADER) else ""
        if garble and garble in listed:
            return "the model rambles"
        good = "won a large" in listed or "lost its biggest" in listed
        return json.dumps({"prediction": ["CYGR", "ESKF"] if good else ["ESKF", "CYGR"]})

    return MockProvider(SPEC, answers=answer)


def _inputs(n_facts: int, leaked: list[bool]):
    row = stock_row("s1", "2019-11-30", COMPANIES)
    instances = pd.DataFrame([row])
    run = pd.DataFrame([{"instance_id": "s1", "task": "stock", "method": "temporal_hint", "model": "fake", "split": "eval"}])
    claims = pd.DataFrame(
        {"instance_id": "s1", "claim_id": [f"s1:{k + 1}" for k in range(n_facts)], "source": "evidence",
         "fact": FACTS[:n_facts], "leaked": leaked[:n_facts]}
    )
    return run, claims, instances


def test_exact_shapley_from_model_calls_is_efficient_and_attributes_to_the_deciding_facts():
    provider = coalition_provider()
    client = LLMClient(SPEC, None, CallLog(), provider=provider)
    run, claims, instances = _inputs(4, [True, False, False, False])
    phi, per = shapley_for_run(run, claims, instances, StockTask(), client, params={}, budget=16, seed=0)
    (inst,) = per.to_dict("records")
    assert inst["estimator"] == "exact" and inst["n_calls"] == 16 and len(provider.requests) == 16
    vals = phi["phi"].to_numpy()
    assert np.isclose(vals.sum(), inst["v_all"] - inst["v_empty"])  # efficiency
    assert np.isclose(inst["v_all"], 1.0) and np.isclose(inst["v_empty"], 0.0)
    # an OR game of the first two facts: 1/2 each, nothing for the others
    assert np.allclose(vals, [0.5, 0.5, 0.0, 0.0])
    assert np.isclose(inst["dclr"], 0.5) and inst["top1"] == 1.0 and np.isclose(inst["top3"], 1 / 3)
    # every coalition prompt is a closed world over a subset of the claims, prediction only
    for r in provider.requests:
        assert set(r.response_schema["properties"]) == {"prediction"}


def test_leverage_shap_stays_within_the_call_budget():
    provider = coalition_provider()
    client = LLMClient(SPEC, None, CallLog(), provider=provider)
    run, claims, instances = _inputs(4, [False, False, True, False])
    phi, per = shapley_for_run(run, claims, instances, StockTask(), client, params={}, budget=8, seed=3,
                               agreement_max_claims=4)
    (inst,) = per.to_dict("records")
    assert inst["estimator"] == "leverage" and inst["n_calls"] <= 8
    assert np.isclose(phi["phi"].sum(), inst["v_all"] - inst["v_empty"])
    assert np.isfinite(inst["exact_mae"])  # the agreement check ran (outside the budget)
    metrics = aggregate_shapley(per)
    assert set(metrics["metric"]) == {"dclr", "top1", "top3", "top5"}


def test_unparsed_coalitions_are_imputed_and_counted():
    provider = coalition_provider(garble="bakery")
    client = LLMClient(SPEC, None, CallLog(), provider=provider)
    run, claims, instances = _inputs(3, [True, False, False])
    phi, per = shapley_for_run(run, claims, instances, StockTask(), client, params={}, budget=8, seed=0)
    (inst,) = per.to_dict("records")
    assert inst["n_failed"] == 4  # every coalition holding the third fact
    assert np.isfinite(phi["phi"]).all()
    assert np.isclose(phi["phi"].sum(), inst["v_all"] - inst["v_empty"])


def test_value_calls_use_a_probability_grid_and_repair_rankings():
    from anachron.attribution.shapley import PROBABILITY_GRID, repair_ranking, value_prediction_schema

    grid = value_prediction_schema({"type": "number", "minimum": 0, "maximum": 1})
    assert grid["enum"] == PROBABILITY_GRID and grid["enum"][0] == 0.0 and grid["enum"][-1] == 1.0
    salary = {"type": "number", "minimum": 0}
    assert value_prediction_schema(salary) is salary
    schema = {"type": "array", "items": {"type": "string", "enum": ["A", "B", "C"]}}
    assert repair_ranking(["B", "B", "C"], schema) == ["B", "C", "A"]
    assert repair_ranking(["C", "X"], schema) == ["C", "A", "B"]
    assert repair_ranking(0.4, {"type": "number"}) == 0.4


def test_repeated_tickers_in_a_coalition_answer_are_repaired_not_failed():
    repeats = MockProvider(SPEC, answers=['{"prediction": ["ESKF", "ESKF"]}'])
    client = LLMClient(SPEC, None, CallLog(), provider=repeats)
    run, claims, instances = _inputs(2, [False, False])
    _, per = shapley_for_run(run, claims, instances, StockTask(), client, params={}, budget=8, seed=0)
    assert per["n_failed"].iloc[0] == 0 and np.isclose(per["v_all"].iloc[0], 0.0)  # ESKF, CYGR: the wrong order
