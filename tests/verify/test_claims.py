"""Claim taxonomy rules, the deterministic extractor and the LLM extractor (with a scripted fake client)."""

from __future__ import annotations

import json

import pytest

from anachron.llm.client import CallLog, LLMClient
from anachron.llm.providers import MockProvider
from anachron.llm.types import ChatResult, ModelSpec
from anachron.verify.categorize import categorize
from anachron.verify.citations import split_sentences
from anachron.verify.extract import extract_claims, extract_claims_llm
from anachron.verify.extract.llm import extraction_request, extraction_schema, match_evidence, parse_extraction
from anachron.verify.extract.rules import has_named_event
from anachron.verify.features import has_number
from anachron.verify.taxonomy import CATEGORIES, Claim
from anachron.tasks.registry import get_task

STOCK = {
    "task": get_task("stock"),
    "tickers": ["XOM", "CVX", "SLB"],
    "names": ["Exxon Mobil Corp", "Chevron Corp", "Schlumberger Ltd"],
    "cutoff_date": "2019-11-30",
    "label": {"first_day": "2019-12-02", "last_day": "2020-05-29", "returns": {"XOM": -0.38, "CVX": -0.22, "SLB": -0.5}},
}
LEGAL = {
    "task": get_task("legal"),
    "case_name": "Harlow Mining Co. v. Pruett",
    "petitioner": "Harlow Mining Co.",
    "respondent": "Dana Pruett",
    "court": "Supreme Court of the United States",
    "cutoff_date": "2019-06-20",
    "decision_date": "2019-06-21",
}
SALARY = {
    "task": get_task("salary"),
    "player": "Marcus Quill",
    "team": "Portland Ravens",
    "previous_team": "Dayton Foxes",
    "cutoff_date": "2018-06-30",
    "signing_date": "2018-07-01",
    "aav": 12_500_000,
}
FORECAST = {
    "task": get_task("forecast"),
    "question": "Will the national unemployment rate of Freedonia exceed 5% in June 2024?",
    "cutoff_date": "2024-01-15",
    "resolution_date": "2024-07-05",
}


# --------------------------------------------------------------------------- categorize


@pytest.mark.parametrize(
    "text",
    [
        "The Brier score is (p - o)^2 for a probability p and an outcome o.",
        "Total shareholder return measures the change in price plus reinvested dividends.",
        "Average annual value is defined as the total contract value divided by its years.",
        "Certiorari refers to the Supreme Court's discretionary review of a lower-court decision.",
    ],
)
def test_b2_definitional(text):
    assert categorize(text) == ("B2", "B2:definition")


@pytest.mark.parametrize(
    "text",
    [
        "In 2019 the Brier score was adopted as the metric of the league.",  # dated: not timeless
        "Governments imposed lockdown measures across Europe.",  # 'measures' as a noun, an event
    ],
)
def test_b2_negative(text):
    assert categorize(text)[0] != "B2"


@pytest.mark.parametrize(
    "text",
    ["The Supreme Court has nine justices.", "Exxon Mobil explores for and produces oil and gas.",
     "The S&P 500 holds large U.S. companies.", "The petitioner is a mining company."],
)
def test_b1_background(text):
    assert categorize(text) == ("B1", "B1:background")


@pytest.mark.parametrize(
    "text,rule",
    [
        ("XOM shares fell 40% between December 2019 and May 2020.", "A4:stock:move-in-window"),
        ("Chevron stock returned -22% over the period.", "A4:stock:return-in-window"),  # CVX's window return
        ("Schlumberger was the worst performer of the group in March 2020.", "A4:stock:ranking-in-window"),
        ("XOM closed at $35.10 on 2020-05-29.", "A4:stock:price-in-window"),
        ("A 30.2% increase was recorded for CVX from 2019-12-02 to 2020-06-01.", "A4:stock:move-in-window"),
        ("Exxon Mobil ended the period at $46.28 a share.", "A4:stock:price-in-window"),
    ],
)
def test_a4_stock_positive(text, rule):
    assert categorize(text, STOCK) == ("A4", rule)


@pytest.mark.parametrize(
    "text",
    [
        "XOM shares fell 10% in 2018.",  # before the cutoff
        "Exxon's revenue fell 5% in Q1 2020.",  # a fundamental, not the stock's move
        "Oil prices fell 50% in March 2020.",  # no subject of the instance
        "XOM shares could fall 20% in 2020.",  # hedged
    ],
)
def test_a4_stock_negative(text):
    assert categorize(text, STOCK)[0] != "A4"


def test_a4_stock_after_window_is_not_the_outcome():
    assert categorize("XOM shares rose 30% in 2021.", STOCK)[0] != "A4"
    assert categorize("XOM shares rose 30% in April 2020.", STOCK)[0] == "A4"


@pytest.mark.parametrize(
    "text",
    [
        "The Court reversed the Tenth Circuit in Harlow Mining Co. v. Pruett.",
        "The Supreme Court ruled 5-4 in favor of Dana Pruett.",
        "In Harlow Mining v. Pruett the justices held that the statute does not apply.",
        "The Court affirmed the judgment against Harlow Mining Co.",
        "The Supreme Court ruled for the petitioner.",
        "The Tenth Circuit's judgment was reversed by the Supreme Court in Harlow Mining Co. v. Pruett.",
    ],
)
def test_a4_legal_positive(text):
    cat, rule = categorize(text, LEGAL)
    assert (cat, rule) == ("A4", "A4:legal:ruling-in-this-case")


@pytest.mark.parametrize(
    "text",
    [
        "The Tenth Circuit affirmed the district court's judgment for Pruett.",  # lower court history
        "In Chevron v. NRDC, the Court held that agencies get deference.",  # a precedent
        "The Court is likely to reverse the Tenth Circuit.",  # a prediction
        "In 2015 the Supreme Court ruled for Harlow Mining Co. in an earlier dispute.",  # dated before cutoff
        "Before the case reached the Supreme Court, the Tenth Circuit had ruled against Dana Pruett.",
        "In Harlow Mining Co. v. Pruett, the Supreme Court of Colorado ruled against Dana Pruett.",  # state court
        "Harlow Mining Co. was in favor of the new rule.",  # a party, but no court deciding
        "The Supreme Court has ruled that mining leases are contracts.",  # neither the case nor a party
        "The Court will rule for Pruett.",  # a prediction
    ],
)
def test_a4_legal_negative(text):
    assert categorize(text, LEGAL)[0] != "A4"


def test_a4_legal_appellate_court_is_the_deciding_court():
    ctx = dict(LEGAL, court="United States Court of Appeals for the Ninth Circuit")
    assert categorize("The Ninth Circuit reversed in Harlow Mining Co. v. Pruett.", ctx)[0] == "A4"
    assert categorize("The district court ruled for Harlow Mining Co. in 2017.", ctx)[0] != "A4"


@pytest.mark.parametrize(
    "text",
    [
        "Marcus Quill signed with the Portland Ravens for 3 years and $37.5 million.",
        "Quill agreed to a three-year deal with Portland.",
        "Quill's new contract carries an AAV of $12.5M.",
    ],
)
def test_a4_salary_positive(text):
    assert categorize(text, SALARY) == ("A4", "A4:salary:the-contract")


@pytest.mark.parametrize(
    "text,player",
    [("On August 7, 2021, it was reported that Oubre inked a contract carrying an AAV of $12.5M.", "Kelly Oubre Jr."),
     ("On August 13, 2021, Alex Len agreed to a 2-year deal worth $7,650,000 in total.", "Alex Len")],
)
def test_a4_salary_name_forms(text, player):
    ctx = dict(SALARY, player=player, cutoff_date="2021-08-01", team="Golden State Warriors")
    assert categorize(text, ctx)[0] == "A4"


def test_a4_salary_and_the_contract_check_agree_on_short_surnames():
    # one name matcher (anachron.names): a surname alone counts from 4 letters, in the
    # categoriser as in the grounded contract check, so "Len" alone is neither's outcome
    from anachron.tasks.salary.grounding import ContractGrounding

    text = "On August 13, 2021, Len agreed to a 2-year deal worth $7,650,000 in total."
    ctx = dict(SALARY, player="Alex Len", cutoff_date="2021-08-01", team="Golden State Warriors",
               signing_date="2021-08-13", aav=3_825_000, total_value=7_650_000)
    assert categorize(text, ctx)[0] != "A4"
    assert ContractGrounding().check(text, ctx) is None
    full = text.replace("Len agreed", "Alex Len agreed")
    assert categorize(full, ctx)[0] == "A4"
    assert ContractGrounding().check(full, ctx).outcome


@pytest.mark.parametrize(
    "text",
    [
        "In 2014, Quill signed a two-year contract with the Dayton Foxes.",  # a past contract
        "Quill's contract with the Dayton Foxes paid $4 million a year.",  # the previous team
        "Quill is expected to sign a deal worth about $12 million a year.",  # speculation
        "Ada Brennan signed with the Portland Ravens for $20 million.",  # another player
    ],
)
def test_a4_salary_negative(text):
    assert categorize(text, SALARY)[0] != "A4"


@pytest.mark.parametrize(
    "text,rule",
    [
        ("The question resolved Yes.", "A4:forecast:resolution-stated"),
        ("Freedonia's national unemployment rate exceeded 5% in June 2024.", "A4:forecast:question-after-cutoff"),
        ('The answer to "Will unemployment in Freedonia exceed 5%?" turned out to be yes.', "A4:forecast:resolution-stated"),
    ],
)
def test_a4_forecast_positive(text, rule):
    assert categorize(text, FORECAST) == ("A4", rule)


@pytest.mark.parametrize(
    "text",
    [
        "Freedonia's national unemployment rate was 4.1% in November 2023.",  # before the cutoff
        "Freedonia's unemployment rate could exceed 5% in June 2024.",  # hedged
        "Wheat prices rose 3% in March 2024.",  # not the question
        "Freedonia's national unemployment rate will exceed 5% in June 2024.",  # a prediction
    ],
)
def test_a4_forecast_negative(text):
    assert categorize(text, FORECAST)[0] != "A4"


def test_a4_forecast_uses_the_question_sentence_only():
    ctx = dict(FORECAST, question=FORECAST["question"] + "\n\nResolution details: " + "data source notes " * 40)
    assert categorize("Freedonia's national unemployment rate exceeded 5% in June 2024.", ctx)[0] == "A4"


def test_a4_needs_a_task():
    assert categorize("XOM shares fell 40% in March 2020.", None)[0] != "A4"
    assert categorize("XOM shares fell 40% in March 2020.", STOCK)[0] == "A4"


@pytest.mark.parametrize(
    "text,ctx",
    [
        ("Following the ruling, Congress amended the statute.", LEGAL),
        ("As a result of the decision, Harlow Mining closed two mines.", LEGAL),
        ("Mining groups praised the ruling.", LEGAL),
        ("After signing with the Ravens, attendance at their arena rose.", dict(SALARY, player="")),
        ("Since the contract, Portland has had little cap space.", SALARY),
        ("Following the March 2020 crash, oil producers cut capital spending.", STOCK),
        ("Following the resolution, markets repriced.", FORECAST),
        ("Following the outcome, the company appealed nothing further.", None),
    ],
)
def test_a5_consequential_positive(text, ctx):
    assert categorize(text, ctx)[0] == "A5"


def test_a5_without_a_task_uses_only_the_generic_nouns():
    # a task's outcome nouns apply to its own claims only: registering a task changes no other verdict
    assert categorize("Following the ruling, the company appealed nothing further.", LEGAL)[0] == "A5"
    assert categorize("Following the ruling, the company appealed nothing further.", None)[0] != "A5"
    with pytest.raises(TypeError, match="task object"):
        categorize("Following the ruling, the company appealed.", {"task": "legal"})


@pytest.mark.parametrize(
    "text,ctx",
    [
        ("Following the Tenth Circuit's ruling, Harlow sought certiorari.", LEGAL),  # lower court
        ("Following the 2008 crash, Exxon cut capital spending.", STOCK),  # before the cutoff
        ("Following the crash, Exxon cut capital spending.", STOCK),  # stock: needs a date in the window
        ("After signing with the Dayton Foxes in 2014, Quill made the all-star team.", SALARY),  # past
        ("Following the decision in Chevron v. NRDC in 1984, agencies gained deference.", LEGAL),
    ],
)
def test_a5_negative(text, ctx):
    assert categorize(text, ctx)[0] != "A5"


@pytest.mark.parametrize(
    "text",
    [
        "Apple reported revenue of $260.2 billion for fiscal 2019.",
        "Exxon announced a $10 billion buyback.",
        "Chevron filed its 10-K on February 21, 2020.",
        "The company said in a statement that output would fall.",
        "Schlumberger issued guidance for flat spending.",
        "The Ravens published their season schedule.",
    ],
)
def test_a3_publication(text):
    assert categorize(text, STOCK) == ("A3", "A3:publication")


def test_a3_negative():
    assert categorize("Exxon's dividend yield was 5.1%.", STOCK)[0] != "A3"


@pytest.mark.parametrize(
    "text",
    [
        "Exxon's dividend yield was 5.1%.",
        "Chevron's debt-to-equity ratio was 0.2 in 2019.",
        "Brent crude traded near $62 a barrel in 2019.",
        "Quill averaged 18.4 points per game in the 2017-18 season.",
        "Freedonia's unemployment rate was 4.1% in November 2023.",
        "Exxon has about 75,000 employees.",
    ],
)
def test_a2_number(text):
    assert categorize(text) == ("A2", "A2:number")


def test_a2_state_as_of_and_negatives():
    assert categorize("As of Q3 2019, crude demand had been declining.") == ("A2", "A2:state-as-of")
    assert categorize("Chevron acquired Anadarko for $33 billion.")[0] == "A1"  # event verb wins
    assert categorize("The Supreme Court has nine justices.")[0] != "A2"  # written number: background
    assert categorize("Section 230 shields platforms from liability.")[0] != "A2"  # a name, not a number


@pytest.mark.parametrize(
    "text,rule",
    [
        ("Chevron acquired Anadarko.", "A1:event-verb"),
        ("Occidental won the bidding for Anadarko in May 2019.", "A1:event-verb"),
        ("The Ravens hired a new coach.", "A1:event-verb"),
        ("The Fed cut rates on October 30, 2019.", "A1:event-verb"),
        ("In 2019 the energy sector lagged the market.", "A1:dated"),
    ],
)
def test_a1_event(text, rule):
    assert categorize(text) == ("A1", rule)


def test_a1_negative():
    assert categorize("Exxon explores for oil.")[0] != "A1"
    assert categorize("Exxon's margin was 8%.")[0] != "A1"


def test_every_category_is_known():
    for text in ["Chevron acquired Anadarko.", "Exxon's margin was 8%.", "x"]:
        assert categorize(text)[0] in CATEGORIES


def test_text_features():
    assert has_number("revenue of $3.5 billion")
    assert not has_number("the S&P 500 in 2019 under Section 230 and its 10-K")
    assert not has_number("the 9th Circuit heard the case")
    assert has_named_event("Chevron acquired Anadarko")
    assert has_named_event("Then Exxon Mobil launched a buyback")
    assert not has_named_event("The company acquired a rival")
    assert not has_named_event("Energy stocks look cheap")


# --------------------------------------------------------------------------- deterministic extraction

EVIDENCE = [
    {"id": 1, "fact": "Exxon's Q3 2019 earnings were $3.2 billion.", "source_date": "2019-11-01"},
    {"id": 2, "fact": "Chevron acquired Anadarko.", "source_date": "2019-04-12"},
    {"id": 3, "fact": "...", "source_date": "2019-01-01"},
    {"id": 4, "fact": "exxon's q3 2019 earnings were $3.2 billion.", "source_date": "2019-11-02"},
    {"id": 5, "fact": "Schlumberger cut 1,000 jobs.", "source_date": None},
]
REASONING = (
    "Exxon's Q3 2019 earnings were $3.2 billion [1]. Energy stocks look cheap. "
    "Schlumberger's margin was 11% in 2019 [5]. Chevron Corp. beat Occidental to several contracts [2, 5]. "
    "I expect XOM to lead the group. We rank SLB last [5]. "
    "XOM shares fell 40% in March 2020. XOM shares fell 40% in March 2020. Oil demand is weak."
)


def test_extract_claims_evidence_and_reasoning():
    claims = extract_claims(EVIDENCE, REASONING, STOCK)
    ev = [c for c in claims if c.source == "evidence"]
    rs = [c for c in claims if c.source == "reasoning"]
    # evidence: placeholder and case-insensitive repeat dropped
    assert [c.evidence_id for c in ev] == [1, 2, 5]
    assert [c.declared_date_raw for c in ev] == ["2019-11-01", "2019-04-12", None]
    assert all(c.extractor == "deterministic" and isinstance(c, Claim) for c in claims)
    texts = [c.text for c in rs]
    # the restated evidence fact and the repeat are deduplicated; opinions ("I expect ...") and
    # sentences with no date, number or named event ("We rank SLB last", "Oil demand is weak") are skipped
    assert texts == [
        "Schlumberger's margin was 11% in 2019.",
        "Chevron Corp. beat Occidental to several contracts.",
        "XOM shares fell 40% in March 2020.",
    ]
    by_text = {c.text: c for c in rs}
    # a single citation passes that item's date on; two citations leave it undated
    assert by_text["Schlumberger's margin was 11% in 2019."].declared_date_raw is None  # cites [5], undated
    assert by_text["Schlumberger's margin was 11% in 2019."].cited_ids == (5,)
    assert by_text["Chevron Corp. beat Occidental to several contracts."].declared_date_raw is None
    assert by_text["XOM shares fell 40% in March 2020."].category == "A4"
    assert all("[" not in t for t in texts)
    assert all(c.evidence_id is None for c in rs)


def test_reasoning_inherits_the_single_cited_date():
    ev = [{"id": 1, "fact": "Exxon's margin was 8%.", "source_date": "2019-11-01"},
          {"id": 2, "fact": "Chevron's margin was 9%.", "source_date": "2019-11-02"}]
    claims = extract_claims(ev, "Exxon's 2019 margin of 8% trails Chevron [1]. Both margins topped 7% in 2019 [1][2].", {})
    rs = [c for c in claims if c.source == "reasoning"]
    assert rs[0].declared_date_raw == "2019-11-01" and rs[0].cited_ids == (1,)
    assert rs[1].declared_date_raw is None and rs[1].cited_ids == (1, 2)


def test_extract_claims_odd_input():
    assert extract_claims([], "", None) == []
    assert extract_claims(None, None) == []
    claims = extract_claims([{"fact": "  ", "source_date": "x"}, {"id": None, "fact": "Exxon cut 5% of jobs."}], "...")
    assert [(c.evidence_id, c.declared_date_raw) for c in claims] == [(2, None)]


def test_split_sentences():
    text = "Apple Inc. reported $3.5B in Q1 [1]. XOM fell. [2] U.S. demand fell; CVX rose 3% [3].\nNew line. J. Smith left."
    assert split_sentences(text) == [
        "Apple Inc. reported $3.5B in Q1 [1].",
        "XOM fell. [2]",
        "U.S. demand fell",
        "CVX rose 3% [3].",
        "New line.",
        "J. Smith left.",
    ]


# --------------------------------------------------------------------------- LLM extraction


SPEC = ModelSpec(name="fake", model="mock/fake", knowledge_cutoff="2024-06-01")


def mock_client(answers) -> LLMClient:
    """The real client (no cache) on the mock provider answering with ``answers``."""
    return LLMClient(SPEC, None, CallLog(), provider=MockProvider(SPEC, answers=answers))


ROW = {
    "instance_id": "stock-1",
    "cutoff_date": "2019-11-30",
    "inputs": json.dumps({
        "sector": "Energy", "start_date": "2019-12-01", "end_date": "2020-06-01",
        "companies": [{"ticker": "XOM", "name": "Exxon Mobil Corp"}, {"ticker": "CVX", "name": "Chevron Corp"}],
    }),
    "label": json.dumps({"ranking": ["CVX", "XOM"]}),
}
EV2 = [
    {"id": 1, "fact": "Exxon's Q3 2019 earnings were $3.2 billion.", "source_date": "2019-11-01"},
    {"id": 2, "fact": "Chevron acquired Anadarko.", "source_date": "2019-04-12"},
]
RS2 = "Exxon's Q3 2019 earnings were $3.2 billion [1]. XOM shares fell 40% in March 2020 [1]."

GOOD = {
    "claims": [
        {"claim_id": 1, "text": "Exxon Mobil earned $3.2 billion in the third quarter of 2019.",
         "original_span": "Exxon's Q3 2019 earnings were $3.2 billion", "temporal_ref": "Q3 2019",
         "category": "A2", "category_reason": "quarterly figure"},
        {"claim_id": 2, "text": "XOM shares fell 40% in March 2020.", "original_span": "XOM shares fell 40% in March 2020",
         "temporal_ref": "March 2020", "category": "A4", "category_reason": "the outcome"},
        {"claim_id": 3, "text": "Brent crude averaged $64 a barrel in 2019.", "original_span": "",
         "temporal_ref": "the holiday season", "category": "a2 - measurement", "category_reason": ""},
        {"claim_id": 4, "text": "Exxon is an oil major.", "original_span": "", "temporal_ref": "", "category": "Z9",
         "category_reason": "?"},
        {"claim_id": 5, "text": "XOM shares fell 40% in March 2020.", "original_span": "", "temporal_ref": "",
         "category": "A4", "category_reason": "dup"},
        {"claim_id": 6, "text": "...", "original_span": "", "temporal_ref": "", "category": "A1", "category_reason": ""},
    ]
}


def test_extraction_request_shape():
    req = extraction_request(get_task("stock"), ROW, EV2, RS2, {"temperature": 0.0})
    assert [m["role"] for m in req.messages] == ["system", "user"]
    user = req.messages[1]["content"]
    for needle in ("2019-11-30", "Energy", "XOM", "[1] Exxon's Q3 2019 earnings", "Reasoning:", "A4", "B2",
                   "predictions", "atomic"):
        assert needle in user
    assert "2019-11-01" not in user  # declared dates are not shown to the extractor
    assert "\"ranking\"" not in user  # never the label
    assert req.params == {"temperature": 0.0} and req.tag["instance_id"] == "stock-1"
    assert req.response_schema == extraction_schema()


def _walk(node):
    if isinstance(node, dict):
        yield node
        for v in node.values():
            yield from _walk(v)
    elif isinstance(node, list):
        for v in node:
            yield from _walk(v)


def test_extraction_schema_is_grammar_safe():
    for node in _walk(extraction_schema()):
        for key in ("maxLength", "maxItems", "minItems"):
            assert node.get(key, 0) <= 1000
        assert "\\" not in node.get("pattern", "")
    assert extraction_schema()["properties"]["claims"]["items"]["properties"]["category"]["enum"] == list(CATEGORIES)


def test_parse_extraction_good():
    claims, why = parse_extraction(json.dumps(GOOD), EV2, RS2, STOCK)
    assert why is None
    texts = [c.text for c in claims]
    assert texts[:4] == [
        "Exxon Mobil earned $3.2 billion in the third quarter of 2019.",
        "XOM shares fell 40% in March 2020.",
        "Brent crude averaged $64 a barrel in 2019.",
        "Exxon is an oil major.",
    ]
    c1, c2, c3, c4 = claims[:4]
    # matched to evidence item 1 through its span: that item's declared date
    assert (c1.source, c1.evidence_id, c1.declared_date_raw, c1.category) == ("evidence", 1, "2019-11-01", "A2")
    assert c1.category_rule == "llm: quarterly figure" and c1.extractor == "llm" and c1.temporal_ref == "Q3 2019"
    # reasoning claim: temporal_ref parses -> declared
    assert (c2.source, c2.evidence_id, c2.declared_date_raw, c2.category) == ("reasoning", None, "March 2020", "A4")
    assert c2.cited_ids == (1,)
    # 'the holiday season' does not parse -> undated; 'a2 - measurement' is read as A2
    assert (c3.declared_date_raw, c3.category) == (None, "A2")
    # invalid category -> rule category, recorded
    assert c4.category == "B1" and "invalid" in c4.category_rule
    # evidence item 2 was not covered: added deterministically
    assert claims[4].evidence_id == 2 and claims[4].extractor == "deterministic"
    assert "not covered" in claims[4].category_rule
    assert len(claims) == 5


def test_parse_extraction_fenced_and_braces():
    fenced = "Here you go:\n```json\n" + json.dumps(GOOD) + "\n```\nDone."
    claims, why = parse_extraction(fenced, EV2, RS2, STOCK)
    assert why is None and len(claims) == 5
    braces = "Sure! " + json.dumps(GOOD) + " hope that helps"
    assert parse_extraction(braces, EV2, RS2, STOCK)[0] is not None
    bare = json.dumps(GOOD["claims"][:1])
    claims, _ = parse_extraction(bare, EV2, RS2, STOCK, cover_evidence=False)
    assert len(claims) == 1


@pytest.mark.parametrize(
    "text",
    ["", "   ", "not json at all", '{"claims": "none"}', '{"claims": []}', '{"claims": [{"text": ""}, 3]}',
     '{"claims": [{"text": "x", "category": "A1"', "[1, 2"],
)
def test_parse_extraction_unusable(text):
    claims, why = parse_extraction(text, EV2, RS2, STOCK)
    assert claims is None and why


def test_match_evidence_needs_the_same_numbers():
    ev = [{"id": 1, "fact": "Exxon's 2018 revenue was $290 billion.", "source_date": "2019-02-01"}]
    assert match_evidence("Exxon's 2018 revenue was $290 billion", ev)["id"] == 1
    assert match_evidence("Exxon revenue 2018 $290 billion", ev)["id"] == 1
    assert match_evidence("Exxon's 2019 revenue was $265 billion", ev) is None


def test_extract_claims_llm_batches_and_falls_back():
    # distinct cutoffs: identical prompts would share one call in the client
    rows = [ROW, dict(ROW, instance_id="stock-2", cutoff_date="2019-11-29"), dict(ROW, instance_id="stock-3"),
            dict(ROW, instance_id="stock-4", cutoff_date="2019-11-28")]
    outputs = [(EV2, RS2), (EV2, RS2), ([], ""), (EV2, RS2)]
    script = {"stock-1": json.dumps(GOOD), "stock-2": "garbage {", "stock-4": ChatResult(error="TimeoutError: slow")}
    client = mock_client(lambda r: script[r.tag["instance_id"]])
    out = extract_claims_llm(client, get_task("stock"), rows, outputs, {"temperature": 0}, [STOCK] * 4)
    assert len(client.provider.requests) == 3  # the empty completion made no call
    (c0, t0), (c1, t1), (c2, t2), (c3, t3) = out
    assert t0["extractor"] == "llm" and t0["reason"] is None and t0["n_claims"] == len(c0) == 5
    first = next(r for r in client.provider.requests if r.tag["instance_id"] == "stock-1")
    assert t0["cache_key"] == client.key_for(first)
    assert t1["extractor"] == "deterministic" and "fallback" in t1["reason"] and "JSON" in t1["reason"]
    assert c1 == extract_claims(EV2, RS2, STOCK)
    assert c2 == [] and t2["reason"] == "nothing to extract"
    assert t3["extractor"] == "deterministic" and "TimeoutError" in t3["reason"]
    assert all(c.extractor == "deterministic" for c in c3)


def test_extract_claims_llm_context_mapping_fills_task():
    client = mock_client(lambda r: json.dumps(GOOD))
    ctx = {k: v for k, v in STOCK.items() if k != "task"}
    (claims, trace), = extract_claims_llm(client, get_task("stock"), [ROW], [(EV2, RS2)], None, {"stock-1": ctx})
    # the rule category of the invalid-category claim used the stock context (task filled in)
    assert trace["extractor"] == "llm"
    assert any(c.category == "B1" for c in claims)
