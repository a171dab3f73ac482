"""Bad input through every layer (event records, the corpus with paraphrases and new terms, the
grammar of prospective and hindsight statements): a verdict with a recorded reason, bounded time,
never a crash."""

import datetime as dt
import time

import pandas as pd
import pytest

from anachron.retrieval.corpus import CORPUS_COLUMNS
from anachron.retrieval.search import BM25Search, SearchHit
from anachron.tasks.legal.records import CaseRecords
from anachron.tasks.salary.records import SigningRecords
from anachron.verify.layers.corpus import CorpusLayer
from anachron.verify.pipeline import verify_claim

CUTOFF = dt.date(2031, 11, 30)
VERDICTS = {"leaked", "clean", "ambiguous", "undated"}


def _doc(doc_id, day, title, source="reuters"):
    return {"doc_id": doc_id, "published_at": day, "title": title, "text": "", "source": source, "kind": "headline",
            "entities": "[]", "valid_from": None, "valid_to": None, "restates": None}


@pytest.fixture(scope="module")
def corpus():
    docs = [_doc(f"f{i}", f"{2025 + i % 6}-0{1 + i % 9}-1{i % 9}", f"Markets wrap {i}: shares move as traders weigh rates") for i in range(40)]
    docs += [_doc("n1", "2032-02-11", "Regulators sue to stop Quillon Motors' takeover of Brackenridge Optics")]
    docs += [_doc(f"v{i}", f"2032-0{1 + i}-2{i}", f"Zervaxis outbreak {i} hits travel") for i in range(6)]
    return CorpusLayer(BM25Search(pd.DataFrame(docs, columns=CORPUS_COLUMNS)))


SIGNINGS = pd.DataFrame([("NBA", "Tobias Wrenfield", "2033-07-01", "Comets", "Herons", 3, 26_000_000.0, 8_666_667.0)],
                        columns=["league", "player", "signing_date", "team", "previous_team", "years", "total_value", "aav"])
CASES = pd.DataFrame([("31-100", "QUILLFEATHER v. BRANNOCK", "2032-04-20", "2032-01-12")],
                     columns=["docket_key", "case_name", "decision_date", "argument_date"])
SALARY_CTX = {"cutoff_date": "2031-11-30", "player": "Tobias Wrenfield", "league": "NBA", "team": "Herons",
              "previous_team": "Herons", "signing_date": "2031-12-08", "aav": 3e6, "total_value": 6e6, "years": 2}
LEGAL_CTX = {"cutoff_date": "2031-11-30", "case_name": "Darrowmere v. Oklavia", "docket": "33-10", "petitioner": "Darrowmere",
             "respondent": "Oklavia", "decision_date": "2031-12-10", "outcome": "respondent", "petitioner_wins": 0}

FILLERS = [
    "Wrenfield later signed a three-year, $26 million deal with the Comets, and ",
    "Quillfeather v. Brannock was decided 5-4; the justices would eventually ",
    "its full-year 2032 guidance, that summer, the following January, at that season's deadline, ",
    "Quillon Motors' takeover of Brackenridge Optics was challenged by regulators; zervaxis ",
    "v. v. v. X v. Y v. ",
    "$1 $2.5 billion 3% 4-4 6-3 ",
    "would go on to ended up went on to later later later ",
]


@pytest.mark.parametrize("filler", FILLERS)
@pytest.mark.parametrize("grounding, ctx", [(SigningRecords([SIGNINGS]), SALARY_CTX), (CaseRecords(CASES), LEGAL_CTX)])
def test_a_ten_thousand_character_claim_through_every_layer(filler, grounding, ctx, corpus):
    fact = (filler * (10_000 // len(filler) + 1))[:10_000]
    start = time.perf_counter()
    out = verify_claim(fact, "2031-10-01", CUTOFF, instance=dict(ctx), grounding=grounding,
                       layers=("grounded", "corpus", "rules"), corpus=corpus)
    assert time.perf_counter() - start < 5.0  # bounded: every pattern reads a bounded window
    assert out["verdict"] in VERDICTS and out["reason"]


@pytest.mark.parametrize("fact, declared", [
    ("Le conseil a approuvé plus tard la fusion de Quillon Motors.", None),  # another language
    ("Three weeks later, the deal collapsed.", None),  # only a relative date
    ("Later, it collapsed.", "2031-05-01"),
    ("$4.5 billion", "2031-05-01"),  # a figure with no entity
    ("6-3", None),
    ("", None),
    (None, "junk"),
])
def test_odd_claims_get_a_verdict_and_a_reason(fact, declared, corpus):
    for grounding, ctx in [(SigningRecords([SIGNINGS]), SALARY_CTX), (CaseRecords(CASES), LEGAL_CTX)]:
        out = verify_claim(fact, declared, CUTOFF, instance=dict(ctx), grounding=grounding,
                           layers=("grounded", "corpus", "rules"), corpus=corpus)
        assert out["verdict"] in VERDICTS and out["reason"], (fact, out)


def test_a_document_match_whose_date_is_missing_is_no_evidence():
    hits = [SearchHit("x", "Regulators sue to stop Quillon Motors' takeover of Brackenridge Optics", "", None, 1.0, "reuters"),
            SearchHit("y", "Regulators sue to stop Quillon Motors' takeover of Brackenridge Optics", "", "not a date", 1.0, "reuters")]

    class Undated:
        def search(self, query, *, k=5, as_of=None):
            return hits

    layer = CorpusLayer(Undated())
    fact = "Regulators sued to stop Quillon Motors' takeover of Brackenridge Optics."
    assert layer.check(fact, CUTOFF) is None
    out = verify_claim(fact, "2031-10-01", CUTOFF, layers=("corpus", "rules"), corpus=layer)
    assert out["verdict"] == "clean" and out["layer"] == "declared" and out["reason"]

