"""An Oyez decision's vote counts, and whether they can be a Supreme Court vote."""

from __future__ import annotations

from typing import Any

from anachron.frames import is_null

#: Justices on the Court, and the quorum a decision needs (28 U.S.C. § 1).
COURT_SIZE = 9
QUORUM = 6


def _count(v: Any) -> int | None | str:
    """A vote count as an int, None when absent, or the reason it is not a count."""
    if is_null(v) or v == "":
        return None
    if isinstance(v, bool):
        return f"{v!r} is not a count"
    try:
        f = float(v)
    except (TypeError, ValueError):
        return f"{v!r} is not a count"
    if f != int(f) or f < 0:
        return f"{v!r} is not a whole number of votes"
    return int(f)


def check_votes(majority: Any, minority: Any) -> tuple[int | None, int | None, str]:
    """``(majority, minority, check)``: an Oyez decision's ``majority_vote`` / ``minority_vote``
    read as counts, and whether they can be a Supreme Court vote.

    ``check`` is ``"ok"`` (nine votes; a tie is an equally divided Court), ``"short_court: N of
    9 justices voted ..."`` (fewer than nine, a recusal or a vacancy, but at least the quorum
    of six: valid), ``"missing"``
    (no counts, or both 0: Oyez writes 0-0 when it has none) or ``"invalid: <reason>"``: a
    count that is not a whole number, more than nine votes, a majority smaller than the
    minority, or fewer votes than the quorum.
    """
    maj, mino = _count(majority), _count(minority)
    for c in (maj, mino):
        if isinstance(c, str):
            return None, None, f"invalid: {c}"
    if (maj or 0) == 0 and (mino or 0) == 0:
        return None, None, "missing"
    maj, mino = int(maj or 0), int(mino or 0)
    total = maj + mino
    if total > COURT_SIZE:
        return maj, mino, f"invalid: {maj}-{mino} is more than the Court's {COURT_SIZE} votes"
    if maj < mino:
        return maj, mino, f"invalid: majority {maj} smaller than minority {mino}"
    if total < QUORUM:
        return maj, mino, f"invalid: {maj}-{mino} is fewer votes than the quorum of {QUORUM}"
    if total < COURT_SIZE:
        return maj, mino, f"short_court: {total} of {COURT_SIZE} justices voted (a recusal or a vacancy)"
    return maj, mino, "ok"


def decision_votes(decisions: Any) -> tuple[int | None, int | None, str]:
    """:func:`check_votes` of the first decision in ``decisions`` with recorded counts (the
    main opinion comes first); ``(None, None, "missing")`` when none has counts."""
    for d in decisions or []:
        if isinstance(d, dict):
            got = check_votes(d.get("majority_vote"), d.get("minority_vote"))
            if got[2] != "missing":
                return got
    return None, None, "missing"
