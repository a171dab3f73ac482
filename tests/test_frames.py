"""The shared table helpers of anachron.frames: the missing-value tests (each its own rule, the
table of the module docstring) and the required-columns check."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from anachron.frames import (
    is_blank,
    is_missing_scalar,
    is_na,
    is_na_or_nat,
    is_nan,
    is_null,
    missing_columns,
    na_text,
    require_columns,
    require_keys,
    text_or_empty,
    text_or_none,
)

VALUES = {
    "None": None, "nan": float("nan"), "np.nan64": np.float64("nan"), "np.nan32": np.float32("nan"),
    "pd.NA": pd.NA, "pd.NaT": pd.NaT, "np.NaT": np.datetime64("NaT"), "blank": "", "white": " \t",
    "text": "x", "zero": 0, "zero float": 0.0, "False": False,
}
#: value name -> what each test says (is_nan, is_null, is_na, is_na_or_nat, is_blank, is_missing_scalar)
EXPECTED = {
    "None":       (0, 1, 1, 1, 1, 1),
    "nan":        (1, 1, 1, 1, 1, 1),
    "np.nan64":   (1, 1, 1, 1, 1, 1),
    "np.nan32":   (0, 0, 0, 0, 0, 1),
    "pd.NA":      (0, 0, 1, 1, 1, 1),
    "pd.NaT":     (0, 0, 0, 1, 1, 1),
    "np.NaT":     (0, 0, 0, 0, 0, 1),
    "blank":      (0, 0, 0, 0, 1, 0),
    "white":      (0, 0, 0, 0, 1, 0),
    "text":       (0, 0, 0, 0, 0, 0),
    "zero":       (0, 0, 0, 0, 0, 0),
    "zero float": (0, 0, 0, 0, 0, 0),
    "False":      (0, 0, 0, 0, 0, 0),
}
TESTS = (is_nan, is_null, is_na, is_na_or_nat, is_blank, is_missing_scalar)


@pytest.mark.parametrize("name", list(VALUES))
def test_each_missing_value_test_counts_what_its_docstring_says(name):
    got = tuple(int(t(VALUES[name])) for t in TESTS)
    assert got == EXPECTED[name], dict(zip((t.__name__ for t in TESTS), got))
    assert all(type(t(VALUES[name])) is bool for t in TESTS)


def test_is_missing_scalar_on_what_pandas_cannot_answer_for_as_one_cell():
    assert not is_missing_scalar([]) and not is_missing_scalar([1, 2]) and not is_missing_scalar({"a": 1})
    assert is_missing_scalar([None]) and not is_missing_scalar(["x"])


def test_text_helpers():
    assert text_or_empty(None) == "" and text_or_empty(float("nan")) == "" and text_or_empty(" a ") == " a "
    assert text_or_empty(pd.NA) == "<NA>" and text_or_empty(3) == "3"
    assert text_or_none(" a ") == "a" and text_or_none("  ") is None and text_or_none(np.float64("nan")) is None
    assert [na_text(v) for v in (None, "", " N/A ", "n/a", "NA", "na", float("nan"), " x ")] == [
        None, None, None, None, None, "na", "nan", " x "]


def test_require_columns_names_what_is_missing_and_what_is_there():
    df = pd.DataFrame({"a": [1], "b": [2]})
    assert missing_columns(df, ["c", "a", "d"]) == ["c", "d"]
    require_columns(df, ["a", "b"], "t")
    with pytest.raises(ValueError, match=r"^t: missing required column\(s\) c, d \(found: a, b\)$"):
        require_columns(df, ["c", "a", "d"], "t")

    class Oops(Exception):
        pass

    with pytest.raises(Oops, match=r"^u: missing required column\(s\) c \(found: none\); do this$"):
        require_columns(pd.DataFrame(), ["c"], "u", error=Oops, hint="do this")


def test_require_keys_is_the_same_check_for_a_json_object():
    require_keys({"a": 1}, ["a"], "f.json")
    with pytest.raises(KeyError, match=r"f\.json: missing required key\(s\) b \(found: a\); fix it"):
        require_keys({"a": 1}, ["a", "b"], "f.json", error=KeyError, hint="fix it")


def test_json_lists_nonempty_answers_as_json_list_does():
    from anachron.frames import json_list, json_lists_nonempty

    cells = ["[]", "", "  ", None, float("nan"), "[ ]", '["d1"]', "[1, 2]", [], ["x"], ' ["a"] ']
    assert json_lists_nonempty(cells) == [len(json_list(v)) > 0 for v in cells]
    with pytest.raises(ValueError):
        json_lists_nonempty(["[]", "[not json"])
