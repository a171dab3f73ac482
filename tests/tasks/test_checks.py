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
