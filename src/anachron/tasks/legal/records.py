"""Legal: event grounding over every Supreme Court case the sources hold (:class:`CaseRecords`).

A claim that cites a case ("X v. Y") and states a step of it takes the date the records give
that step (docs/verification.md#event-grounding): a decision (a verb of deciding, an opinion, a
vote split of the Court: :func:`~anachron.tasks.legal.grounding._signals`, whose subject is the
Court, not a court below it) its decision day, an oral argument its argument day (not a party's
contention: "the government argued"), a grant of review its grant day. "The justices unanimously held in
Carr v. Saul that ..." is dated 2021-04-22 whatever the model declares. The records are the SCDB
cases (name, decision and argument days) and the Oyez cases (name, grant, argument and decision
days, the vote), joined by docket.

Which record a cite names: each side of the cite must name a side of the record's case name
(the same test that tells the instance's own case from a precedent,
:func:`~anachron.tasks.legal.grounding._side_matches`). Several cases share names ("United
States v. Texas" of 2016 and of 2023); the claim's details choose: a stated vote split (5-4,
6-3, 4-4, "unanimously") must be the record's (see the end for the rest).

The instance's own decision stays the outcome check's (:class:`~anachron.tasks.legal.grounding.
DecisionGrounding`), with one record-based exception: a claim whose stated vote split is not the
case's recorded vote speaks of another decision of the same name (an earlier round of the same
litigation), so it is not this case's outcome.

Of several records a cite names, those whose names share the most words with it, then the one
whose step falls in (or nearest) a date the claim states, else nearest the declared date, else
the earliest.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any, Mapping

import pandas as pd

from anachron.dates import to_date
from anachron.sources.dockets import normalize_docket
from anachron.tasks.legal.grounding import (
    _CASE_CITE,
    _GENERIC_WORDS,
    DecisionGrounding,
    _court_mentions,
    _side_matches,
    _signals,
    _subject,
)
from anachron.tasks.legal.parties import case_name_key, case_parties, party_key
from anachron.verify.dates import find_periods
from anachron.verify.grammar import hedged
from anachron.verify.layers.rules import marker_before
from anachron.verify.layers.grounded import GroundedVerdict
from anachron.words import HEDGE_SPECULATIVE

_VOTE = re.compile(r"\b([1-9])\s*(?:-|–|—|to)\s*([0-4])\b")
_UNANIMOUS = re.compile(r"\bunanimous(?:ly)?\b", re.I)
#: Oral argument (not a party's contention: "the government argued that ..." is no step of the Court).
_ARGUED = re.compile(
    r"\b(?:oral\s+arguments?|(?:was|were|is|been)\s+argued|heard\s+(?:oral\s+)?arguments?|argued\s+(?:before|at)\s+the\s+(?:Supreme\s+)?Court"
    r"|(?:the\s+)?(?:Court|justices)\s+heard)\b",
    re.I,
)
_GRANTED = re.compile(r"\b(?:grant(?:ed|s)?\s+(?:certiorari|cert|review)|agreed\s+to\s+(?:hear|review)|took\s+up|certiorari\s+was\s+granted)\b", re.I)


def stated_vote(fact: str) -> tuple[int, int] | None:
    """The vote split a claim states ("6-3", "5 to 4", "4-4"; "unanimously" as (n, 0) with n
    unknown: returned as (0, 0)), or None. Only splits of a court of 7 to 9 justices count."""
    for m in _VOTE.finditer(fact):
        a, b = int(m[1]), int(m[2])
        if a >= b and 7 <= a + b <= 9:
            return a, b
    return (0, 0) if _UNANIMOUS.search(fact) else None


def _vote_agrees(stated: tuple[int, int], majority: Any, minority: Any) -> bool | None:
    """Whether a stated split agrees with a recorded one (None when the record has no vote)."""
    try:
        maj, mino = int(majority), int(minority)
    except (TypeError, ValueError):
        return None
    if stated == (0, 0):
        return mino == 0
    return stated == (maj, mino)


class CaseRecords:
    """Grounded checks of the legal task over every recorded case (see the module docstring).

    Args:
        scdb: SCDB cases (``docket_key``, ``case_name``, ``decision_date``, ``argument_date``), or None.
        oyez: Oyez cases (``docket_key``, ``name``, ``granted_date``, ``argued_date``,
            ``decided_date``, ``majority_votes``, ``minority_votes``), or None.
    """

    def __init__(self, scdb: pd.DataFrame | None = None, oyez: pd.DataFrame | None = None):
        self._own = DecisionGrounding()
        by_docket: dict[str, dict[str, Any]] = {}
        for r in (oyez.to_dict("records") if oyez is not None else []):
            key = str(r.get("docket_key") or r.get("docket") or "")
            by_docket[key] = {"name": r.get("name"), "granted": to_date(r.get("granted_date")), "argued": to_date(r.get("argued_date")),
                              "decided": to_date(r.get("decided_date")), "majority": r.get("majority_votes"), "minority": r.get("minority_votes")}
        for r in (scdb.to_dict("records") if scdb is not None else []):
            key = str(r.get("docket_key") or r.get("docket") or "")
            rec = by_docket.setdefault(key, {"name": r.get("case_name")})
            rec["name"] = rec.get("name") or r.get("case_name")
            rec["decided"] = to_date(r.get("decision_date")) or rec.get("decided")
            rec["argued"] = rec.get("argued") or to_date(r.get("argument_date"))
        self.records: list[dict[str, Any]] = []
        self._by_word: dict[str, list[int]] = {}
        for key, rec in by_docket.items():
            sides = []
            for side in case_parties(rec.get("name")):
                distinctive = {w for w in side.split() if w not in _GENERIC_WORDS and len(w) >= 3} if party_key(side) else set()
                sides.append((side, distinctive))
            if len(sides) != 2:
                continue
            rec = {**rec, "docket_key": key, "sides": tuple(sides)}
            self.records.append(rec)
            for w in {w for s in sides for w in (s[1] or set(s[0].split()))}:
                self._by_word.setdefault(w, []).append(len(self.records) - 1)
        self._by_docket = {r["docket_key"]: r for r in self.records}

    @property
    def n_records(self) -> int:
        return len(self.records)

    def _cited(self, a: str, b: str) -> list[dict[str, Any]]:
        """The records whose two sides the cite's sides ``a`` and ``b`` name (either order)."""
        words = {w.strip(".,'’()").lower() for w in f"{a} {b}".split()}
        seen = {i for w in words for i in self._by_word.get(w, ())}
        out = []
        for i in sorted(seen):
            r = self.records[i]
            s0, s1 = r["sides"]
            if (_side_matches(a, s0) and _side_matches(b, s1)) or (_side_matches(a, s1) and _side_matches(b, s0)):
                out.append(r)
        return out

    def check(self, fact: str, instance: dict[str, Any]) -> GroundedVerdict | None:
        """This case's decision (leaked, A4) unless the stated vote is not its recorded one;
        else the step of a cited recorded case that ``fact`` states (dated at the record, A1);
        else None."""
        vote = stated_vote(fact)
        own_record = self._by_docket.get(normalize_docket(instance.get("docket")) or "")
        contradicts = vote is not None and own_record is not None and _vote_agrees(vote, own_record.get("majority"), own_record.get("minority")) is False
        if not contradicts:
            own = self._own.check(fact, instance)
            if own is not None:
                return own
        signals = _signals(fact)
        if hedged(fact, HEDGE_SPECULATIVE, signals):
            return None
        if signals and all(marker_before(fact, a) for a, _ in signals):
            signals = []  # "is due to be decided", "will rule": a decision to come, not one made
        if signals:
            # a decision of the Supreme Court: no signal whose named subject is a court below it,
            # an agency or a jury ("the Fifth Circuit ruled in United States v. Texas" is its history)
            courts = _court_mentions(fact, {}, [], [])
            named = [k for k in (_subject(fact, sp, courts, True) for sp in signals) if k is not None]
            if named and not any(k in ("own", "case") for k in named):
                signals = []
        step = "decided" if signals else None
        if step is None:
            for kind, pattern in (("argued", _ARGUED), ("granted", _GRANTED)):
                m = pattern.search(fact)
                if m is not None and not marker_before(fact, m.start()):  # "is scheduled to hear argument"
                    step = kind
                    break
        if step is None:
            return None
        declared = instance.get("declared_date")
        found = []
        for m in _CASE_CITE.finditer(fact):
            if m["a"] is None or m["b"] is None:
                continue
            for r in self._cited(m["a"], m["b"]):
                if r.get("docket_key") == (own_record or {}).get("docket_key") and not contradicts:
                    continue  # the instance's own case: the outcome check's
                day = r.get(step)
                if day is None:
                    continue
                if step == "decided" and vote is not None and _vote_agrees(vote, r.get("majority"), r.get("minority")) is False:
                    continue
                found.append((day, r, m[0], _overlap(m[0], r["name"])))
        if not found:
            return None
        best = max(f[3] for f in found)  # the records whose names the cite matches best
        found = [f for f in found if f[3] == best]
        periods = [p for p in find_periods(fact) if p.kind not in ("season", "years")]
        if periods:  # the date the claim states chooses
            day, r, cite, _ = min(found, key=lambda f: (min(_distance(f[0], p.start, p.end) for p in periods), f[0]))
        elif isinstance(declared, dt.date):
            day, r, cite, _ = min(found, key=lambda f: (abs((f[0] - declared).days), f[0]))
        else:
            day, r, cite, _ = min(found, key=lambda f: f[0])
        what = {"decided": "decision", "argued": "argument", "granted": "grant of review"}[step]
        return GroundedVerdict(day, f"cites {cite!r}: the {what} of {r['name']} ({r['docket_key']}) on {day} (case record)", category="A1")


def _overlap(cite: str, name: Any) -> int:
    """How many words of a cite are words of a record's case name (normalised)."""
    return len(set(case_name_key(cite).split()) & set(case_name_key(name).split()))


def _distance(day: dt.date, start: dt.date, end: dt.date) -> int:
    """Days from ``day`` to the interval ``[start, end]`` (0 inside it)."""
    return 0 if start <= day <= end else min(abs((day - start).days), abs((day - end).days))


def open_case_records(inputs: Mapping[str, Any]) -> CaseRecords | DecisionGrounding:
    """:class:`CaseRecords` over the SCDB and Oyez tables named in ``inputs`` (``scdb``,
    ``oyez``: the sources' Parquet tables); without either, the outcome check alone."""
    tables = {k: pd.read_parquet(inputs[k]) for k in ("scdb", "oyez") if inputs.get(k)}
    return CaseRecords(tables.get("scdb"), tables.get("oyez")) if tables else DecisionGrounding()

