"""Which side an Oyez ``winning_party`` names, and the outcome of a case's decisions."""

from __future__ import annotations

import difflib
import re
from typing import Any

from anachron.frames import is_null
from anachron.names import expand_short_forms, is_acronym_of

#: ``oyez_outcome_note`` values.
NOTE_MATCHED = "matched"
NOTE_NO_DECISION = "no_decision"
NOTE_NO_WINNER = "no_winning_party"
NOTE_DISMISSED = "dismissed"
NOTE_UNMATCHED = "unmatched_winner"
NOTE_CONFLICT = "conflicting_decisions"

_WINNER_STOP = {
    "the", "of", "and", "et", "al", "inc", "llc", "co", "corp", "corporation", "company", "ltd", "lp",
    "ex", "rel", "v", "vs", "in", "re", "for", "a", "an", "on", "behalf",
}
_NOT_A_PARTY = {"dismissal", "dismissed", "none", "n/a", "na", "unclear", "vacated", "remanded"}


def _tokens(name: str, *, keep_stop: bool = False) -> list[str]:
    # abbreviations written out ("U.S." -> "united states", "Ass'n" -> "association"); dots go
    # without a space so that initials stay one token ("V.L." -> "vl")
    text = expand_short_forms(name.replace("&", " and "))
    return [t for t in text.split() if keep_stop or t not in _WINNER_STOP]


def _short_parties(case_name: str) -> tuple[str, str]:
    """The two sides of a case name split at " v. " (empty strings when it does not split)."""
    parts = re.split(r"\s+v(?:s)?\.?\s+", case_name or "", maxsplit=1)
    return (parts[0], parts[1]) if len(parts) == 2 else ("", "")


def _similarity(winner: str, candidate: str) -> float:
    """Share of the winner's name tokens found in the candidate (0..1), or the string ratio.

    An acronym on either side scores 1.0 against a name with those initials
    (:func:`anachron.names.is_acronym_of`: "EPA", "NLRB", "AFPF" for "Americans for
    Prosperity Foundation"); abbreviations are written out first ("U.S." = "United States").
    """
    wt, ct = _tokens(winner), _tokens(candidate)
    if not wt or not ct:
        return 0.0
    if is_acronym_of(winner, candidate) or is_acronym_of(candidate.split(",")[0], winner):
        return 1.0
    cset = set(ct)
    contained = sum(1 for t in wt if t in cset) / len(wt)
    ratio = difflib.SequenceMatcher(None, " ".join(wt), " ".join(ct)).ratio()
    return max(contained, ratio)


def is_not_a_party(winner: str) -> bool:
    """True for a ``winning_party`` value that names no party ("dismissal", "Dismissed", ...)."""
    return str(winner).lower().strip(". ") in _NOT_A_PARTY


def match_winning_party(
    winner: Any, petitioner: Any, respondent: Any, case_name: Any = "", *, threshold: float = 0.6, margin: float = 0.15
) -> str | None:
    """Which side ``winner`` (Oyez ``winning_party``) names: ``"petitioner"``, ``"respondent"`` or None.

    The winner is compared, by a fuzzy name similarity (share of its name tokens found, or
    the string-similarity ratio, whichever is higher; corporate suffixes, "et al.", "ex rel."
    ignored), with each side's full party name and with that side's short name in the case
    name ("Young" in "Young v. United Parcel Service"). The side with the higher score wins
    when that score is at least ``threshold`` and beats the other side by ``margin``;
    otherwise (ambiguous, or a non-party such as "dismissal") the result is None.
    """
    if is_null(winner):
        return None
    w = str(winner).strip()
    if not w or is_not_a_party(w):
        return None
    short_pet, short_resp = _short_parties(str(case_name or ""))
    pet = max(_similarity(w, str(petitioner or "")), _similarity(w, short_pet))
    resp = max(_similarity(w, str(respondent or "")), _similarity(w, short_resp))
    best = max(pet, resp)
    if best < threshold or abs(pet - resp) < margin:
        return None
    return "petitioner" if pet > resp else "respondent"


def decide_outcome(decisions: Any, petitioner: Any, respondent: Any, case_name: Any) -> tuple[str | None, str, str | None]:
    """``(oyez_outcome, note, raw_winners)`` from a case's ``decisions`` list.

    Every decision with a ``winning_party`` must map (:func:`match_winning_party`) to the
    same side; a case with several decisions (consolidated cases, plurality + majority)
    whose winners map to different sides, or with a winner that matches neither side, has
    no outcome. A winner written as several names separated by ";" (consolidated cases:
    "Wong; June") counts when the names that match a side all match the same one. A
    dismissal ("dismissal", "Dismissed") has no winner. ``note`` is one of ``matched``,
    ``no_decision``, ``no_winning_party``, ``dismissed``, ``unmatched_winner``,
    ``conflicting_decisions``.
    """
    if not decisions:
        return None, NOTE_NO_DECISION, None
    winners = [str(d.get("winning_party")).strip() for d in decisions if isinstance(d, dict) and d.get("winning_party")]
    raw = " | ".join(dict.fromkeys(winners)) or None
    if not winners:
        return None, NOTE_NO_WINNER, raw
    if all(is_not_a_party(w) for w in winners):
        return None, NOTE_DISMISSED, raw
    sides = []
    for w in winners:
        parts = [p.strip() for p in w.split(";") if p.strip()]
        matched = [m for m in (match_winning_party(p, petitioner, respondent, case_name) for p in parts) if m]
        if not matched or (len(parts) == 1 and len(matched) != 1):
            return None, NOTE_UNMATCHED, raw
        sides.extend(matched)
    if len(set(sides)) > 1:
        return None, NOTE_CONFLICT, raw
    return sides[0], NOTE_MATCHED, raw
