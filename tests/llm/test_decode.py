"""The one JSON decoder of model answers, and the cases where its former copies disagreed."""

from __future__ import annotations

import json

import pytest

from anachron.llm.decode import EMPTY_ANSWER, FROM_FENCE, FROM_SPAN, FROM_WHOLE, decode_json
from anachron.llm.structured import parse_output
from anachron.tables import ParseStatus
from anachron.methods.rag import parse_queries
from anachron.verify.extract.llm import parse_extraction
from anachron.verify.layers.llm import parse_verdicts

ANSWER = {"evidence": [{"id": 1, "fact": "AAA grew.", "source_date": "2019-10-30"}], "reasoning": "r", "prediction": 1}
QUERIES = {"queries": [{"query": "ab 2020"}, {"query": "cd 2020"}, {"query": "ef 2020"}]}
VERDICTS = [{"index": 0, "plausible": True, "corrected_date": None}]


def test_candidates_in_order():
    assert decode_json('  {"a": 1}\n') == decode_json('{"a": 1}')
    got = decode_json('{"a": 1}')
    assert (got.value, got.source, got.problem, got.found_json) == ({"a": 1}, FROM_WHOLE, None, True)
    got = decode_json('Here:\n```json\n{"a": 1}\n```\nthanks {b}')
    assert (got.value, got.source) == ({"a": 1}, FROM_FENCE)
    got = decode_json('Sure! {"a": {"b": [1]}} hope it helps')
    assert (got.value, got.source) == ({"a": {"b": [1]}}, FROM_SPAN)
    assert decode_json("x [1, 2] y", list).value == [1, 2]


def test_lists_inside_objects():
    assert decode_json('{"verdicts": [1], "x": [2]}', list).value == [1]
    assert decode_json('{"x": [2], "verdicts": [1]}', list, ("verdicts",)).value == [1]
    assert decode_json('{"x": [2], "verdicts": 3}', list, ("verdicts",)).value == [2]
    got = decode_json('{"x": 2}', list)
    assert got.value is None and got.found_json and got.problem == "JSON is a dict, expected a list"


def test_problems():
    assert decode_json(None).problem == decode_json(" \n").problem == EMPTY_ANSWER
    got = decode_json("nope")
    assert (got.value, got.problem, got.found_json) == (None, "not valid JSON (Expecting value at char 0)", False)
    got = decode_json('{"a": 1')
    assert got.value is None and got.problem.startswith("not valid JSON (") and not got.found_json
    got = decode_json("[1, 2]")  # JSON, but no object
    assert got.value is None and got.found_json and got.problem == "JSON is a list, expected a dict"


# ---- the cases where the three former decoders disagreed, one test each


@pytest.mark.parametrize("tag", ["json", "JSON", "Json", ""])
def test_fence_tag_in_any_case(tag):
    """Formerly ```Json (and in RAG also ```JSON) was no fence: the text fell back to the outer span,
    and failed when prose after the fence held a brace."""
    text = f"Answer:\n```{tag}\n" + json.dumps(ANSWER) + "\n```\nNote: {see above}"
    assert decode_json(text).value == ANSWER
    assert parse_output(text).status == ParseStatus.OK_FENCED
    assert parse_queries(f"```{tag}\n" + json.dumps(QUERIES) + "\n```\n[done]", 3, 6)[0] == ["ab 2020", "cd 2020", "ef 2020"]
    assert parse_verdicts(f"```{tag}\n" + json.dumps(VERDICTS) + "\n```\n{ok}", 1)[1] is None


def test_first_complete_value_of_a_span():
    """Formerly a span holding two JSON values (or a value and a bracket in later prose) was not JSON."""
    text = "Draft: " + json.dumps(ANSWER) + " and the final one " + json.dumps({**ANSWER, "prediction": 2})
    got = decode_json(text)
    assert (got.value, got.source) == (ANSWER, FROM_SPAN)
    assert parse_output(text).status == ParseStatus.OK_BRACES
    assert decode_json('[1, 2] and [3]', list).value == [1, 2]
    # truncated answers stay unusable: an object nested in a broken one is never taken
    assert parse_output(json.dumps(ANSWER)[:-5]).status == ParseStatus.TRUNCATED
    assert decode_json('{"x": {"a": 1}, "y": ').value is None


def test_rag_skips_a_first_candidate_of_the_wrong_kind():
    """Formerly RAG stopped at the first candidate that decoded at all ("not_a_list"); now, like the
    others, it goes on to the next candidate."""
    text = '```json\n{"note": "see below"}\n```\n[{"query": "ab 2020"}, {"query": "cd 2020"}, {"query": "ef 2020"}]'
    assert parse_queries(text, 3, 6)[0] == ["ab 2020", "cd 2020", "ef 2020"]
    assert parse_queries('{"note": "no list here"}', 3, 6)[1] == "not_a_list"
    assert parse_queries("no JSON at all", 3, 6)[1] == "not_json"


def test_rag_takes_any_list_of_an_object():
    """Formerly RAG read only an object's ``queries``; now, like the verifier and the extractor, an
    object's first list when it has no ``queries`` list."""
    text = json.dumps({"search_queries": ["ab 2020", "cd 2020", "ef 2020"]})
    assert parse_queries(text, 3, 6)[0] == ["ab 2020", "cd 2020", "ef 2020"]


def test_first_object_not_first_json_value():
    """Formerly the Shapley value calls took the first candidate that decoded at all (a list gave NaN);
    now, like :func:`parse_output`, the first object."""
    text = "[" + json.dumps(ANSWER) + "]"
    assert decode_json(text).value == ANSWER


def test_extractor_uses_the_decoder():
    claims = {"claims": [{"claim_id": 1, "text": "AAA grew 5% in Q3 2019.", "category": "A2"}]}
    got, why = parse_extraction("```JSON\n" + json.dumps(claims) + "\n```\n{end}", [], "")
    assert why is None and [c.text for c in got] == ["AAA grew 5% in Q3 2019."]
    assert parse_extraction("nope", [], "") == (None, "not valid JSON (Expecting value at char 0)")


def test_an_item_of_a_larger_value_is_not_the_answer():
    """The first-complete-value rule never takes an item of an enclosing array or object."""
    items = '[{"index": 0, "plausible": true}, {"index": 1, "plausible": false}]'
    assert decode_json(items).value is None and parse_output(items).status == ParseStatus.NOT_JSON
    truncated = '{"evidence": [{"id": 1, "fact": "a"}], "reasoning": "grew [1] then fell [2]", "predic'
    assert decode_json(truncated, list).value is None


def test_complete_objects_recovers_items_from_a_cut_off_answer():
    from anachron.llm.decode import complete_objects

    cut = '{"evidence": [{"id": 1, "fact": "A", "source_date": "2019-01-02"}, {"id": 2, "fact": "B {x}", "source_date": "2019-0'
    assert complete_objects(cut, ("fact", "source_date")) == [{"id": 1, "fact": "A", "source_date": "2019-01-02"}]
    assert complete_objects('{"a": {"fact": "x"}}', ("fact",)) == [{"fact": "x"}]  # the inner one, the outer lacks the key
    assert complete_objects('{"fact": "x", "n": {"fact": "y"}}', ("fact",)) == [{"fact": "x", "n": {"fact": "y"}}]
    assert complete_objects(None) == [] and complete_objects("no json {") == []
