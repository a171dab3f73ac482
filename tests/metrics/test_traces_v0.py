"""The Anachron v0 write-up's worked examples as tests of the trace metrics.

The v0 write-up walks through three synthetic finance cases, each a single naive entity search
in Mode A (unrestricted) and Mode B (a date filter at the cutoff): Cygnus Robotics (not yet
listed), Borealis Mining (already delisted) and Delta Pharma (a restated figure). The tiny
corpus below is written here from that description (item ids, dates, tickers and figures as the
write-up gives them; the headlines are invented). Also its headline aggregate: 5 leaking runs
of 23, 8 of which used the tool.
"""

from __future__ import annotations

import datetime as dt
import json

import numpy as np
import pandas as pd
import pytest

from anachron.llm.client import CallLog, LLMClient
from anachron.llm.types import ModelSpec
from anachron.methods.rag import run_rag_unrestricted
from anachron.metrics.traces import aggregate_traces, trace_instance_scores
from anachron.retrieval.trace import score_call
from anachron.retrieval.search import validity_index
from anachron.tasks.stock import StockTask
from fictional_corpus import FakeSearch, query_json, scripted_provider, stock_row


def _item(doc_id: str, day: str, title: str, ticker: str, restates: str | None = None) -> dict:
    return {"doc_id": doc_id, "published_at": day, "title": title, "text": title, "source": "v0", "kind": "news",
            "entities": json.dumps([f"ticker:{ticker}"]), "valid_from": None, "valid_to": None, "restates": restates}


CORPUS = pd.DataFrame([
    _item("fin-003", "2019-04-10", "Borealis Mining reports nickel output", "BORX"),
    _item("fin-004", "2019-08-21", "Borealis Mining misses debt payment", "BORX"),
    _item("fin-005", "2023-02-09", "Cygnus Robotics prices its IPO", "CYGN"),
    _item("fin-006", "2024-05-22", "Cygnus Robotics wins logistics contract", "CYGN"),
    _item("fin-008", "2021-02-04", "Delta Pharma Q4 2020 revenue $412M", "DLTP"),
    _item("fin-009", "2021-09-17", "Delta Pharma restates Q4 2020 revenue to $377M", "DLTP", restates="fin-008"),
])
#: Listing windows: Cygnus lists at its IPO; Borealis is known only by its delisting day (a window
#: open at the start); Delta is listed throughout.
VALIDITY = validity_index(pd.DataFrame([
    {"entity": "ticker:CYGN", "valid_from": "2023-02-09", "valid_to": None},
    {"entity": "ticker:BORX", "valid_from": None, "valid_to": "2019-11-05"},
    {"entity": "ticker:DLTP", "valid_from": "2001-03-01", "valid_to": None},
]))
#: case -> (cutoff, the single search query)
CASES = {"cygnus": ("2022-06-01", "cygnus robotics"), "borealis": ("2020-06-01", "borealis mining"),
         "delta": ("2021-06-01", "delta pharma")}


def _call(case: str, mode: str) -> dict:
    """One search in ``mode`` ("A" unrestricted, "B" date filter), every hit consumed."""
    cutoff, query = CASES[case]
    day = dt.date.fromisoformat(cutoff)
    hits = FakeSearch(CORPUS).search(query, k=5, as_of=day if mode == "B" else None)
    row = score_call(hits, day, consumed=[h.doc_id for h in hits], validity=VALIDITY)
    return {k: (v if k == "flag_reason" else json.loads(v)) for k, v in row.items()}


def _scores(case: str, mode: str) -> pd.Series:
    call = _call(case, mode)
    log = pd.DataFrame([{"task": "stock", "method": mode, "model": "v0", "instance_id": case, "seq": 0,
                         **{k: (v if k == "flag_reason" else json.dumps(v)) for k, v in call.items()},
                         "query_intent_after_cutoff": False, "error": None}])
    return trace_instance_scores(log).iloc[0]


def test_cygnus_robotics_not_yet_listed():
    a = _call("cygnus", "A")
    assert a["after_cutoff"] == ["fin-005", "fin-006"] and a["invalid_entities"] == ["ticker:CYGN"]
    assert a["flag_reason"].split("; ") == [
        "doc fin-005 dated 2023-02-09 > 2022-06-01",
        "entity ticker:CYGN (doc fin-005) not yet valid at 2022-06-01 (valid from 2023-02-09)",
        "doc fin-006 dated 2024-05-22 > 2022-06-01",
    ]
    s = _scores("cygnus", "A")
    assert s["tclr"] == 1.0 and s["survivorship"] == 1.0 and s["restatement"] == 0.0  # v0: TCLR=1.00 survivorship=1
    b = _call("cygnus", "B")
    assert b["returned"] == [] and b["flag_reason"] is None  # post-T items dropped
    s = _scores("cygnus", "B")
    # v0: TCLR=0.00 survivorship=0 (a count); as a rate it is undefined: no entity-bearing document came back
    assert s["tclr"] == 0.0 and s["n_entity_calls"] == 0 and np.isnan(s["survivorship"])


def test_borealis_mining_delisted_survives_the_date_filter():
    for mode in ("A", "B"):
        c = _call("borealis", mode)
        assert c["returned"] == ["fin-003", "fin-004"] and c["after_cutoff"] == []
        assert c["invalid_entities"] == ["ticker:BORX"]
        assert c["flag_reason"] == "entity ticker:BORX (doc fin-003) no longer valid at 2020-06-01 (removed 2019-11-05)"
        s = _scores("borealis", mode)
        assert s["tclr"] == 0.0 and s["survivorship"] == 1.0, mode  # v0: survivorship=1 in both modes


def test_delta_pharma_restatement():
    a = _call("delta", "A")
    assert a["after_cutoff"] == ["fin-009"] and a["restatements"] == ["fin-009"] and a["invalid_entities"] == []
    assert a["flag_reason"] == "restatement fin-009 dated 2021-09-17 > 2021-06-01 revises fin-008"
    s = _scores("delta", "A")
    assert s["tclr"] == 1.0 and s["restatement"] == 1.0 and s["survivorship"] == 0.0  # v0: TCLR=1.00 restatement=1
    b = _call("delta", "B")
    assert b["returned"] == ["fin-008"] and b["flag_reason"] is None  # the original $412M: correct as of T
    s = _scores("delta", "B")
    assert s["tclr"] == 0.0 and s["restatement"] == 0.0


def test_restatement_cut_from_the_prompt_still_counts_as_returned():
    """Delta Pharma through the RAG method with a budget that keeps only the first passage."""
    spec = ModelSpec(name="v0", model="mock/v0", knowledge_cutoff="2023-01-01")
    row = stock_row("delta", "2021-06-01", [("DLTP", "Delta Pharma"), ("BORX", "Borealis Mining")])
    prov = scripted_provider(spec, lambda iid: query_json("delta pharma"), lambda iid: ["DLTP", "BORX"])
    client = LLMClient(spec, None, CallLog(), provider=prov)
    # "[1] Delta Pharma Q4 2020 revenue $412M — ..." fits; the 2nd passage has < 40 characters of room
    budget = len("[1] Delta Pharma Q4 2020 revenue $412M — Delta Pharma Q4 2020 revenue $412M") + 20
    _, calls = run_rag_unrestricted(pd.DataFrame([row]), StockTask(), client, params={}, search=FakeSearch(CORPUS),
                                    entity_validity=VALIDITY, queries_min=1, queries_max=1, token_budget=budget,
                                    chars_per_token=1)
    call = calls.iloc[0]
    assert json.loads(call["returned"]) == ["fin-008", "fin-009"] and json.loads(call["consumed"]) == ["fin-008"]
    assert json.loads(call["restatements"]) == ["fin-009"] and "revises fin-008" in call["flag_reason"]
    s = trace_instance_scores(calls).iloc[0]
    assert s["tclr"] == 1.0 and s["restatement"] == 1.0


def test_v0_headline_tclr_over_all_runs_and_over_tool_using_runs():
    """23 runs; 8 used the search tool, 5 of those surfaced a post-cutoff item (v0: 0.217; 5 of 8)."""
    ids = [f"s{i:02d}" for i in range(23)]
    run = pd.DataFrame({"task": "v0", "method": "A", "model": "qwen", "instance_id": ids, "split": "eval"})
    log = pd.DataFrame([{"task": "v0", "method": "A", "model": "qwen", "instance_id": iid, "seq": 0,
                         "returned": '["x"]', "after_cutoff": '["x"]' if i < 5 else "[]", "entity_docs": "[]",
                         "invalid_entities": "[]", "restatements": "[]", "query_intent_after_cutoff": False,
                         "error": None} for i, iid in enumerate(ids[:8])])
    scores = trace_instance_scores(log, run)
    assert len(scores) == 23 and (scores["n_calls"] > 0).sum() == 8
    agg = aggregate_traces(scores, n_resamples=200).set_index("metric")
    assert agg.loc["tclr", "value"] == pytest.approx(5 / 23) and round(agg.loc["tclr", "value"], 3) == 0.217
    assert agg.loc["tclr", "n"] == 23
    assert agg.loc["tclr_tool_using", "value"] == pytest.approx(5 / 8) and agg.loc["tclr_tool_using", "n"] == 8
