"""verify_run end to end over the layers: claims with categories, the LLM layer and its fallback."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from anachron.llm.client import CallLog, LLMClient
from anachron.llm.providers import MockProvider
from anachron.llm.types import ModelSpec
from anachron.verify.pipeline import verify_run, verify_table
from anachron.tasks.registry import get_task

SPEC = ModelSpec(name="verifier", model="mock/fake-verifier", knowledge_cutoff="2025-01-01")
CUTOFF = "2019-11-30"


def _run(evidence, reasoning="Based on [1] and [2], Acme looks strong."):
    return pd.DataFrame([{
        "instance_id": "i1", "task": "stock", "method": "temporal_hint", "model": "m", "split": "eval",
        "cutoff_date": CUTOFF, "parse_status": "ok", "evidence": json.dumps(evidence), "reasoning": reasoning,
    }])


EVIDENCE = [
    {"id": 1, "fact": "Acme agreed to buy Bolt Industries for $2 billion.", "source_date": "2019-11-01"},
    {"id": 2, "fact": "Acme's board approved a new buyback program.", "source_date": "2019-10-15"},
]


def test_claims_carry_source_category_and_layer_without_llm():
    claims = verify_run(_run(EVIDENCE, "Acme signed a $2 billion deal with Bolt Industries on 2020-01-15 [1]."),
                        {"i1": {"cutoff_date": CUTOFF}}, task=get_task("stock"))
    ev = claims[claims["source"] == "evidence"]
    assert list(ev["claim_id"]) == ["i1:1", "i1:2"] and ev["cited"].tolist() == [True, False]
    assert set(claims["category"]) <= {"A1", "A2", "A3", "A4", "A5", "B1", "B2"} and claims["category_rule"].notna().all()
    rs = claims[claims["source"] == "reasoning"]
    assert len(rs) == 1 and rs["claim_id"].iloc[0] == "i1:r1"
    assert rs["leaked"].iloc[0] and rs["effective_date"].iloc[0] == "2020-01-15"  # dated from its text
    assert set(claims["layer"]) <= {"declared", "rules"}


def test_llm_layer_corrects_a_too_early_date():
    def answer(req):
        return json.dumps({"verdicts": [
            {"index": 0, "plausible": False, "corrected_date": "2019-12-10", "reason": "deal announced in December"},
            {"index": 1, "plausible": True, "corrected_date": None, "reason": "fine"},
        ]})

    prov = MockProvider(SPEC, answers=answer)
    client = LLMClient(SPEC, None, CallLog(), provider=prov)
    claims = verify_run(_run(EVIDENCE, ""), {"i1": {"cutoff_date": CUTOFF}}, layers=("grounded", "rules", "llm"),
                        task=get_task("stock"), llm={"client": client, "params": {}, "batch_size": 80})
    by = claims.set_index("claim_id")
    assert by.loc["i1:1", "layer"] == "llm" and by.loc["i1:1", "leaked"] and by.loc["i1:1", "effective_date"] == "2019-12-10"
    assert by.loc["i1:2", "layer"] == "llm" and not by.loc["i1:2", "leaked"]
    assert len(prov.requests) == 1  # both claims in one batch


def test_invalid_verifier_json_is_retried_once_then_falls_back_to_rules_with_reason():
    prov = MockProvider(SPEC, answers=lambda req: "Sure! Both dates look fine to me.")
    client = LLMClient(SPEC, None, CallLog(), provider=prov)
    claims = verify_run(_run(EVIDENCE, ""), {"i1": {"cutoff_date": CUTOFF}}, layers=("grounded", "rules", "llm"),
                        task=get_task("stock"), llm={"client": client, "params": {}, "batch_size": 80})
    assert len(prov.requests) == 2 and {r.sample_index for r in prov.requests} == {0, 1}
    assert (claims["layer"] == "declared").all() and not claims["leaked"].any()
    assert claims["reason"].str.startswith("llm verifier unusable").all()
    assert claims["reason"].str.contains("not valid JSON").all()


def test_llm_layer_without_a_model_is_a_clear_error():
    with pytest.raises(ValueError, match="verify.model"):
        verify_run(_run(EVIDENCE), {"i1": {"cutoff_date": CUTOFF}}, layers=("rules", "llm"))
    table = pd.DataFrame([{"task": "stock", "instance_id": "i1", "fact": "Acme closed at $5 on 2020-01-02.",
                           "declared_date_raw": None, "cutoff_date": CUTOFF}])
    out = verify_table(table, {}, {}, ("rules",))
    assert out["leaked"].tolist() == [True] and out["layer"].tolist() == ["rules"]
