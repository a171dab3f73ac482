"""Salary: event grounding over every signing the sources hold (:class:`SigningRecords`).

A claim that states a contract, any player's, takes the date of the signing record it matches
(docs/verification.md#event-grounding): "Niang agreed to a three-year, $26 million deal with
Cleveland" is the Cavaliers' signing of Georges Niang on 2023-06-30, whatever date the model
declares. The match is the one the instance's own contract uses (:func:`~anachron.tasks.salary.
grounding.states_contract`: the player named, no hedge, not an earlier contract, an amount that
is the record's AAV or total value within its stated precision, or the record's team with a
verb of signing), applied to each record of each player the claim names: in full, or by
surname when the surname is the instance's player's (the player the answer is about) or belongs
to one player only among the records of the league. A stated length must be the record's. Another
player's record matches only by its figures (an amount that
is its AAV or total value): a team and a verb alone ("moved to Sacramento in the deal that sent
X to Miami") may be a trade.

The records are the signing tables of the NBA and NHL sources (``data/raw/{nba,nhl}``: player,
team, previous team, signing date, years, total value, AAV). An NHL signing without a date in
the source is dated at the opening of free agency (the source's ``date_rule`` says so, and the
reason repeats it). A record is first public on the day after its contract's point-in-time
cutoff (:func:`~anachron.tasks.salary.windows.salary_cutoff`: the negotiating window's opening
for a deal of the window, the announcement day, a late signing's date less the report lead) and
at the latest on its date: a claim leaks when that first day is after the instance's cutoff,
is clean when the record's date is on or before it, and the record decides nothing in between
(the deal may have been reported before the cutoff or not). When several records of a player match, the one whose date is nearest the
declared date decides (a model that dates a contract to its own year is more often right about
the contract than about the day); with no declared date, the earliest.
"""

from __future__ import annotations

import datetime as dt
import re
from collections import defaultdict
from typing import Any, Iterable, Mapping

import pandas as pd

from anachron.dates import to_date
from anachron.names import MIN_SURNAME_CHARS, surname
from anachron.tasks.salary.grounding import ContractGrounding, contract_years, states_contract
from anachron.tasks.salary.windows import WindowError, dated_by, salary_cutoff, window_table
from anachron.verify.layers.grounded import GroundedVerdict

_CAPITALISED = re.compile(r"\b[A-Z][\w'’.-]+")
_RECORD_COLUMNS = ("league", "player", "signing_date", "team", "previous_team", "years", "total_value", "aav")


class SigningRecords:
    """Grounded checks of the salary task over every signing record (see the module docstring).

    The instance's own contract comes first (:class:`~anachron.tasks.salary.grounding.ContractGrounding`:
    the outcome, leaked); any other signing a claim states is dated at its record (category A1).

    Args:
        tables: signing tables with the columns of the NBA / NHL source (``league``, ``player``,
            ``signing_date``, ``team``, ``previous_team``, ``years``, ``total_value``, ``aav``;
            ``date_rule`` when present). Rows without a player or a parseable date are skipped.
        windows: the negotiating windows that date a record's first report
            (:func:`~anachron.tasks.salary.windows.window_table`; default the task's table).
    """

    def __init__(self, tables: Iterable[pd.DataFrame], windows: Mapping[Any, Any] | None = None):
        self._own = ContractGrounding()
        self._by_name: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
        self._by_surname: dict[tuple[str, str], set[str]] = defaultdict(set)
        self.n_records = 0
        windows = window_table() if windows is None else windows
        for t in tables:
            cols = [c for c in (*_RECORD_COLUMNS, "date_rule") if c in t.columns]
            for r in t[cols].to_dict("records"):
                player, day = str(r.get("player") or "").strip(), str(r.get("signing_date") or "")[:10]
                if not player or len(day) != 10:
                    continue
                league = str(r.get("league") or "")
                r["_public"] = _first_public(league, dt.date.fromisoformat(day), r.get("date_rule"), windows)
                self._by_name[(league, player.lower())].append(r)
                self._by_surname[(league, surname(player).lower())].add(player.lower())
                self.n_records += 1

    def _players(self, fact: str, league: str, own: str) -> list[str]:
        """Lower-case names of the players of ``league`` that ``fact`` names (see the module docstring)."""
        low = fact.lower()
        words = {w.strip(".,'’").removesuffix("'s").removesuffix("’s") for w in _CAPITALISED.findall(fact)}
        out = []
        own_last = surname(own).lower() if own else ""
        for w in words:
            key = (league, w.lower())
            if len(w) < MIN_SURNAME_CHARS or key not in self._by_surname:
                continue
            names = self._by_surname[key]
            full = [n for n in names if n in low]
            if full:
                out += full
            elif w.lower() == own_last and own.lower() in names:
                out.append(own.lower())
            elif len(names) == 1:
                out += list(names)
        return sorted(set(out))

    def check(self, fact: str, instance: dict[str, Any]) -> GroundedVerdict | None:
        """The instance's own contract (leaked, A4), else the signing record ``fact`` states
        (dated at the record, A1), else None."""
        own = self._own.check(fact, instance)
        if own is not None:
            return own
        league = str(instance.get("league") or "")
        player = str(instance.get("player") or "")
        declared = instance.get("declared_date")
        matches = []
        for name in self._players(fact, league, player):
            for r in self._by_name[(league, name)]:
                if name == player.lower() and str(r["signing_date"])[:10] == str(instance.get("signing_date") or "")[:10]:
                    continue  # the instance's own contract: decided above
                stated = contract_years(fact)
                if stated and r.get("years") is not None and pd.notna(r.get("years")) and int(r["years"]) not in stated:
                    continue  # another length: another contract
                why = states_contract(fact, _context(r, instance))
                if why is not None and (name == player.lower() or "$" in why):  # another player's: by its figures
                    matches.append((dt.date.fromisoformat(str(r["signing_date"])[:10]), r, why))
        cutoff = to_date(instance.get("cutoff_date"))
        if cutoff is not None:
            # first public between the record's first possible report and its date: straddling
            # the cutoff, the record cannot tell whether the report came before it
            matches = [m for m in matches if not (m[1]["_public"] <= cutoff < m[0])]
        if not matches:
            return None
        if isinstance(declared, dt.date):
            day, r, why = min(matches, key=lambda m: (abs((m[0] - declared).days), m[0]))
        else:
            day, r, why = min(matches, key=lambda m: m[0])
        public = min(r["_public"], day)
        rule = f"; {r['date_rule']}" if r.get("date_rule") and "fallback" in str(r.get("date_rule")) else ""
        first = f", first public {public}" if public != day else ""
        what = why.replace("the contract being predicted", "a recorded contract").replace("the player's signing", "a recorded signing")
        return GroundedVerdict(
            public, f"{what}: {r['player']} with {r['team']} on {day}{rule}{first} (signing record)", category="A1"
        )


#: How long before its date a signing outside the window table may first have been reported.
REPORT_LEAD = dt.timedelta(days=14)


def _first_public(league: str, day: dt.date, date_rule: Any, windows: Mapping[Any, Any]) -> dt.date:
    """The first day a signing record dated ``day`` may have been public: the day after its
    point-in-time cutoff, or ``day`` less :data:`REPORT_LEAD` when the window table has no window."""
    by = dated_by(date_rule)
    try:
        return salary_cutoff(league, day, by, windows).day + dt.timedelta(days=1)
    except WindowError:
        return day - (dt.timedelta(0) if by == "announcement" else REPORT_LEAD)


def _context(r: Mapping[str, Any], instance: Mapping[str, Any]) -> dict[str, Any]:
    """The grounding context of a signing record, as :func:`states_contract` reads it, with the
    instance's cutoff."""
    return {
        "player": r["player"], "league": r.get("league"), "team": r.get("team"), "previous_team": r.get("previous_team"),
        "signing_date": str(r["signing_date"])[:10], "aav": r.get("aav"), "total_value": r.get("total_value"),
        "years": r.get("years"), "cutoff_date": instance.get("cutoff_date"),
    }


def open_signing_records(inputs: Mapping[str, Any]) -> SigningRecords | ContractGrounding:
    """:class:`SigningRecords` over the signing tables named in ``inputs`` (``nba``, ``nhl``: the
    sources' Parquet tables); without any, the instance's own contract check alone."""
    tables = [pd.read_parquet(inputs[k]) for k in ("nba", "nhl") if inputs.get(k)]
    return SigningRecords(tables) if tables else ContractGrounding()
