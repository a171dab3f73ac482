"""SCDB/Oyez hardening: original-docket spellings, party acronyms and short
forms, vote counts. Inputs are small invented strings in the shape the sources write."""

from __future__ import annotations

import pytest

from anachron.names import acronyms, expand_short_forms, is_acronym_of
from anachron.sources.dockets import normalize_docket
from anachron.sources.oyez.case_document import parse_case
from anachron.sources.oyez.votes import check_votes, decision_votes
from anachron.sources.oyez.winning_party import decide_outcome, match_winning_party


@pytest.mark.parametrize(
    "raw",
    ["22O141", "No. 141, Orig.", "141 Orig", "141-Orig", "22O141 ORIG", "141, ORIG.", "141orig", "141_orig",
     "141 Original", "Orig. 141", "No. 22O141", "22O0141", "141–Orig.", "  no. 141 orig  "],
)
def test_every_original_docket_spelling_has_one_key(raw):
    assert normalize_docket(raw) == "141-orig"


def test_docket_keys_that_must_stay_apart():
    assert normalize_docket("22 Orig.") == "22-orig"  # No. 22, Original: not the Court's "22O" prefix
    assert normalize_docket("No. 17-1268") == "17-1268"
    assert normalize_docket("17-1268") != normalize_docket("1268 Orig")


def test_acronyms_keep_or_drop_small_words():
    assert acronyms("Americans for Prosperity Foundation") == {"afpf", "apf"}
    assert "epa" in acronyms("U.S. Environmental Protection Agency, et al.")
    assert acronyms("Gale") == set()
    assert is_acronym_of("N.L.R.B.", "National Labor Relations Board")
    assert not is_acronym_of("Nlrb", "National Labor Relations Board")  # a word, not written as an acronym
    assert expand_short_forms("U.S. Dep't of Labor") == "united states department of labor"
    assert expand_short_forms("Nat'l Ass'n of Mfrs.") == "national association of manufacturers"


@pytest.mark.parametrize(
    "winner, pet, resp, side",
    [
        ("EPA", "Ridgeline Power Co.", "Environmental Protection Agency, et al.", "respondent"),
        ("NLRB", "National Labor Relations Board", "Quarry Tile Inc.", "petitioner"),
        ("AFPF", "Americans for Prosperity Foundation", "Marla Vance", "petitioner"),
        ("Environmental Protection Agency", "Ridgeline Power Co.", "EPA", "respondent"),
        ("United States", "U.S.", "Tobin Reyes", "petitioner"),
        ("U.S.", "Tobin Reyes", "United States", "respondent"),
        ("Nat'l Ass'n of Mfrs.", "National Association of Manufacturers", "Dept. of Defense", "petitioner"),
        ("Orchard Guild", "Tobin Reyes", "Marla Vance", None),  # matches nobody: unresolved, not "respondent"
        ("ZQX", "Tobin Reyes", "Marla Vance", None),
    ],
)
def test_winner_by_acronym_or_short_form(winner, pet, resp, side):
    assert match_winning_party(winner, pet, resp, f"{pet} v. {resp}") == side


def test_unmatched_winner_stays_unresolved():
    assert decide_outcome([{"winning_party": "Orchard Guild"}], "Tobin Reyes", "Marla Vance", "Reyes v. Vance") == (
        None, "unmatched_winner", "Orchard Guild")


@pytest.mark.parametrize(
    "maj, mino, check",
    [
        (5, 4, "ok"),
        (9, 0, "ok"),
        (4, 4, "short_court: 8 of 9 justices voted (a recusal or a vacancy)"),  # equally divided after a recusal
        (5, 3, "short_court: 8 of 9 justices voted (a recusal or a vacancy)"),
        (4, 3, "short_court: 7 of 9 justices voted (a recusal or a vacancy)"),
        (0, 0, "missing"),
        (None, None, "missing"),
        (6, 4, "invalid: 6-4 is more than the Court's 9 votes"),
        (0, 9, "invalid: majority 0 smaller than minority 9"),
        (3, 2, "invalid: 3-2 is fewer votes than the quorum of 6"),
        (5.5, 3, "invalid: 5.5 is not a whole number of votes"),
        ("five", 4, "invalid: 'five' is not a count"),
        (-1, 4, "invalid: -1 is not a whole number of votes"),
    ],
)
def test_vote_counts_are_checked(maj, mino, check):
    assert check_votes(maj, mino)[2] == check


def test_case_row_carries_votes():
    assert decision_votes([{"majority_vote": 0, "minority_vote": 0}, {"majority_vote": 6, "minority_vote": 3}]) == (6, 3, "ok")
    doc = {"name": "Reyes v. Vance", "term": "2019", "docket_number": "19-1", "first_party": "Tobin Reyes",
           "second_party": "Marla Vance", "timeline": [],
           "decisions": [{"winning_party": "Reyes", "majority_vote": 5, "minority_vote": 3}]}
    row = parse_case(doc, "doc.json")
    assert (row["majority_votes"], row["minority_votes"], row["vote_check"]) == (5, 3, "short_court: 8 of 9 justices voted (a recusal or a vacancy)")
    assert row["oyez_outcome"] == "petitioner"
