"""The corpus verifier layer: support test, verdicts, its place among the layers, TimeSPEC's use.

Every company, person, case, team and headline here is invented; the corpus is a BM25 index over
a few fictional documents from four sources: ``wire`` (publishing since 2011), ``court``,
``league`` (since 2017), and ``forum`` (publishing only from 2023).
"""

from __future__ import annotations

import datetime as dt
import json

import pandas as pd
import pytest

from anachron.retrieval.corpus import CORPUS_COLUMNS
from anachron.retrieval.search import BM25Search, SearchError, SearchHit
from anachron.verify.layers.corpus import (
    MIN_SUPPORT,
    CorpusLayer,
    Number,
    assertions,
    content_words,
    event_verbs,
    numbers,
    open_corpus_layer,
    polarity,
)
from anachron.verify.layers.grounded import GroundedVerdict
from anachron.verify.pipeline import verify_claim, verify_run, verify_table


def _doc(doc_id, day, title, text="", source="wire"):
    return {"doc_id": doc_id, "published_at": day, "title": title, "text": text, "source": source, "kind": "headline",
            "entities": "[]", "valid_from": None, "valid_to": None, "restates": None}


DOCS = [
    _doc("w-acq", "2018-03-02", "Quillon Motors agreed to acquire Brackenridge Optics for $2.40 billion"),
    _doc("w-join", "2012-05-01", "Tarrow Mills joined the Meridian 400 index"),
    _doc("w-leave", "2020-08-14", "Tarrow Mills left the Meridian 400 index"),
    _doc("w-pact", "2019-02-02", "Halberd Foods did not renew its supply pact with Ferrow Farms"),
    _doc("w-jet", "2019-03-20", "Norrin Air unveiled its long-range passenger jet"),
    _doc("w-jet-old", "2019-01-05", "Norrin Air long-range passenger jet unveiled to analysts"),
    _doc("w-rate", "2021-06-09", "Calder Reserve cut its lending rate by 0.25 percentage point"),
    _doc("w-profit", "2021-01-08", "Calder Bank reported fourth-quarter 2020 profit of $1.20 billion"),
    _doc("c-granted", "2019-01-07", "The High Court granted review in Ostrander v. Pell",
         "Does the statute bar late appeals that Lina Ostrander filed by mail, as the court below held", source="court"),
    _doc("c-decided", "2019-06-20", "The High Court decided Ostrander v. Pell",
         "The Court ruled for the petitioner, Lina Ostrander.", source="court"),
    _doc("l-velk", "2021-07-03", "Dario Velk signed with the Harriers: 3 years, $45.00 million",
         "Dario Velk signed with the Harriers on a 3-year contract worth $45.00 million ($15.00 million per year).",
         source="league"),
    _doc("r-moot", "2023-04-12", "Will Sable Dynamics list its shares in 2023? resolved YES", source="court"),
]
# filler so that the sources have histories and the words their document frequencies
DOCS += [_doc(f"w-fill-{i}", f"{2011 + i % 12}-0{1 + i % 9}-1{i % 10}", f"Markets note {i} on shares and the index")
         for i in range(24)]
DOCS += [_doc(f"l-fill-{i}", f"{2017 + i}-07-0{i + 1}", f"Player {i} signed with the Owls: 1 year, $1.00 million", source="league")
         for i in range(3)]
DOCS += [_doc(f"f-{i}", f"2023-0{1 + i}-02", f"Forum thread {i} about branch banking") for i in range(6)]
DOCS += [_doc("f-branch", "2023-09-18", "Velmont Bank closed its last branch in Corran", source="forum")]
for d in DOCS[-7:-1]:
    d["source"] = "forum"


@pytest.fixture(scope="module")
def index() -> BM25Search:
    return BM25Search(pd.DataFrame(DOCS, columns=CORPUS_COLUMNS))


@pytest.fixture()
def layer(index) -> CorpusLayer:
    return CorpusLayer(index)


# -- parsing ---------------------------------------------------------------------------------


def test_numbers_match_within_the_precision_either_side_writes():
    (a,) = numbers("a deal worth $104 million")
    (b,) = numbers("for $104.00 million")
    assert a.matches(b) and b.matches(a)
    (rounded,) = numbers("a $4 billion charge")
    (exact,) = numbers("a $4.1 billion charge")
    assert exact.matches(rounded)  # a headline rounds
    assert not numbers("26 stocks")[0].matches(numbers("27 stocks")[0])  # neighbours differ
    assert not numbers("up 8.9%")[0].matches(numbers("$8.90 a share")[0])  # a percentage is no price
    assert numbers("fell 4.1 percent")[0].matches(numbers("a return of -4.1%")[0])  # signs ignored
    assert Number(4.0, 0.5, False) in numbers("a four-year contract")  # number words count


def test_numbers_skip_dates_and_name_numerals():
    assert numbers("On March 3, 2020 the S&P 500 fell") == []
    assert [n.value for n in numbers("COVID-19 cases rose 12% in 2021")] == [12.0]


def test_content_words_keep_tickers_and_drop_dates_and_stop_words():
    assert content_words("AN joined the index on 2019-05-01 with ALL") == ["an", "joined", "index", "all"]
    assert content_words("IT WAS A LOUD HEADLINE") == ["loud", "headline"]  # capitals throughout: no names
    assert "four" not in content_words("a four-year deal")


def test_questions_assert_nothing():
    assert assertions("Will Sable list its shares? resolved YES", "") == "resolved YES"
    # a question cut off at the snippet's end, split at an abbreviation, is dropped whole
    assert assertions("The High Court granted review in A v. B", "Does the U.S. statute bar late appeals") == \
        "The High Court granted review in A v. B"
    assert assertions("Whether the rule applies to late filers", "") == ""
    assert assertions("Rates rose. Is a cut near? Analysts split.", "") == "Rates rose. Analysts split."


def test_event_verbs_and_polarity():
    assert event_verbs("Tarrow Mills left the index and United Foods joined it") == ["left", "joined"]
    assert event_verbs("The hundred-year bond was reported on 2020-01-03") == ["reported"]
    assert polarity("The board did not renew the pact") == {"not"}
    assert polarity("The panel ruled against the insurer and didn't say why") == {"against", "not"}
    assert polarity("The panel ruled for the insurer") == frozenset()


# -- support ---------------------------------------------------------------------------------


def test_a_restated_document_supports_with_its_day_and_weights(layer, index):
    terms = layer.terms("Quillon Motors agreed to acquire Brackenridge Optics for $2.4 billion.")
    (hit,) = [h for h in index.search("Quillon Brackenridge", k=3) if h.doc_id == "w-acq"]
    s = layer.support(terms, hit)
    assert s is not None and s.score == 1.0 and s.day == dt.date(2018, 3, 2) and s.consistent
    # a name is worth more than a common word: dropping the company costs more than dropping "shares"
    rare = layer.terms("Quillon Motors agreed to acquire Zephyrine Optics for $2.4 billion.")
    assert layer.score(rare, hit).score < 0.9


def test_support_needs_every_number_the_same_event_and_polarity(layer, index):
    hit = {h.doc_id: h for h in index.search("Quillon Brackenridge Halberd Tarrow Meridian", k=20)}
    assert layer.support(layer.terms("Quillon Motors agreed to acquire Brackenridge Optics for $3.1 billion."), hit["w-acq"]) is None
    assert layer.support(layer.terms("Tarrow Mills joined the Meridian 400 index."), hit["w-leave"]) is None
    assert layer.support(layer.terms("Tarrow Mills left the Meridian 400 index."), hit["w-leave"]) is not None
    assert layer.support(layer.terms("Halberd Foods renewed its supply pact with Ferrow Farms."), hit["w-pact"]) is None
    assert layer.support(layer.terms("Halberd Foods did not renew its supply pact with Ferrow Farms."), hit["w-pact"]) is not None


def test_a_document_before_a_period_the_claim_names_does_not_date_it(layer, index):
    terms = layer.terms("Norrin Air unveiled its long-range passenger jet in March 2019.")
    hits = {h.doc_id: h for h in index.search("Norrin Air jet", k=5)}
    assert not layer.support(terms, hits["w-jet-old"]).consistent
    assert layer.support(terms, hits["w-jet"]).consistent


# -- verdicts --------------------------------------------------------------------------------


def test_supported_before_the_cutoff_is_clean_dated_by_the_earliest_document(layer):
    v = layer.check("Quillon Motors agreed to acquire Brackenridge Optics for $2.4 billion.", dt.date(2019, 6, 1))
    assert v.effective_date == dt.date(2018, 3, 2) and not v.outcome
    assert "on or before the cutoff" in v.reason and "w-acq (2018-03-02, support 1.00)" in v.reason


def test_supported_only_after_the_cutoff_is_leaked_dated_by_the_earliest_document(layer):
    v = layer.check("Dario Velk signed a three-year, $45 million contract with the Harriers.", dt.date(2021, 6, 30))
    assert v.effective_date == dt.date(2021, 7, 3)
    assert "only after the cutoff" in v.reason and "l-velk (2021-07-03" in v.reason
    # with the cutoff after the signing the same claim is clean
    assert layer.check("Dario Velk signed a three-year, $45 million contract with the Harriers.",
                       dt.date(2021, 7, 3)).effective_date == dt.date(2021, 7, 3)


def test_a_dated_claim_is_never_leaked_by_the_corpus(layer):
    # the text names its own date: that is the date logic's to judge, not the corpus's
    assert layer.check("Calder Reserve cut its lending rate by 0.25 percentage point in 2021.", dt.date(2020, 1, 1)) is None
    assert layer.check("Calder Reserve cut its lending rate by 0.25 percentage point.", dt.date(2020, 1, 1)) is not None


def test_a_source_that_starts_after_the_cutoff_cannot_show_a_leak(layer):
    # the forum only publishes from 2023: its silence before a 2022 cutoff means nothing
    assert layer.check("Velmont Bank closed its last branch in Corran.", dt.date(2022, 6, 1)) is None
    assert layer.check("Velmont Bank closed its last branch in Corran.", dt.date(2023, 8, 1)) is not None


def test_another_step_of_the_same_case_and_questions_do_not_support(layer):
    cutoff = dt.date(2019, 3, 1)
    # granted before the cutoff, decided after: the decision leaks, the grant does not date it clean
    v = layer.check("The High Court decided Ostrander v. Pell.", cutoff)
    assert v.effective_date == dt.date(2019, 6, 20)
    assert layer.check("Lina Ostrander filed late appeals by mail.", cutoff) is None  # only in a question
    assert layer.check("Sable Dynamics listed its shares.", dt.date(2023, 1, 1)) is None


def test_unsupported_short_and_failed_lookups_say_nothing():
    class Failing:
        def search(self, query, *, k=5, as_of=None):
            raise SearchError("offline")

    failing = CorpusLayer(Failing())
    assert failing.check("Quillon Motors acquired Brackenridge Optics.", dt.date(2019, 1, 1)) is None
    assert failing.n_errors == 1 and "offline" in failing.last_error
    assert CorpusLayer(Failing()).check("Rates.", dt.date(2019, 1, 1)) is None  # too short to look up: no search
    with pytest.raises(ValueError, match="min_support"):
        CorpusLayer(Failing(), min_support=0)


def test_other_backends_search_twice_and_weigh_words_alike():
    hits = [SearchHit("a", "Ferrow Farms opened a dairy", "", "2018-05-01", 1.0, "x"),
            SearchHit("b", "Ferrow Farms opened a cheese plant", "", "2020-05-01", 1.0, "x")]

    class Listed:
        calls: list = []

        def search(self, query, *, k=5, as_of=None):
            self.calls.append(as_of)
            return [h for h in hits if as_of is None or h.published_at <= str(as_of)]

    backend = Listed()
    layer = CorpusLayer(backend)
    v = layer.check("Ferrow Farms opened a cheese plant.", dt.date(2019, 1, 1))
    assert v.effective_date == dt.date(2020, 5, 1) and backend.calls == [dt.date(2019, 1, 1), None]
    assert [s.doc_id for s in layer.supporting("Ferrow Farms opened a dairy.")] == ["a"]


def test_open_corpus_layer_reads_a_saved_index(index, tmp_path):
    index.save(tmp_path / "bm25")
    layer = open_corpus_layer(tmp_path / "bm25", k=5)
    assert layer.k == 5 and layer.min_support == MIN_SUPPORT
    assert layer.check("Tarrow Mills left the Meridian 400 index.", dt.date(2020, 1, 1)).effective_date == dt.date(2020, 8, 14)


# -- in the pipeline -------------------------------------------------------------------------


def test_corpus_layer_comes_after_grounded_and_before_rules(layer):
    fact = "Tarrow Mills left the Meridian 400 index."
    cutoff = dt.date(2020, 1, 1)
    v = verify_claim(fact, "2019-06-01", cutoff, layers=("grounded", "corpus", "rules"), corpus=layer)
    assert v["layer"] == "corpus" and v["verdict"] == "leaked" and v["effective_date"] == "2020-08-14"
    assert "w-leave" in v["reason"]

    class Grounded:
        def check(self, fact, instance):
            return GroundedVerdict(dt.date(2019, 12, 2), "from the data")

    g = verify_claim(fact, "2019-06-01", cutoff, grounding=Grounded(), layers=("grounded", "corpus", "rules"), corpus=layer)
    assert g["layer"] == "grounded" and g["verdict"] == "clean"
    # not configured: the declared date stands as before
    d = verify_claim(fact, "2019-06-01", cutoff, layers=("grounded", "rules"), corpus=layer)
    assert d["layer"] == "declared" and d["verdict"] == "clean"
    # a claim the corpus does not hold falls through to the rules
    r = verify_claim("Ferrow Farms sold its herd.", None, cutoff, layers=("corpus", "rules"), corpus=layer)
    assert r["layer"] != "corpus"


def test_corpus_evidence_outranks_a_plausibility_rule(layer):
    # the rules put quarterly results two weeks after the quarter; this bank's were public earlier
    fact = "Calder Bank reported fourth-quarter 2020 profit of $1.2 billion."
    cutoff = dt.date(2021, 1, 10)
    assert verify_claim(fact, None, cutoff, layers=("rules",))["verdict"] == "leaked"
    v = verify_claim(fact, None, cutoff, layers=("corpus", "rules"), corpus=layer)
    assert v["layer"] == "corpus" and v["verdict"] == "clean" and v["effective_date"] == "2021-01-08"


def test_verify_run_and_table_need_the_index_and_pass_it_on(layer):
    run = pd.DataFrame([{
        "instance_id": "i1", "task": "stock", "method": "m", "model": "x", "cutoff_date": "2020-01-01",
        "parse_status": "ok", "reasoning": "",
        "evidence": json.dumps([{"id": 1, "fact": "Tarrow Mills left the Meridian 400 index.", "source_date": "2019-05-01"}]),
    }])
    with pytest.raises(ValueError, match="corpus"):
        verify_run(run, {"i1": {"cutoff_date": "2020-01-01"}}, layers=("corpus", "rules"))
    out = verify_run(run, {"i1": {"cutoff_date": "2020-01-01"}}, layers=("corpus", "rules"), corpus=layer)
    assert out["layer"].tolist() == ["corpus"] and out["leaked"].tolist() == [True]
    table = pd.DataFrame([{"task": "stock", "instance_id": "i1", "fact": "Tarrow Mills left the Meridian 400 index.",
                           "declared_date_raw": "2019-05-01", "cutoff_date": "2020-01-01"}])
    with pytest.raises(ValueError, match="corpus"):
        verify_table(table, {}, {}, ("corpus",))
    assert verify_table(table, {}, {}, ("corpus", "rules"), corpus=layer)["verdict"].tolist() == ["leaked"]


# -- paraphrases and new terms ------------------------------------------------------------------

NEWS = [_doc(f"n-fill-{i}", f"{2015 + i % 5}-{1 + i % 12:02d}-1{i % 9}", f"Markets wrap {i}: shares {['rise', 'fall', 'steady'][i % 3]} as traders weigh rates",
             source="reuters") for i in range(60)]
NEWS += [
    _doc("n-sue", "2020-02-11", "Regulators sue to stop Quillon Motors' takeover of Brackenridge Optics", source="reuters"),
    _doc("n-old", "2018-04-02", "Tarrow Mills opens plant in Corran", source="reuters"),
]
NEWS += [_doc(f"n-virus-{i}", f"2020-0{1 + i % 6}-2{i % 9}", f"Zervaxis outbreak {i} hits travel and trade", source="reuters") for i in range(6)]


@pytest.fixture(scope="module")
def news_layer() -> CorpusLayer:
    return CorpusLayer(BM25Search(pd.DataFrame(NEWS, columns=CORPUS_COLUMNS)))


def test_a_paraphrase_of_a_later_headline_is_dated_by_it(news_layer):
    # other verbs and nouns, the clauses reordered, a tense change, words dropped and added
    fact = "Quillon Motors' takeover of Brackenridge Optics was challenged by regulators."
    v = news_layer.check(fact, dt.date(2019, 11, 30))
    assert v is not None and v.effective_date == dt.date(2020, 2, 11) and "supported only after the cutoff" in v.reason
    # the same names with another event is no paraphrase: a few shared names are not enough
    assert news_layer.check("Quillon Motors reported record car sales and Brackenridge Optics hired a new chief.",
                            dt.date(2019, 11, 30)) is None


def test_a_term_is_dated_by_its_first_appearance_in_the_news(news_layer):
    v = news_layer.check("Airlines are cancelling flights as zervaxis travel curbs spread.", dt.date(2019, 11, 30))
    assert v is not None and v.effective_date == dt.date(2020, 1, 20) and "first appears" in v.reason
    assert news_layer.new_term("Airlines are cancelling flights as zervaxis travel curbs spread.", dt.date(2020, 6, 30)) is None
    # a name written with a capital is no term: a person can be old and unreported
    assert news_layer.new_term("Zervaxis Holdings opened an office.", dt.date(2019, 11, 30)) is None


def test_a_claim_must_say_enough_to_be_dated_by_a_document(news_layer):
    # a bare name asserts nothing, however exactly a document holds it
    assert news_layer.check("Quillon Motors", dt.date(2019, 11, 30)) is None
    # only common words: it fits many events, years apart
    assert news_layer.check("Shares rise as traders weigh rates", dt.date(2014, 11, 30)) is None


def test_a_term_needs_a_source_that_was_publishing_through_the_cutoff():
    # reuters stops in mid-2020 and another source starts in 2022: a word it first uses then is
    # not new to a 2021 cutoff (nobody was watching in between)
    docs = [_doc(f"r-{i}", f"{2017 + i % 4}-{1 + i % 12:02d}-0{1 + i % 9}", f"Markets wrap {i}: shares steady", source="reuters")
            for i in range(48) if f"{2017 + i % 4}" < "2020" or i % 12 < 6]
    docs += [_doc(f"d-{i}", f"2022-0{1 + i % 6}-1{i % 9}", f"Vendors report quexolite shortages {i}", source="reddit")
             for i in range(8)]
    layer = CorpusLayer(BM25Search(pd.DataFrame(docs, columns=CORPUS_COLUMNS)))
    assert layer.new_term("Vendors report quexolite shortages across the region.", dt.date(2021, 6, 30)) is None


def test_a_term_absent_from_sparse_news_is_not_new():
    # one headline a month for years; the word appears five times, spread over three years
    docs = [_doc(f"w-{y}-{m}", f"{y}-{m:02d}-15", f"Markets wrap {y} {m}: shares steady", source="wsj")
            for y in range(2014, 2022) for m in range(1, 13)]
    docs += [_doc(f"q-{i}", f"{2019 + i % 3}-0{1 + i}-20", f"Vendors report quexolite shortages {i}", source="wsj") for i in range(5)]
    layer = CorpusLayer(BM25Search(pd.DataFrame(docs, columns=CORPUS_COLUMNS)))
    assert layer.new_term("Vendors report quexolite shortages across the region.", dt.date(2018, 6, 30)) is None
