"""Leakage-adjusted Perf and the probes end to end on scripted models: the neutered gap, the
re-identification rate, the date-shift change rate and perf_clean behave as their definitions say."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest

from anachron.attribution.clean import clean_scores
from anachron.llm.client import CallLog, LLMClient
from anachron.llm.providers import MockProvider
from anachron.llm.types import ChatRequest, ModelSpec
from anachron.methods.temporal_hint import run_temporal_hint
from anachron.metrics.core import instance_scores
from anachron.metrics.probes import aggregate_clean, aggregate_probes, leak_share, pair_probe
from anachron.tables import CLAIM_COLUMNS, METRIC_COLUMNS
from anachron.tasks.probes import build_probe_dataset
from anachron.tasks.salary import SalaryTask

SPEC = ModelSpec(name="fake", model="mock/fake-model", knowledge_cutoff="2023-01-01", concurrency=4)
PLAYERS = {"Tobias Vantwerp": 20e6, "Milo Quarrington": 8e6, "Arvid Sallowell": 31e6, "Jonah Tremblett": 4e6,
           "Kasimir Oduya-Fenn": 12e6, "Rufus Penhallow": 15e6}
TASK = SalaryTask()


def _instances() -> pd.DataFrame:
    rows = []
    for k, (player, aav) in enumerate(PLAYERS.items()):
        # the years differ: neutered prompts of one year would be byte-identical (one call, one answer)
        inputs = {"sport": "basketball", "league": "NBA", "year": 2014 + k, "player": player, "status": "unrestricted"}
        rows.append({"instance_id": f"s{k}", "task": "salary", "split": "eval", "cutoff_date": "2019-06-29",
                     "inputs": json.dumps(inputs), "label": json.dumps({"aav": aav, "signing_date": "2019-07-06"}),
                     "provenance": "{}"})
    return pd.DataFrame(rows)


def _answer(prediction: float, reasoning: str = "The market [1] sets the price.") -> str:
    return json.dumps({"evidence": [{"id": 1, "fact": "The 2019 salary cap was announced in June.", "source_date": "2019-06-01"}],
                       "reasoning": reasoning, "prediction": prediction})


def recaller(names_it: bool = False):
    """Knows each player's contract by name; without the name it guesses the league's middle. With
    ``names_it`` it recognises the player anyway and writes his name (re-identification)."""
    by_id = {f"s{k}": p for k, p in enumerate(PLAYERS)}

    def answer(request: ChatRequest) -> str:
        user = request.messages[-1]["content"]
        named = next((p for p in PLAYERS if p in user), None)
        if named:
            return _answer(PLAYERS[named])
        who = by_id[request.tag["instance_id"]]
        return _answer(10e6, f"This is surely {who} [1].") if names_it else _answer(10e6)

    return answer


def _run(instances: pd.DataFrame, answers, method: str = "temporal_hint") -> tuple[pd.DataFrame, pd.DataFrame]:
    client = LLMClient(SPEC, None, CallLog(), provider=MockProvider(SPEC, answers=answers))
    results = run_temporal_hint(instances, TASK, client, params={})
    run = pd.DataFrame([r.to_row(row, task="salary", method=method, model="fake") for r, (_, row) in zip(results, instances.iterrows())])
    inst = instances.set_index("instance_id")
    scores = instance_scores(run, pd.DataFrame(columns=CLAIM_COLUMNS), lambda iid, p: TASK.perf(inst.loc[iid], p))
    return run, scores


def _probe(answers, probe: str) -> pd.DataFrame:
    instances = _instances()
    probed, records = build_probe_dataset(TASK, instances, probe, shift_days=365)
    base_run, base_scores = _run(instances, answers)
    probe_run, probe_scores = _run(probed, answers, f"temporal_hint@{probe}")
    pairs = pair_probe(instances, records, base_run, base_scores, probe_run, probe_scores, task="salary",
                       method="temporal_hint", model="fake", probe=probe)
    return pairs, aggregate_probes(pairs, n_resamples=500).set_index("metric")


def test_a_model_that_recalls_by_name_shows_a_positive_neutered_gap_and_no_reidentification():
    pairs, m = _probe(recaller(), "neutered")
    assert (pairs["status"] == "paired").all() and len(pairs) == len(PLAYERS)
    assert m.loc["neutered_gap", "value"] > 0.3 and m.loc["neutered_gap", "ci_low"] > 0
    assert m.loc["neutered_gap_p", "value"] < 0.05 and m.loc["neutered_gap", "n"] == len(PLAYERS)
    assert m.loc["reid_rate", "value"] == 0.0
    assert m.loc["neutered_perf", "value"] < 1.0 and m.loc["neutered_skipped", "value"] == 0


def test_a_model_that_names_the_entity_has_a_reidentification_rate_of_one():
    pairs, m = _probe(recaller(names_it=True), "neutered")
    assert m.loc["reid_rate", "value"] == 1.0
    assert all(json.loads(f) for f in pairs["reid_forms"])


def test_date_shift_change_rate_separates_a_date_reader_from_an_evidence_reader():
    def by_date(request):  # predicts from the year it is told it is
        year = int(re.search(r"Today's date: (\d{4})", request.messages[-1]["content"]).group(1))
        return _answer(20e6 if year == 2019 else 5e6)

    pairs, m = _probe(by_date, "date_shift")
    assert m.loc["shift_change_rate", "value"] == 1.0 and m.loc["shift_perf_change", "value"] != 0
    assert set(pairs["probe_cutoff_date"]) == {"2018-06-29"}
    _, m = _probe(lambda request: _answer(12e6), "date_shift")
    assert m.loc["shift_change_rate", "value"] == 0.0 and m.loc["shift_perf_change", "value"] == 0.0


def test_skipped_instances_are_counted_with_their_reason_never_paired():
    instances = _instances()
    _, records = build_probe_dataset(TASK, instances, "neutered")
    records.loc[0, ["status", "reason"]] = ["skipped", "no_named_entity"]
    run, scores = _run(instances, recaller())
    pairs = pair_probe(instances, records, run, scores, run.iloc[1:], scores.iloc[1:], task="salary",
                       method="temporal_hint", model="fake", probe="neutered")
    assert pairs.loc[0, "status"] == "skipped" and pairs.loc[0, "reason"] == "no_named_entity"
    m = aggregate_probes(pairs, n_resamples=200).set_index("metric")
    assert m.loc["neutered_skipped", "value"] == 1 and m.loc["neutered_skipped", "n"] == len(PLAYERS)
    assert m.loc["neutered_gap", "n"] == len(PLAYERS) - 1


# -- perf_clean --------------------------------------------------------------------------------------

def _claims(rows) -> pd.DataFrame:
    return pd.DataFrame([{c: None for c in CLAIM_COLUMNS} | {"instance_id": iid, "source": "evidence", "fact": fact,
                                                             "leaked": verdict == "leaked", "verdict": verdict}
                         for iid, fact, verdict in rows], columns=CLAIM_COLUMNS)


def evidence_reader(request: ChatRequest) -> str:
    """Predicts only from the listed facts: the right AAV when a fact gives it, else $10M."""
    user = request.messages[-1]["content"]
    m = re.search(r"signed for \$(\d+)M", user)
    return json.dumps({"prediction": float(m.group(1)) * 1e6 if m else 10e6})


def test_perf_clean_equals_perf_without_a_leaked_claim_and_drops_when_the_leak_decided():
    instances = _instances().iloc[:3]
    run = pd.DataFrame([{"instance_id": f"s{k}", "task": "salary", "method": "temporal_hint", "model": "fake", "split": "eval",
                         "parse_status": "ok", "prediction": json.dumps(p)} for k, p in enumerate([20e6, 8e6, 31e6])])
    claims = _claims([
        ("s0", "He signed for $20M a year in July.", "leaked"), ("s0", "He averaged 20 points.", "clean"),
        ("s1", "He averaged 9 points.", "clean"),
        ("s2", "He signed for $31M a year.", "leaked"),
    ])
    provider = MockProvider(SPEC, answers=evidence_reader)
    client = LLMClient(SPEC, None, CallLog(), provider=provider)
    out = clean_scores(run, claims, instances, TASK, client, params={}).set_index("instance_id")
    assert out.loc["s1", "status"] == "kept" and out.loc["s1", "perf_clean"] == out.loc["s1", "perf"] == 1.0
    assert out.loc["s0", "status"] == "asked" and out.loc["s0", "perf_clean"] == pytest.approx(0.5)
    assert out.loc["s2", "status"] == "empty_evidence" and out.loc["s2", "n_kept"] == 0
    # the closed world lists only the claims that did not leak; s1 made no call
    listed = [r.messages[-1]["content"] for r in provider.requests]
    assert len(listed) == 2 and not any("signed for" in t for t in listed) and not any("9 points" in t for t in listed)
    m = aggregate_clean(out.reset_index(), n_resamples=200).set_index("metric")
    perf, clean = out["perf"].mean(), out["perf_clean"].mean()
    assert m.loc["perf_clean", "value"] == pytest.approx(clean)
    assert m.loc["perf_leak_share", "value"] == pytest.approx((perf - clean) / perf)
    assert m.loc["perf_clean_asked", "value"] == pytest.approx(2 / 3)
    assert list(aggregate_clean(out.reset_index()).columns) == METRIC_COLUMNS


def test_strict_perf_clean_also_drops_undated_claims_and_unparsed_answers_have_none():
    instances = _instances().iloc[:2]
    run = pd.DataFrame([{"instance_id": "s0", "task": "salary", "method": "m", "model": "fake", "split": "eval",
                         "parse_status": "ok", "prediction": json.dumps(20e6)},
                        {"instance_id": "s1", "task": "salary", "method": "m", "model": "fake", "split": "eval",
                         "parse_status": "not_json", "prediction": "null"}])
    claims = _claims([("s0", "He signed for $20M a year.", "undated"), ("s1", "x", "leaked")])
    client = LLMClient(SPEC, None, CallLog(), provider=MockProvider(SPEC, answers=evidence_reader))
    out = clean_scores(run, claims, instances, TASK, client, params={}).set_index("instance_id")
    assert out.loc["s0", "status"] == "kept" and out.loc["s0", "perf_clean"] == 1.0
    assert out.loc["s0", "status_strict"] == "empty_evidence" and out.loc["s0", "perf_clean_strict"] == pytest.approx(0.5)
    assert out.loc["s1", "status"] == "unparsed" and np.isnan(out.loc["s1", "perf_clean"])


def test_an_invalid_closed_world_answer_has_no_perf_clean():
    instances = _instances().iloc[:1]
    run = pd.DataFrame([{"instance_id": "s0", "task": "salary", "method": "m", "model": "fake", "split": "eval",
                         "parse_status": "ok", "prediction": json.dumps(20e6)}])
    client = LLMClient(SPEC, None, CallLog(), provider=MockProvider(SPEC, answers=lambda r: "the model rambles"))
    out = clean_scores(run, _claims([("s0", "He signed for $20M.", "leaked")]), instances, TASK, client, params={})
    assert out.loc[0, "status"] == "invalid_answer" and np.isnan(out.loc[0, "perf_clean"])


def test_leak_share_is_the_relative_drop_with_a_bootstrap_interval():
    v, lo, hi, n = leak_share(np.array([1.0, 0.8, 0.6, np.nan]), np.array([0.5, 0.8, 0.3, 0.2]), n_resamples=500)
    assert n == 3 and v == pytest.approx((0.8 - 1.6 / 3) / 0.8) and lo <= v <= hi
    assert np.isnan(leak_share(np.array([0.0]), np.array([0.0]))[0])
