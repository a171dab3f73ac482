"""normalize_docket: original-jurisdiction spellings with brackets or a repeated marker share
one key; ordinary dockets (with or without parentheses) keep theirs. Invented strings in the
shapes the Court, Oyez and SCDB write."""

from __future__ import annotations

import pytest

from anachron.sources.dockets import normalize_docket


@pytest.mark.parametrize(
    "raw",
    [
        # the marker or the whole docket in parentheses / brackets
        "22O141 (ORIG)", "141 (Orig.)", "(141 Orig)", "No. 141 (Original)", "141(orig)", "[141 Orig.]",
        "(No. 141, Orig.)", "(22O141)", "22O141 [Orig.]",
        # the marker repeated, or on both sides of the number
        "141 ORIG ORIG", "22O141 ORIG. ORIG", "141, Orig., Orig.", "141 Original Orig.", "Orig. 141 Orig.",
        "22O141 (orig.) orig",
        # the spellings handled before, unchanged
        "141 Orig", "No. 141, Orig.", "22O141", "22O141 ORIG", "Orig. 141", "22O0141", "141–Orig.",
    ],
)
def test_bracketed_and_repeated_original_markers_give_one_key(raw):
    assert normalize_docket(raw) == "141-orig"


@pytest.mark.parametrize(
    "raw,key",
    [
        ("17-1268", "17-1268"),
        ("No. 17-1268", "17-1268"),
        ("18-9526", "18-9526"),
        ("A-123", "a-123"),
        ("22 Orig.", "22-orig"),  # No. 22, Original: not the Court's "22O" prefix
        ("(22 Orig.)", "22-orig"),
        ("22O065 (ORIG)", "65-orig"),
        # parentheses beside an ordinary docket are kept, never read as an original docket
        ("17-1268 (2019)", "17-1268(2019)"),
        ("20-1199 (ORIG)", "20-1199(orig)"),
        ("17-1268 (Orig.) (Orig.)", "17-1268(orig.)(orig.)"),
        ("(141)", "(141)"),
        ("141 (1)", "141(1)"),
        ("141 Orig. (1)", "141orig.(1)"),
        ("141 orig 142", "141orig142"),
        ("141 (origin)", "141(origin)"),
        ("(Orig.)", "(orig.)"),
        ("", None),
        (None, None),
    ],
)
def test_ordinary_dockets_and_near_misses_keep_their_keys(raw, key):
    assert normalize_docket(raw) == key
