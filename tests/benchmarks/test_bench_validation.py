"""The validation-suite benchmark's scoring: Wilson intervals, Cohen's kappa, the split, and recall /
false positives / OLR error per task from claims matched to labelled evidence items."""

from __future__ import annotations

import importlib.util
import json
import sys

import pandas as pd
import pytest

from conftest import REPO

spec = importlib.util.spec_from_file_location("bench_validation", REPO / "benchmarks" / "bench_validation.py")
bench = importlib.util.module_from_spec(spec)
sys.modules["bench_validation"] = bench
spec.loader.exec_module(bench)


def test_wilson_and_kappa():
    lo, hi = bench.wilson(9, 10)
    assert lo == pytest.approx(0.5958, abs=1e-3) and hi == pytest.approx(0.9821, abs=1e-3)
    assert bench.wilson(0, 0) == (None, None)
    assert bench.cohen_kappa([True, False, True, False], [True, False, True, False]) == 1.0
    assert bench.cohen_kappa([True, True, False, False], [True, False, True, False]) == 0.0
    assert bench.cohen_kappa([True, True], [True, True]) is None  # no variance


def _suite(tmp_path):
    answers = [{"answer_id": f"a{i}", "instance_id": f"i{i}", "task": "legal", "cutoff_date": "2020-01-01",
                "completion": "{}"} for i in range(3)]
    (tmp_path / "answers_t.jsonl").write_text("\n".join(json.dumps(a) for a in answers))
    labels = [{"answer_id": f"a{i}", "item_id": k, "leaked": k == 1, "kind": "leak_outcome" if k == 1 else "clean_dated"}
              for i in range(3) for k in (1, 2)]
    (tmp_path / "labels_author_t.jsonl").write_text("\n".join(json.dumps(r) for r in labels))
    second = [dict(r, leaked=(r["leaked"] if r["answer_id"] != "a0" else not r["leaked"])) for r in labels]
    (tmp_path / "labels_second_t.jsonl").write_text("\n".join(json.dumps(r) for r in second))
    (tmp_path / "split_t.json").write_text(json.dumps({"dev": ["a0", "a1"], "heldback": ["a2"]}))
    return tmp_path


def test_the_split_and_the_scores(tmp_path):
    answers, author, second = bench.load_suite(_suite(tmp_path), "dev")
    assert sorted(a["answer_id"] for a in answers) == ["a0", "a1"] and len(author) == 4
    # the verifier flags i0's leak and i1's clean item: recall 1/2, one false positive of 2
    claims = pd.DataFrame([
        {"task": "legal", "instance_id": "i0", "answer_id": "a0", "source": "evidence", "evidence_id": 1, "leaked": True, "verdict": "leaked"},
        {"task": "legal", "instance_id": "i0", "answer_id": "a0", "source": "evidence", "evidence_id": 2, "leaked": False, "verdict": "clean"},
        {"task": "legal", "instance_id": "i1", "answer_id": "a1", "source": "evidence", "evidence_id": 1, "leaked": False, "verdict": "undated"},
        {"task": "legal", "instance_id": "i1", "answer_id": "a1", "source": "evidence", "evidence_id": 2, "leaked": True, "verdict": "leaked"},
        {"task": "legal", "instance_id": "i1", "answer_id": "a1", "source": "reasoning", "evidence_id": 0, "leaked": True, "verdict": "leaked"},
    ])
    got = bench.score(claims, answers, author, second)["legal"]
    assert got["recall"] == 0.5 and got["fp_rate"] == 0.5 and got["strict_recall"] == 1.0
    assert got["olr_error_mean"] == pytest.approx((0.0 + 0.0) / 2)  # OLR 1/2 both ways in each answer
    assert got["flag_rate_by_kind"] == {"clean_dated": 0.5, "leak_outcome": 0.5}
    assert got["flagged_by_kind"] == {"clean_dated": [1, 2], "leak_outcome": [1, 2]}
    assert got["kappa_items"] == 4 and got["kappa"] == 0.0  # the second labeller flipped a0's items


def test_rounds_give_each_instance_one_answer_per_replay():
    answers = [{"answer_id": a, "instance_id": i} for a, i in [("x1", "i0"), ("x2", "i1"), ("y1", "i0"), ("z1", "i0")]]
    got = [[a["answer_id"] for a in r] for r in bench.rounds(answers)]
    assert got == [["x1", "x2"], ["y1"], ["z1"]]
    assert all(len({a["instance_id"] for a in r}) == len(r) for r in bench.rounds(answers))


def test_errors_list_each_miss_and_false_alarm(tmp_path):
    answers, author, _ = bench.load_suite(_suite(tmp_path), "dev")
    claims = pd.DataFrame([
        {"task": "legal", "instance_id": "i0", "answer_id": "a0", "source": "evidence", "evidence_id": 1, "leaked": False,
         "verdict": "clean", "fact": "f1", "declared_date": "2019-01-01", "layer": "declared", "reason": "r1", "effective_date": None},
        {"task": "legal", "instance_id": "i0", "answer_id": "a0", "source": "evidence", "evidence_id": 2, "leaked": True,
         "verdict": "leaked", "fact": "f2", "declared_date": None, "layer": "rules", "reason": "r2", "effective_date": "2021-01-01"},
        {"task": "legal", "instance_id": "i1", "answer_id": "a1", "source": "evidence", "evidence_id": 1, "leaked": True,
         "verdict": "leaked", "fact": "f3", "declared_date": None, "layer": "rules", "reason": "r3", "effective_date": "2021-01-01"},
    ])
    got = bench.errors(claims, author)
    assert [(e["error"], e["fact"]) for e in got] == [("miss", "f1"), ("false alarm", "f2")]
