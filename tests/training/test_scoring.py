"""Completion scoring for the TEMPO reward (anachron.training.scoring) on hand-written legal
instances: the real parser, verifier (grounded + rules layers) and metrics, several completions
per instance."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from anachron.tables import INSTANCE_COLUMNS, SCORE_COLUMNS, ParseStatus
from anachron.tasks.registry import get_task
from anachron.training.rewards import batch_rewards
from anachron.training.scoring import score_completions

TASK = get_task("legal")


def _instance(iid: str, case: str, petitioner: str, respondent: str, decided: str, cutoff: str, wins: int) -> dict:
    inputs = {
        "kind": "scotus", "court": "Supreme Court of the United States", "case_name": case, "term": int(decided[:4]) - 1,
        "docket": iid[-7:], "petitioner": petitioner, "respondent": respondent,
        "lower_court": "United States Court of Appeals for the Eighth Circuit",
        "facts": f"{petitioner} sued {respondent} over the denial of a flood insurance claim.",
        "question": "Does the federal flood statute preempt state bad-faith claims?",
    }
    label = {"petitioner_wins": wins, "outcome": "petitioner" if wins else "respondent", "decision_date": decided,
             "label_source": "scdb", "party_winning": wins}
    return {"instance_id": iid, "task": "legal", "split": "train", "cutoff_date": cutoff,
            "inputs": json.dumps(inputs), "label": json.dumps(label), "provenance": "{}"}


@pytest.fixture(scope="module")
def instances() -> pd.DataFrame:
    rows = [
        _instance("legal-train-scotus-2018-18-1234", "Hartwell v. Quarry Mutual Insurance Co.", "Dana Hartwell",
                  "Quarry Mutual Insurance Co.", "2019-06-10", "2019-06-09", 1),
        _instance("legal-train-scotus-2016-16-0777", "Okafor v. Linden Township", "Ada Okafor", "Linden Township",
                  "2017-03-20", "2017-03-19", 0),
    ]
    return pd.DataFrame(rows, columns=INSTANCE_COLUMNS).set_index("instance_id", drop=False)


A, B = "legal-train-scotus-2018-18-1234", "legal-train-scotus-2016-16-0777"
CERT = {"id": 2, "fact": "The Supreme Court granted certiorari in October 2018.", "source_date": "2018-10-01"}
RULING = {"id": 1, "fact": "The Eighth Circuit ruled for the insurer in March 2018.", "source_date": "2018-03-14"}
REASONING = "The appeals court sided with the insurer [1], and the grant of review [2] favours the petitioner."


def completion(evidence: list[dict], prediction: object = 0.7, reasoning: str = REASONING) -> str:
    return json.dumps({"evidence": evidence, "reasoning": reasoning, "prediction": prediction})


def undate(item: dict, fact: str) -> dict:
    """The same evidence item with its dates removed (no date in the text, no source_date)."""
    return {"id": item["id"], "fact": fact, "source_date": None}


def test_clean_leaked_undated_and_blurred_completions(instances):
    clean = completion([RULING, CERT])
    leaked = completion([RULING, {"id": 2, "fact": "The Supreme Court issued its opinion in the case in July 2019.",
                                  "source_date": "2019-07-01"}])
    undated = completion([undate(RULING, "The Eighth Circuit ruled for the insurer."),
                          undate(CERT, "The Supreme Court granted certiorari.")])
    blurred = completion([RULING, {"id": 2, "fact": "The Supreme Court heard argument in 2019.", "source_date": "2019"}])
    scores, frame = score_completions(TASK, instances, [A] * 4, [clean, leaked, undated, blurred])
    c, lk, ud, bl = scores
    assert c.parse_status == ParseStatus.OK and c.valid and c.leak_count == 0
    assert c.n_evidence == 2 and c.coverage == 1.0 and c.reasoning_words == len(REASONING.split())
    assert c.perf == pytest.approx(1 - 0.3**2)  # legal Perf: 1 - (p - y)^2, petitioner won
    assert lk.leak_count == 1 and frame.loc[1, "n_leaked"] == 1
    assert ud.leak_count == 2 and frame.loc[2, "n_undated"] == 2 and frame.loc[2, "n_leaked"] == 0
    assert bl.leak_count == 1 and frame.loc[3, "n_ambiguous"] == 1
    # the frame: one row per completion, original ids, positions, the strict count
    assert list(frame.columns[: len(SCORE_COLUMNS)]) == SCORE_COLUMNS
    assert frame["instance_id"].tolist() == [A] * 4 and frame["completion_index"].tolist() == [0, 1, 2, 3]
    assert frame["leak_count"].tolist() == [0, 1, 2, 1]
    assert frame["olr_strict"].tolist() == pytest.approx([0.0, 0.5, 1.0, 0.5])
    # through the reward: the honest completion beats its undated and blurred twins
    rewards, groups = batch_rewards(scores)
    assert groups[0].mode == "leakage" and rewards[0] > max(rewards[1:])
    honest_alone = batch_rewards([c, c])[0][0]
    assert batch_rewards([c, ud])[0][1] < honest_alone and batch_rewards([c, bl])[0][1] < honest_alone


def test_the_grounded_decision_check_applies_by_default(instances):
    outcome = completion([{"id": 1, "fact": "The Supreme Court ruled in favor of Dana Hartwell in Hartwell v. Quarry Mutual "
                                            "Insurance Co.", "source_date": "2019-01-10"}, CERT])
    [s], _ = score_completions(TASK, instances, [A], [outcome])
    assert s.leak_count == 1  # states the instance's own outcome, whatever its declared date
    [s], _ = score_completions(TASK, instances, [A], [outcome], layers=("rules",))
    assert s.leak_count == 0  # without the grounded layer only the (pre-cutoff) dates speak


def test_reasoning_leaks_are_counted_apart(instances):
    text = completion([RULING, CERT], reasoning="The insurer won below [1]. The Court heard argument on 2019-08-01 [2].")
    [s], frame = score_completions(TASK, instances, [A], [text])
    assert s.leak_count == 0 and s.reasoning_leaks >= 1 and frame.loc[0, "n_reasoning_leaked"] == s.reasoning_leaks


def test_garbage_text_is_a_parse_status_not_a_crash(instances):
    texts = ["I think the petitioner wins.", "", None, '{"evidence": [', completion([RULING], prediction=1.7)]
    scores, frame = score_completions(TASK, instances, [A] * 5, texts, ["stop", "stop", None, "length", "stop"])
    assert [s.parse_status for s in scores[:3]] == [ParseStatus.NOT_JSON, ParseStatus.EMPTY, ParseStatus.EMPTY]
    assert not any(s.valid for s in scores) and all(math.isnan(s.perf) for s in scores)
    assert all(s.leak_count == 0 and s.n_evidence == 0 for s in scores[:4])
    assert scores[3].overlong and not scores[3].near_miss  # cut off before a single complete item: degenerate
    bad = scores[4]
    assert bad.parse_status == ParseStatus.INVALID_PREDICTION and bad.evidence_usable and bad.n_evidence == 1 and bad.near_miss
    assert frame["overlong"].tolist() == [False, False, False, True, False]
    rewards, groups = batch_rewards(scores)
    assert groups[0].mode == "failed" and all(r < 0 for r in rewards)


def test_completions_of_one_instance_are_scored_separately(instances):
    clean_a = completion([RULING, CERT], prediction=0.9)
    leak_a = completion([RULING, {"id": 2, "fact": "The Court decided the case on June 10, 2019.", "source_date": "2019-06-10"}],
                        prediction=0.2)
    clean_b = completion([{"id": 1, "fact": "Linden Township adopted the ordinance in 2014.", "source_date": "2014-05-01"}],
                         prediction=0.3, reasoning="The ordinance [1] is old.")
    scores, frame = score_completions(TASK, instances, [A, B, A], [clean_a, clean_b, leak_a])
    assert [s.instance_id for s in scores] == [A, B, A]
    assert [s.leak_count for s in scores] == [0, 0, 1]
    assert scores[0].perf == pytest.approx(1 - 0.1**2) and scores[2].perf == pytest.approx(1 - 0.8**2)
    assert scores[1].perf == pytest.approx(1 - 0.3**2) and scores[1].n_evidence == 1  # B: respondent won
    assert frame["n_claims"].tolist() == [2, 1, 2]
    empty, empty_frame = score_completions(TASK, instances, [], [])
    assert empty == [] and len(empty_frame) == 0


def test_misaligned_or_unknown_input_is_a_caller_error(instances):
    with pytest.raises(ValueError, match="not aligned"):
        score_completions(TASK, instances, [A, A], ["x"])
    with pytest.raises(ValueError, match="not in the task's instances"):
        score_completions(TASK, instances, ["nope"], ["x"])


def test_cut_off_answer_with_complete_evidence_is_a_near_miss_and_rambling_is_not(instances):
    full = completion([RULING, CERT])
    cut = full[: full.index('"reasoning"') + 20]  # two complete evidence items, then cut off
    ramble = "The case is about flood insurance and the petitioner " * 5
    scores, frame = score_completions(TASK, instances, [A, A, A], [cut, ramble, cut], ["length", "length", "stop"])
    assert [s.valid for s in scores] == [False, False, False]
    assert scores[0].n_recovered == 2 and scores[0].near_miss
    assert scores[1].n_recovered == 0 and not scores[1].near_miss  # cut off, nothing well-formed: degenerate
    assert not scores[2].near_miss  # complete items but not cut off: it stopped on its own, broken
    assert frame["n_recovered"].tolist() == [2, 0, 2]


def test_a_dropped_date_a_blurred_date_or_a_leak_moved_into_the_reasoning_never_gains_reward(instances):
    """With the verifier evaluation uses (the default verify.layers, the corpus layer over a small
    hand-written corpus when it is one of them), a twin whose only change is a dropped date, a
    blurred date or an evidence item moved into the reasoning earns at most what the original earns,
    in one group with it and alone."""
    from anachron.config import validate_config
    from anachron.retrieval.corpus import CORPUS_COLUMNS
    from anachron.retrieval.search import BM25Search
    from anachron.verify.layers.corpus import CorpusLayer

    layers = tuple(x for x in validate_config({})["verify"]["layers"] if x != "llm")

    def doc(doc_id, day, title):
        return {"doc_id": doc_id, "published_at": day, "title": title, "text": "", "source": "wire", "kind": "headline",
                "entities": "[]", "valid_from": None, "valid_to": None, "restates": None}

    docs = [doc(f"f{i}", f"2017-0{1 + i % 9}-1{i % 9}", f"Council weighs zoning change {i} for the riverfront") for i in range(20)]
    docs += [doc("r1", "2019-06-10", "Supreme Court sides with Dana Hartwell against Quarry Mutual in flood insurance case")]
    corpus = CorpusLayer(BM25Search(pd.DataFrame(docs, columns=CORPUS_COLUMNS))) if "corpus" in layers else None

    leak = {"id": 2, "fact": "The Supreme Court ruled for Dana Hartwell on June 10, 2019.", "source_date": "2019-06-10"}
    twins = {
        "leaked": (completion([RULING, leak]), [
            completion([RULING, {"id": 2, "fact": "The Supreme Court ruled for Dana Hartwell.", "source_date": None}]),
            completion([RULING, {"id": 2, "fact": "The Supreme Court ruled for Dana Hartwell in mid-2019.", "source_date": "2019"}]),
            completion([RULING], reasoning=REASONING + " " + leak["fact"]),
        ]),
        "clean": (completion([RULING, CERT]), [
            completion([RULING, {"id": 2, "fact": "The Supreme Court granted certiorari.", "source_date": None}]),
            completion([RULING, {"id": 2, "fact": "The Supreme Court granted certiorari in 2018.", "source_date": "2018"}]),
            completion([RULING], reasoning=REASONING + " " + CERT["fact"]),
        ]),
    }
    for name, (base, variants) in twins.items():
        scores, _ = score_completions(TASK, instances, [A] * (1 + len(variants)), [base, *variants], layers=layers, corpus=corpus)
        original, rest = scores[0], scores[1:]
        assert original.valid and (original.leak_count > 0) == (name == "leaked")
        alone = batch_rewards([original])[0][0]
        for k, twin in enumerate(rest):
            assert twin.valid, (name, k)
            together, _ = batch_rewards([original, twin])
            assert together[1] <= together[0] + 1e-12, (name, k, together)
            assert batch_rewards([twin])[0][0] <= alone + 1e-12, (name, k)
