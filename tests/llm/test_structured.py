import json

from anachron.llm.structured import output_schema, parse_output
from anachron.tables import ParseStatus

ANSWER = {
    "evidence": [
        {"id": 1, "fact": "AAA reported Q3 2019 revenue of $1.2B.", "source_date": "2019-10-30"},
        {"id": 2, "fact": "BBB cut its dividend.", "source_date": "2019-09-01"},
    ],
    "reasoning": "AAA grew [1] while BBB weakened [2].",
    "prediction": ["AAA", "BBB"],
}


def _ranking(p):
    if sorted(p) != ["AAA", "BBB"]:
        raise ValueError("not a permutation")
    return p


def test_direct_json():
    out = parse_output(json.dumps(ANSWER), _ranking)
    assert out.status == ParseStatus.OK
    assert [e.id for e in out.evidence] == [1, 2]
    assert out.prediction == ["AAA", "BBB"]


def test_fenced_block_fallback():
    text = "Here is my answer:\n```json\n" + json.dumps(ANSWER) + "\n```\nThanks."
    out = parse_output(text, _ranking)
    assert out.status == ParseStatus.OK_FENCED
    assert out.reasoning.startswith("AAA grew")


def test_outermost_braces_fallback():
    text = "Sure! " + json.dumps(ANSWER) + " Hope this helps"
    out = parse_output(text, _ranking)
    assert out.status == ParseStatus.OK_BRACES
    assert len(out.evidence) == 2


def test_not_json_is_a_status_not_an_exception():
    out = parse_output("I think AAA will do best, then BBB.", _ranking)
    assert out.status == ParseStatus.NOT_JSON
    assert out.evidence == [] and out.prediction is None
    assert not out.evidence_usable


def test_truncated_json_is_truncated():
    text = json.dumps(ANSWER)[:-20]
    assert parse_output(text, _ranking).status == ParseStatus.TRUNCATED


def test_empty_and_none():
    assert parse_output("", _ranking).status == ParseStatus.EMPTY
    assert parse_output(None, _ranking).status == ParseStatus.EMPTY


def test_schema_error_names_field():
    bad = dict(ANSWER, evidence=[{"id": 1, "source_date": "2019-01-01"}])
    out = parse_output(json.dumps(bad), _ranking)
    assert out.status == ParseStatus.INVALID
    assert "fact" in out.error


def test_invalid_prediction_keeps_evidence():
    bad = dict(ANSWER, prediction=["AAA", "AAA"])
    out = parse_output(json.dumps(bad), _ranking)
    assert out.status == ParseStatus.INVALID_PREDICTION
    assert out.evidence_usable and not out.prediction_usable
    assert len(out.evidence) == 2


def test_alias_and_dedup():
    ans = {k: v for k, v in ANSWER.items() if k != "prediction"}
    ans["ranking"] = ["BBB", "AAA"]
    ans["evidence"] = ANSWER["evidence"] + [{"id": 3, "fact": "  aaa reported q3 2019 REVENUE of $1.2B. ", "source_date": "2019-10-30"}]
    ans["evidence"].append({"id": 4, "fact": "...", "source_date": "2019-11-30"})
    out = parse_output(json.dumps(ans), _ranking, aliases=("ranking",))
    assert out.prediction == ["BBB", "AAA"]
    assert [e.id for e in out.evidence] == [1, 2]
    assert out.n_dropped == 2


def test_output_schema_bounds():
    schema = output_schema({"type": "number"}, max_evidence=4)
    assert schema["properties"]["evidence"]["maxItems"] == 4
    assert schema["required"] == ["evidence", "reasoning", "prediction"]
