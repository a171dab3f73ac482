import re
import json

import pandas as pd

from anachron.report.datasets import dataset_report
from anachron.tasks.checks import check_instances


def _row(iid, split, cutoff, inputs, task="salary"):
    return {"instance_id": iid, "task": task, "split": split, "cutoff_date": cutoff,
            "inputs": json.dumps(inputs), "label": "{}", "provenance": "{}"}


def test_clean_table_passes_and_report_counts_splits():
    df = pd.DataFrame([
        _row("a", "train", "2018-06-30", {"player": "A One", "year": 2018}),
        _row("b", "eval", "2019-06-30", {"player": "B Two", "year": 2019}),
        _row("c", "control", "2025-07-01", {"player": "C Three", "year": 2025}),
    ])
    assert check_instances("salary", df, {"m": "2024-06-30"}) == []
    report = dataset_report({"salary": df}, [], {})
    assert re.search(r"\| salary +\| control +\| +1 \|", report) and "all checks passed" in report


def test_violations_are_found():
    df = pd.DataFrame([
        _row("a", "train", "2019-06-30", {"player": "Same Guy", "year": 2019}),
        _row("b", "eval", "2019/06/30", {"player": "same guy", "year": 2019}),
        _row("c", "control", "2024-01-01", {"player": "C", "year": 2024}),
        _row("c", "eval", "2020-01-01", {"player": "D", "year": 2020}),
    ])
    problems = check_instances("salary", df, {"m": "2024-06-30"})
    text = "\n".join(problems)
    assert "duplicate instance ids" in text
    assert "not ISO" in text
    assert "knowledge cutoff" in text
    assert "player-years appear in both train and eval" in text


def test_report_shows_the_point_in_time_checks():
    df = pd.DataFrame([
        {**_row("a", "eval", "2031-06-29", {"player": "A One"}),
         "label": json.dumps({"signing_date": "2031-07-07", "cutoff_rule": "negotiating window"})},
        {**_row("b", "eval", "2031-12-01", {"player": "B Two"}),
         "label": json.dumps({"signing_date": "2031-12-02", "cutoff_rule": "late signing"})},
        {**_row("c", "train", "2031-10-08", {"player": "C Three"}),
         "label": json.dumps({"signing_date": "2031-07-01", "revised_value": True})},
    ])
    man = {"cutoff_rules": {"negotiating window": 2, "late signing": 1},
           "input_audit": {"fields": ["facts"], "layers": "rules", "findings_by_kind": {"later_content": 1},
                           "instances_flagged": 1, "instances_flagged_by_split": {"eval": 1}}}
    audit = pd.DataFrame([{"instance_id": "a", "field": "facts", "sentence": "It settled in\nMarch 2032.",
                           "kind": "later_content", "verdict": "leaked", "layer": "rules",
                           "reason": "mentions month 'March 2032'", "effective_date": "2032-03-01"}])
    report = dataset_report({"salary": df}, [], {"salary": man}, {"salary": audit})
    assert "negotiating window: 2; late signing: 1" in report
    assert "eval 1 of 2 earlier (median 7 days), 0 later; train 0 of 1 earlier (median 0 days), 1 later" in report
    assert "1 instances flagged (eval 1); findings: later_content 1" in report
    assert '`a` facts: "It settled in March 2032."' in report
    assert "`revised_value`): eval 0 of 2 (0.0%); train 1 of 1 (100.0%)" in report
    # a task whose inputs hold no text written by others
    assert "no free text" in dataset_report({"salary": df}, [], {"salary": {"input_audit": {"fields": []}}})
