"""Self-Correction and TimeSPEC: avoid-list, closed-world aggregator, cached resupervision, search dating."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from anachron.llm.client import CallLog, LLMClient
from anachron.llm.providers import MockProvider
from anachron.llm.types import ChatRequest, ModelSpec
from anachron.methods.supervised import run_self_correction, run_timespec
from anachron.methods.supervision.prompts import (
    AVOID_HEADER,
    CLOSED_WORLD_RULE,
    FACTS_HEADER,
    TEMPORAL_WORDS,
    aggregator_request,
    avoid_list_block,
    scrub_temporal,
)
from anachron.methods.supervision.supervisors import supervisor_context
from anachron.tasks.stock import StockTask
from anachron.verify.dates import find_periods
from fictional_corpus import SearchHit, query_json, stock_row

SPEC = ModelSpec(name="fake", model="mock/fake-model", knowledge_cutoff="2023-01-01", concurrency=2)
COMPANIES = [("CYGR", "Cygnet Robotics"), ("ESKF", "Eskerfield Foods")]
CUTOFF = "2019-11-30"

LEAK = {"id": 1, "fact": "Cygnet Robotics shares fell 30% in March 2020 as factories closed.", "source_date": "2020-03-31"}
CLEAN = {"id": 2, "fact": "Eskerfield Foods raised its dividend by 5% in August 2019.", "source_date": "2019-08-15"}
NEW = {"id": 1, "fact": "Cygnet Robotics opened a plant in Ohio in June 2019.", "source_date": "2019-06-10"}


def _answer(evidence: list[dict], prediction=("CYGR", "ESKF")) -> str:
    return json.dumps({"evidence": evidence, "reasoning": "See [1] and [2].", "prediction": list(prediction)})


def step_provider(answers: dict[str, str]) -> MockProvider:
    """The mock provider answering by the request's step tag; unknown steps get text that is not JSON."""
    return MockProvider(SPEC, answers=lambda r: answers.get(r.tag.get("step"), "I cannot answer that."))


def by_step(provider: MockProvider, step: str) -> list[ChatRequest]:
    """The requests ``provider`` received for ``step``, in arrival order."""
    return [r for r in provider.requests if r.tag.get("step") == step]


def _run_sc(provider: MockProvider, **kw):
    client = LLMClient(SPEC, None, CallLog(), provider=provider)
    rows = pd.DataFrame([stock_row("s1", CUTOFF, COMPANIES)])
    return run_self_correction(rows, StockTask(), client, params={"temperature": 0}, extractor="deterministic", **kw)


def test_scrub_and_avoid_list_carry_no_dates_or_temporal_words():
    facts = [
        LEAK["fact"],
        "On 2020-04-02 Eskerfield Foods reported Q1 2020 revenue of $3.1B, after the cutoff.",
        "Cygnet Robotics was added to the S&P 500 on December 23, 2019, before its rival.",
        LEAK["fact"],  # duplicate
        "In 2020.",  # nothing left once the date goes
    ]
    block = avoid_list_block(facts)
    lines = block.splitlines()
    assert lines[0] == AVOID_HEADER and lines[1].startswith("1. ") and lines[3].startswith("3. ")
    assert len(lines) == 5  # header, three facts, footer
    assert find_periods(block) == []
    assert TEMPORAL_WORDS.search(block) is None
    assert "$3.1B" in block and "Cygnet Robotics" in block and "30%" in block
    assert scrub_temporal("Revenue rose 12% in fiscal 2019 versus FY2018.") == "Revenue rose 12% versus."
    assert avoid_list_block(["In 2020."]) == ""


def test_self_correction_regenerates_without_flagged_fact_and_aggregates_validated_facts():
    provider = step_provider(
        {
            "generate": _answer([LEAK, CLEAN]),
            "regenerate": _answer([NEW, CLEAN]),
            "aggregate": _answer([{"id": 1, "fact": CLEAN["fact"], "source_date": "2019-08-15"}], ("ESKF", "CYGR")),
        }
    )
    (res,) = _run_sc(provider)
    # the flagged fact goes to the regeneration as a plain avoid-list, without its date
    (regen,) = by_step(provider, "regenerate")
    user = regen.messages[-1]["content"]
    assert AVOID_HEADER in user and "Cygnet Robotics shares fell 30%" in user
    avoid = user[user.index(AVOID_HEADER):]
    assert find_periods(avoid) == [] and TEMPORAL_WORDS.search(avoid.replace(AVOID_HEADER, "")) is None
    assert regen.messages[0] == by_step(provider, "generate")[0].messages[0]  # system prompt unchanged
    # the aggregator sees only validated facts (both rounds), as plain text, in a closed world
    (agg,) = by_step(provider, "aggregate")
    system, user = agg.messages[0]["content"], agg.messages[-1]["content"]
    assert CLOSED_WORLD_RULE in system
    facts_block = user[: user.index("\n\n")]
    assert facts_block.startswith(FACTS_HEADER)
    listed = [ln.split(". ", 1)[1] for ln in facts_block.splitlines()[1:]]
    assert CLEAN["fact"] in listed and NEW["fact"] in listed and LEAK["fact"] not in listed
    assert "2019-08-15" not in user and "2020-03-31" not in user  # no declared dates reach it
    enum = agg.response_schema["properties"]["evidence"]["items"]["properties"]["fact"]["enum"]
    assert enum == listed
    # the method's answer is the aggregator's
    assert res.parsed.prediction == ["ESKF", "CYGR"]
    steps = [t["step"] for t in res.trace]
    assert steps == ["generate", "supervise", "regenerate", "resupervise", "aggregate"]
    sup = res.trace[1]
    flagged = [c for c in sup["claims"] if c["flagged"]]
    assert [c["text"] for c in flagged] == [LEAK["fact"]]
    # resupervision reuses the verdict of the claim it already judged
    resup = res.trace[3]
    cached = {c["text"]: c["cached"] for c in resup["claims"]}
    assert cached[CLEAN["fact"]] is True and cached[NEW["fact"]] is False


def test_self_correction_without_flags_skips_regeneration_but_still_aggregates():
    provider = step_provider({"generate": _answer([CLEAN]), "aggregate": _answer([CLEAN])})
    (res,) = _run_sc(provider)
    assert by_step(provider, "regenerate") == []
    assert len(by_step(provider, "aggregate")) == 1
    assert [t["step"] for t in res.trace] == ["generate", "supervise", "aggregate"]


def test_unparseable_generation_leads_to_an_empty_closed_world():
    provider = step_provider({"generate": "not json at all", "aggregate": json.dumps({"evidence": [], "reasoning": "", "prediction": ["CYGR", "ESKF"]})})
    (res,) = _run_sc(provider)
    (agg,) = by_step(provider, "aggregate")
    assert agg.response_schema["properties"]["evidence"]["maxItems"] == 0
    assert FACTS_HEADER not in agg.messages[-1]["content"]
    assert res.trace[1]["n_claims"] == 0


def test_supervisor_context_never_holds_the_label():
    row = stock_row("s1", CUTOFF, COMPANIES)
    ctx = supervisor_context(StockTask(), row)
    assert "label" not in ctx and ctx["cutoff_date"] == CUTOFF and ctx["task"].name == "stock"
    assert "CYGR" in json.dumps({k: v for k, v in ctx.items() if k != "task"})


def test_aggregator_request_restricts_evidence_to_the_facts():
    row = stock_row("s1", CUTOFF, COMPANIES)
    req = aggregator_request(StockTask(), row, ["Fact one about Cygnet.", "Fact two about Eskerfield."], {}, 10)
    ev = req.response_schema["properties"]["evidence"]
    assert ev["maxItems"] == 2 and ev["items"]["properties"]["fact"]["enum"] == ["Fact one about Cygnet.", "Fact two about Eskerfield."]


class DatedSearch:
    """Returns fixed hits and records the as_of of every call."""

    def __init__(self, hits: list[SearchHit]):
        self.hits = hits
        self.as_of: list = []

    def search(self, query: str, k: int = 5, as_of=None):
        self.as_of.append(as_of)
        return [h for h in self.hits if as_of is None or str(h.published_at) <= str(as_of)][:k]


def test_timespec_dates_claims_by_unfiltered_search_and_regenerates():
    hits = [
        SearchHit(doc_id="n1", title="Cygnet Robotics announced the closure of its Ohio plant", snippet="factories closed across the region",
                  published_at="2020-03-20", score=1.0, source="news", entities=(), restates=None),
        SearchHit(doc_id="n2", title="Eskerfield Foods raised its dividend by 5%", snippet="August 2019 board decision",
                  published_at="2019-08-14", score=1.0, source="news", entities=(), restates=None),
    ]
    search = DatedSearch(hits)
    late = {"id": 1, "fact": "Cygnet Robotics announced the closure of its Ohio plant.", "source_date": "2019-11-01"}
    provider = step_provider(
        {
            "queries": query_json(*[f"Cygnet Robotics q{i} 2019" for i in range(7)]),
            "generate": _answer([late, CLEAN]),
            "regenerate": _answer([CLEAN]),
            "aggregate": _answer([CLEAN]),
        }
    )
    client = LLMClient(SPEC, None, CallLog(), provider=provider)
    rows = pd.DataFrame([stock_row("s1", CUTOFF, COMPANIES)])
    (res,), tool_calls = run_timespec(rows, StockTask(), client, params={}, search=search, extractor="deterministic")
    sup = res.trace[[t["step"] for t in res.trace].index("supervise")]
    by_text = {c["text"]: c for c in sup["claims"]}
    # declared too early: only the unfiltered search can tell it was public after the cutoff
    assert by_text[late["fact"]]["flagged"] and by_text[late["fact"]]["how"] == "search"
    assert by_text[late["fact"]]["effective_date"] == "2020-03-20"
    assert not by_text[CLEAN["fact"]]["flagged"] and by_text[CLEAN["fact"]]["effective_date"] == "2019-08-14"
    # generation searched with the as-of filter (tool calls), verification without it
    assert set(tool_calls["mode"]) == {"enforced"} and set(tool_calls["method"]) == {"timespec"}
    assert None in search.as_of and any(a is not None for a in search.as_of)
    assert len(by_step(provider, "regenerate")) == 1
    # the generator never sees search results of the verification: its prompts hold no 2020 hit
    for r in by_step(provider, "generate") + by_step(provider, "regenerate"):
        assert "factories closed across the region" not in json.dumps(r.messages)


def test_timespec_support_is_the_corpus_layers_test():
    from anachron.methods.supervision.supervisors import SearchSupervisor
    from anachron.verify.taxonomy import Claim

    hits = [
        SearchHit(doc_id="j", title="Cygnet Robotics joined the Apex 300 index", snippet="", published_at="2018-02-01",
                  score=1.0, source="news", entities=(), restates=None),
        SearchHit(doc_id="l", title="Cygnet Robotics left the Apex 300 index", snippet="", published_at="2020-02-03",
                  score=1.0, source="news", entities=(), restates=None),
    ]
    sup = SearchSupervisor(None, {}, search=DatedSearch(hits), extractor="deterministic")
    claim = Claim(text="Cygnet Robotics left the Apex 300 index.", declared_date_raw=None, source="evidence",
                  evidence_id=1, category="A1", category_rule="test", extractor="deterministic")
    ((judged,),) = sup.date_claims([pd.Series({"cutoff_date": CUTOFF})], [[claim]])
    # the earlier document is about joining: another event, so the leaving is dated by its own report
    assert judged.how == "search" and judged.effective_date == "2020-02-03" and judged.flagged
    assert sup.n_searches == 1


def test_max_regenerations_must_be_0_or_1():
    from anachron.errors import ConfigError

    with pytest.raises(ConfigError, match="max_regenerations"):
        _run_sc(step_provider({}), max_regenerations=2)
