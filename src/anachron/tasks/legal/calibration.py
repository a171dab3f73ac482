"""Legal: the calibration planter (claims of known truth on legal instances)."""

from __future__ import annotations

import datetime as dt
import json
import re
from typing import Any, Mapping

import pandas as pd

from anachron.verify.calibration.planting import Plant, Planter, PlantInstance, join_fact


class LegalPlanter(Planter):
    """Legal calibration claims: other cases' decisions after (post_cutoff) or before
    (pre_cutoff) the cutoff, the lower court's ruling in this case (pre_cutoff); outcome: how
    the Supreme Court ruled in this case. ``all_instances`` is the pool of decisions."""

    def __init__(self, insts, data, rng, frames, all_instances=None):
        super().__init__(insts, data, rng, frames)
        rows = []
        src = all_instances if all_instances is not None else pd.DataFrame()
        for r in src.itertuples(index=False):
            inp, lab = json.loads(r.inputs), json.loads(r.label)
            rows.append(dict(case_name=inp["case_name"], petitioner=inp.get("petitioner"), respondent=inp.get("respondent"),
                             lower_court=inp.get("lower_court"), decision_date=dt.date.fromisoformat(lab["decision_date"]),
                             petitioner_wins=int(lab["petitioner_wins"])))
        self._cases = pd.DataFrame(rows).drop_duplicates("case_name") if rows else pd.DataFrame(
            columns=["case_name", "petitioner", "respondent", "lower_court", "decision_date", "petitioner_wins"])

    def families(self, kind):
        """Outcome: the own decision; pre_cutoff: other decisions and the lower court; post_cutoff: others."""
        if kind == "outcome":
            return [self.outcome]
        if kind == "pre_cutoff":
            return [self.other_decision, self.lower_court]
        return [self.other_decision]

    @staticmethod
    def _lower(lower: str | None) -> str:
        s = str(lower or "the court of appeals")
        m = re.search(r"(\w+) Circuit", s)
        if m:
            return f"the {m[1]} Circuit"
        return s if s.lower().startswith("the ") else f"the {s}"

    def _decision_body(self, case: Mapping[str, Any], wording: str, *, own: bool) -> str:
        wins = bool(case["petitioner_wins"])
        winner = case["petitioner"] if wins else case["respondent"]
        verb = self.pick(["reversed", "vacated"]) if wins else "affirmed"
        name = case["case_name"]
        if wording == "court_verb":
            return f"The Supreme Court {verb} the judgment of {self._lower(case['lower_court'])} in {name}"
        if wording == "ruled_for":
            return f"In {name}, the Court ruled in favor of {winner}"
        if wording == "passive":
            return f"{name} was decided in favor of {winner} by the U.S. Supreme Court"
        # party-only mention, the Supreme Court named
        return f"The Justices sided with {winner} in a Supreme Court ruling"

    def other_decision(self, inst: PlantInstance, kind: str) -> Plant | None:
        """Another case's decision, after or before the cutoff."""
        c = inst.cutoff
        df = self._cases[self._cases["case_name"] != inst.inputs["case_name"]]
        if kind == "post_cutoff":
            pool = df[(df["decision_date"] > c) & (df["decision_date"] <= c + dt.timedelta(days=365))]
        else:
            pool = df[(df["decision_date"] <= c) & (df["decision_date"] >= c - dt.timedelta(days=730))]
        if pool.empty:
            return None
        case = pool.iloc[int(self.rng.integers(len(pool)))]
        wording = self.pick(["court_verb", "ruled_for", "passive"])
        body = self._decision_body(case, wording, own=False)
        return self.finish("decision", wording, body, case["decision_date"], inst, kind)

    def lower_court(self, inst: PlantInstance, kind: str) -> Plant | None:
        """The lower court's ruling under review in this case (clean: it precedes the cutoff)."""
        inp = inst.inputs
        lower = self._lower(inp.get("lower_court"))
        pet, name = inp.get("petitioner") or "the petitioner", inp["case_name"]
        wording = self.pick(["ruled_against", "before_scotus", "held"])
        if wording == "ruled_against":
            body = f"In {name}, {lower} ruled against {pet}"
        elif wording == "before_scotus":
            body = f"Before the case reached the Supreme Court, {lower} had ruled against {pet} in {name}"
        else:
            body = f"{lower[0].upper() + lower[1:]} held for {inp.get('respondent') or 'the respondent'} in {name}"
        # the lower court ruled before the petition was granted: its exact date is not in the data,
        # only that it precedes the cutoff (truth_date None); no date is written.
        declared = self.pick([None, f"{int(inp.get('term') or inst.cutoff.year)}"]) if inp.get("term") else None
        if declared and int(declared) > inst.cutoff.year:
            declared = None
        return Plant(join_fact("", body, ""), declared, f"lower_court:{wording}:none:declared={'year' if declared else 'missing'}", None)

    def outcome(self, inst: PlantInstance, kind: str) -> Plant | None:
        """How the Supreme Court decided this case (A4)."""
        case = dict(case_name=inst.inputs["case_name"], petitioner=inst.inputs.get("petitioner"),
                    respondent=inst.inputs.get("respondent"), lower_court=inst.inputs.get("lower_court"),
                    petitioner_wins=int(inst.label["petitioner_wins"]))
        wording = self.pick(["court_verb", "ruled_for", "passive", "party_scotus"])
        body = self._decision_body(case, wording, own=True)
        day = dt.date.fromisoformat(inst.label["decision_date"])
        return self.finish("own_decision", wording, body, day, inst, kind, allowed=("on_day", "iso", "month", "none", "none"))
