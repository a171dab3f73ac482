"""Trace metrics (TCLR, survivorship, restatement, query intent): worked examples on a fictional corpus.

Each example runs the RAG method in both modes against the fictional corpus of
``fictional_corpus.py`` with fixed queries, then scores the tool-call log.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from anachron.llm.client import CallLog, LLMClient
from anachron.llm.types import ModelSpec
from anachron.methods.rag import run_rag_enforced, run_rag_unrestricted
from anachron.metrics.traces import aggregate_traces, call_flags, trace_instance_scores
from anachron.tables import METRIC_COLUMNS, TOOL_CALL_COLUMNS, TRACE_SCORE_COLUMNS
from anachron.tasks.stock import StockTask
from fictional_corpus import FakeSearch, FakeValidity, query_json, scripted_provider, stock_row

SPEC = ModelSpec(name="fake", model="mock/fake-model", knowledge_cutoff="2023-01-01")

#: instance -> (cutoff, companies, queries the "model" writes)
EXAMPLES = {
    # not yet listed: both Cygnet items are dated after the cutoff, CYGR lists on 2023-02-09
    "cygnet": ("2022-06-01", [("CYGR", "Cygnet Robotics"), ("ESKF", "Eskerfield Foods")], ["Cygnet Robotics 2022"]),
    # already delisted (2019-11-05): both Boreal items predate the cutoff
    "boreal": ("2020-06-01", [("BRML", "Boreal Mining"), ("ESKF", "Eskerfield Foods")], ["Boreal Mining 2020"]),
    # restated figure: $412M reported 2021-02-04, restated to $377M on 2021-09-17
    "dunmore": ("2021-06-01", [("DNMP", "Dunmore Pharma"), ("ESKF", "Eskerfield Foods")],
                ["Dunmore Pharma fourth quarter revenue 2021"]),
    # published exactly on the cutoff day: "snack sales" only matches esk-1 (2020-03-02)
    "eskerfield": ("2020-03-02", [("ESKF", "Eskerfield Foods"), ("DNMP", "Dunmore Pharma")],
                   ["snack sales nine percent 2020"]),
    # the second query reaches for a later year; what comes back is dated on the cutoff
    "intent": ("2020-03-02", [("ESKF", "Eskerfield Foods"), ("BRML", "Boreal Mining")],
               ["Eskerfield snack sales 2020", "Eskerfield snack sales 2021 outlook"]),
}


def _run(mode: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    rows = [stock_row(iid, cutoff, comps) for iid, (cutoff, comps, _) in EXAMPLES.items()]
    tickers = {iid: [t for t, _ in comps] for iid, (_, comps, _) in EXAMPLES.items()}
    prov = scripted_provider(SPEC, lambda iid: query_json(*EXAMPLES[iid][2]), lambda iid: tickers[iid])
    client = LLMClient(SPEC, None, CallLog(), provider=prov)
    runner = run_rag_enforced if mode == "enforced" else run_rag_unrestricted
    instances = pd.DataFrame(rows)
    results, calls = runner(instances, StockTask(), client, params={}, search=FakeSearch(),
                            entity_validity=FakeValidity(), queries_min=1, queries_max=3)
    run = pd.DataFrame([r.to_row(row, task="stock", method=calls["method"].iloc[0], model="fake")
                        for r, (_, row) in zip(results, instances.iterrows())])
    return calls, run


@pytest.fixture(scope="module")
def traces():
    out = {}
    for mode in ("unrestricted", "enforced"):
        calls, run = _run(mode)
        out[mode] = (calls, trace_instance_scores(calls, run).set_index("instance_id"))
    return out


def _row(calls: pd.DataFrame, iid: str, seq: int = 0) -> dict:
    r = calls[(calls["instance_id"] == iid) & (calls["seq"] == seq)].iloc[0]
    return {c: (json.loads(r[c]) if c in ("returned", "consumed", "after_cutoff", "invalid_entities", "restatements")
                else r[c]) for c in TOOL_CALL_COLUMNS}


def test_post_cutoff_item_is_tclr_1_and_not_yet_listed_is_survivorship(traces):
    calls, scores = traces["unrestricted"]
    r = _row(calls, "cygnet")
    assert r["returned"] == ["cyg-1", "cyg-2"] and r["after_cutoff"] == ["cyg-1", "cyg-2"]
    assert r["invalid_entities"] == ["ticker:cygr"]
    assert scores.loc["cygnet", "tclr"] == 1.0 and scores.loc["cygnet", "survivorship"] == 1.0
    calls_e, scores_e = traces["enforced"]
    assert _row(calls_e, "cygnet")["returned"] == []  # the filter drops both post-cutoff items
    # nothing entity-bearing came back: survivorship is undefined, not 0
    assert scores_e.loc["cygnet", "tclr"] == 0.0 and np.isnan(scores_e.loc["cygnet", "survivorship"])
    assert scores_e.loc["cygnet", "n_entity_calls"] == 0


def test_delisted_company_is_survivorship_even_under_the_date_filter(traces):
    for mode in ("unrestricted", "enforced"):
        calls, scores = traces[mode]
        r = _row(calls, "boreal")
        assert r["returned"] == ["bor-1", "bor-2"] and r["after_cutoff"] == []
        assert r["invalid_entities"] == ["ticker:brml"]
        assert scores.loc["boreal", "tclr"] == 0.0
        assert scores.loc["boreal", "survivorship"] == 1.0, mode  # a date filter cannot catch it


def test_restated_figure_leaks_when_consumed_unrestricted_not_under_the_filter(traces):
    calls, scores = traces["unrestricted"]
    r = _row(calls, "dunmore")
    assert r["consumed"] == ["dnm-1", "dnm-2"] and r["restatements"] == ["dnm-2"] and r["after_cutoff"] == ["dnm-2"]
    assert scores.loc["dunmore", "restatement"] == 1.0 and scores.loc["dunmore", "tclr"] == 1.0
    calls_e, scores_e = traces["enforced"]
    r = _row(calls_e, "dunmore")
    assert r["consumed"] == ["dnm-1"] and r["restatements"] == []  # the original $412M: correct as of the cutoff
    assert scores_e.loc["dunmore", "restatement"] == 0.0 and scores_e.loc["dunmore", "tclr"] == 0.0


def test_item_dated_exactly_at_the_cutoff_does_not_leak(traces):
    for mode in ("unrestricted", "enforced"):
        calls, scores = traces[mode]
        r = _row(calls, "eskerfield")
        assert r["returned"] == ["esk-1"] and r["consumed"] == ["esk-1"] and r["after_cutoff"] == []
        assert scores.loc["eskerfield", "tclr"] == 0.0


def test_query_for_a_later_year_is_query_intent_not_tclr(traces):
    calls, scores = traces["enforced"]
    assert not _row(calls, "intent", 0)["query_intent_after_cutoff"]
    later = _row(calls, "intent", 1)
    assert later["query_intent_after_cutoff"] and later["after_cutoff"] == [] and later["returned"] == ["esk-1"]
    assert scores.loc["intent", "query_intent"] == 0.5 and scores.loc["intent", "tclr"] == 0.0
    assert scores.loc["intent", "n_calls"] == 2


def test_instance_scores_shape_and_aggregate(traces):
    _, un = traces["unrestricted"]
    _, en = traces["enforced"]
    both = pd.concat([un.reset_index(), en.reset_index()])[TRACE_SCORE_COLUMNS]
    assert set(both["method"]) == {"rag", "rag_unrestricted"} and set(both["split"]) == {"eval"}
    agg = aggregate_traces(both, n_resamples=500, seed=1)
    assert list(agg.columns) == METRIC_COLUMNS
    assert set(agg["metric"]) == {"tclr", "tclr_tool_using", "survivorship", "restatement", "query_intent"}
    get = agg.set_index(["method", "metric"])
    # unrestricted: cygnet 1, boreal 0, dunmore 1, eskerfield 0, intent 1 (both queries also return
    # the 2020-03-03 analyst note esk-2 without the filter) -> 3/5
    assert get.loc[("rag_unrestricted", "tclr"), "value"] == pytest.approx(0.6)
    assert get.loc[("rag", "tclr"), "value"] == 0.0 and get.loc[("rag", "tclr"), "ci_high"] == 0.0
    assert get.loc[("rag_unrestricted", "tclr_tool_using"), "value"] == pytest.approx(0.6)  # every run searched
    # survivorship is over runs with an entity-bearing call (only CYGR and BRML are in the validity
    # table): unrestricted cygnet and boreal, both flagged; enforced boreal only (it survives the filter)
    assert get.loc[("rag_unrestricted", "survivorship"), ["value", "n"]].tolist() == [1.0, 2]
    assert get.loc[("rag", "survivorship"), ["value", "n"]].tolist() == [1.0, 1]
    assert get.loc[("rag_unrestricted", "restatement"), "value"] == pytest.approx(0.2)
    assert get.loc[("rag", "query_intent"), "value"] == pytest.approx(0.1)
    row = get.loc[("rag_unrestricted", "tclr")]
    assert row["n"] == 5 and row["ci_low"] <= 0.6 <= row["ci_high"]


def _log(**over) -> dict:
    base = {"task": "stock", "method": "rag", "model": "fake", "instance_id": "i1", "seq": 0, "query": "q",
            "mode": "enforced", "cutoff_date": "2020-01-01", "returned": "[]", "consumed": "[]",
            "after_cutoff": "[]", "invalid_entities": "[]", "restatements": "[]",
            "query_intent_after_cutoff": False, "error": None, "entity_docs": "[]", "flag_reason": None}
    base.update(over)
    return base


def test_rates_are_shares_of_calls_and_failed_calls_count_as_no_leak():
    calls = pd.DataFrame(
        [_log(seq=0, after_cutoff='["d1"]', returned='["d1"]', entity_docs='["d1"]'), _log(seq=1, error="SearchError: down"),
         _log(seq=2, invalid_entities='["ticker:x"]', returned='["d2"]', entity_docs='["d2"]'), _log(seq=3, restatements='["d9"]', query_intent_after_cutoff=True),
         _log(instance_id="i2")]
    )
    flags = call_flags(calls)
    assert flags["tclr"].tolist() == [True, False, False, True, False]  # a consumed restatement is post-cutoff
    assert flags["failed"].tolist() == [False, True, False, False, False]
    s = trace_instance_scores(calls).set_index("instance_id")
    assert s.loc["i1", "n_calls"] == 4 and s.loc["i1", "n_errors"] == 1 and s.loc["i1", "n_entity_calls"] == 2
    # survivorship: 1 flagged of the 2 calls that returned an entity-bearing document
    assert s.loc["i1", "tclr"] == 0.5 and s.loc["i1", "survivorship"] == 0.5
    assert s.loc["i1", "restatement"] == 0.25 and s.loc["i1", "query_intent"] == 0.25
    assert s.loc["i2", "tclr"] == 0.0 and np.isnan(s.loc["i2", "survivorship"])


def test_log_without_entity_docs_counts_calls_that_returned_documents():
    """A log written before ``entity_docs`` existed (NULL): any returned document is entity-bearing."""
    calls = pd.DataFrame([_log(seq=0, returned='["d1"]', entity_docs=None),
                          _log(seq=1, returned='["d2"]', invalid_entities='["ticker:x"]', entity_docs=None),
                          _log(seq=2, entity_docs=None)])
    assert call_flags(calls)["survivorship"].tolist()[:2] == [0.0, 1.0]
    assert np.isnan(call_flags(calls)["survivorship"].iloc[2])
    s = trace_instance_scores(calls.drop(columns=["entity_docs"])).set_index("instance_id")
    assert s.loc["i1", "survivorship"] == 0.5 and s.loc["i1", "n_entity_calls"] == 2


def test_run_table_adds_split_and_instances_without_calls():
    calls = pd.DataFrame([_log(after_cutoff='["d1"]')])
    run = pd.DataFrame([
        {"task": "stock", "method": "rag", "model": "fake", "instance_id": "i1", "split": "control"},
        {"task": "stock", "method": "rag", "model": "fake", "instance_id": "i3", "split": "control"},
    ])
    s = trace_instance_scores(calls, run).set_index("instance_id")
    assert s.loc["i1", "split"] == "control" and s.loc["i1", "tclr"] == 1.0
    # a run without a tool call has TCLR 0 (v0) and no other trace rate
    assert s.loc["i3", "n_calls"] == 0 and s.loc["i3", "tclr"] == 0.0
    assert s.loc["i3", ["survivorship", "restatement", "query_intent"]].isna().all()
    agg = aggregate_traces(s.reset_index(), n_resamples=100).set_index("metric")
    assert (agg["split"] == "control").all()
    assert agg.loc["tclr", ["value", "n"]].tolist() == [0.5, 2]
    assert agg.loc["tclr_tool_using", ["value", "n"]].tolist() == [1.0, 1]
    assert agg.loc["restatement", "n"] == 1 and agg.loc["query_intent", "n"] == 1
    # no entity-bearing call anywhere: survivorship is undefined, not 0
    assert agg.loc["survivorship", "n"] == 0 and np.isnan(agg.loc["survivorship", "value"])


def test_empty_inputs():
    empty = pd.DataFrame(columns=TOOL_CALL_COLUMNS)
    s = trace_instance_scores(empty)
    assert list(s.columns) == TRACE_SCORE_COLUMNS and len(s) == 0
    assert list(aggregate_traces(s).columns) == METRIC_COLUMNS
