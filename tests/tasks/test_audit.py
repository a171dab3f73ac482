"""The input audit: an instance's own input text read as evidence against its cutoff."""

import datetime as dt
import json

import pandas as pd

from anachron.tasks.audit import apply_audit, audit_instances, input_sentences
from anachron.tasks.base import Task
from anachron.verify.layers.grounded import GroundedVerdict


class AuditToy(Task):
    name = "audit-toy"
    audit_fields = ("facts",)

    def messages(self, row):
        return []

    def prediction_schema(self, row):
        return {}

    def validate_prediction(self, row, prediction):
        return prediction

    def perf(self, row, prediction):
        return 0.0


class RulingCheck:
    """The instance's own outcome: "the Court reversed" (this court's ruling, no date given)."""

    def check(self, fact, instance):
        if "the Court reversed" in fact:
            return GroundedVerdict(dt.date(2031, 6, 1), "states the Court's ruling", outcome=True)
        return None


def _instances(*facts):
    return pd.DataFrame(
        [
            {
                "instance_id": f"toy-{i}",
                "task": "audit-toy",
                "split": "eval",
                "cutoff_date": "2031-05-31",
                "inputs": json.dumps({"facts": f, "year": "2032"}),
                "label": "{}",
                "provenance": "{}",
            }
            for i, f in enumerate(facts)
        ]
    )


def test_a_sentence_dated_after_the_cutoff_is_flagged_and_others_are_not():
    inst = _instances(
        "Ostrander sued the county in 2029. The county settled the claim in September 2031 for $2 million.",
        "Ostrander sued the county in 2029. Will the county settle by 2032?",
    )
    found = audit_instances(AuditToy(), inst, None)
    assert found["instance_id"].tolist() == ["toy-0"] and found["kind"].tolist() == ["later_content"]
    assert "September 2031" in found["sentence"].iloc[0] and found["effective_date"].iloc[0] > "2031-05-31"
    out, excl = apply_audit(inst, pd.DataFrame(columns=["reason", "detail"]), found)
    flags = dict(zip(out["instance_id"], out["input_audit"].map(json.loads)))
    assert flags["toy-1"] == [] and flags["toy-0"][0]["kind"] == "later_content" and excl.empty
    # only the audited fields are read: the input's "year" 2032 is the task's own framing
    assert [f for f, _ in input_sentences(AuditToy(), inst.iloc[1])] == ["facts"]


def test_html_is_read_as_text_dates_in_attributes_are_not():
    inst = _instances('<p data-updated="2032-01-05">Ostrander filed suit <a href="/2032/12/x">in 2029</a>.</p>')
    assert audit_instances(AuditToy(), inst, None).empty
    inst = _instances("<p>The county settled in <b>September 2031</b>.</p>")
    assert audit_instances(AuditToy(), inst, None)["kind"].tolist() == ["later_content"]


def test_a_ruling_the_text_dates_after_the_cutoff_states_the_outcome_and_excludes_the_instance():
    inst = _instances(
        "On June 1, 2031, the Court reversed the judgment below.",
        "In an earlier round the Court reversed the judgment below and remanded.",
    )
    found = audit_instances(AuditToy(), inst, RulingCheck())
    kinds = dict(zip(found["instance_id"], found["kind"]))
    assert kinds == {"toy-0": "states_outcome", "toy-1": "earlier_event"}
    out, excl = apply_audit(inst, pd.DataFrame({"reason": ["other"], "detail": ["x"]}), found)
    assert out["instance_id"].tolist() == ["toy-1"] and json.loads(out["input_audit"].iloc[0]) == []
    assert excl["reason"].tolist() == ["other", "input_states_outcome"] and excl["instance_id"].iloc[1] == "toy-0"


def test_relative_time_in_a_narrative_is_not_hindsight():
    inst = _instances("Ostrander was arrested in 2029. Two days later he was released, and he later sued.")
    assert audit_instances(AuditToy(), inst, None).empty
