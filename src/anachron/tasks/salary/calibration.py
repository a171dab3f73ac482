"""Salary: the calibration planter (claims of known truth on salary instances)."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any, Mapping

import pandas as pd

from anachron.names import surname
from anachron.verify.calibration.planting import Plant, Planter, PlantInstance, money_short, money_text


def _contracts_table(data: Mapping[str, pd.DataFrame], insts_all: pd.DataFrame | None) -> pd.DataFrame:
    cols = ["league", "player", "team", "signing_date", "aav", "total_value", "years"]
    if "contracts" in data:
        df = data["contracts"][cols].copy()
    else:
        rows = []
        for r in (insts_all if insts_all is not None else pd.DataFrame()).itertuples(index=False):
            inp, lab = json.loads(r.inputs), json.loads(r.label)
            rows.append((inp["league"], inp["player"], lab.get("team"), lab["signing_date"], lab["aav"], lab.get("total_value"), lab.get("years")))
        df = pd.DataFrame(rows, columns=cols)
    df = df.dropna(subset=["player", "signing_date", "aav"]).copy()
    df["signing_date"] = pd.to_datetime(df["signing_date"]).dt.date
    df = df[df["aav"] > 0]
    return df.sort_values(["signing_date", "player"]).reset_index(drop=True)


def _years(y: Any) -> int | None:
    try:
        v = int(y)
        return v if v > 0 else None
    except (TypeError, ValueError):
        return None


def _contract_body(player: str, team: str | None, years: int | None, aav: float, total: float | None, wording: str) -> str:
    yrs = f"{years}-year" if years else "multi-year"
    tot = total if total and total > 0 else aav * (years or 1)
    team_s = f"the {team}" if team else "a new team"
    if wording == "signed_total":
        return f"{player} signed a {yrs}, {money_text(tot)} contract with {team_s}"
    if wording == "team_signed_aav":
        return f"{team_s[0].upper() + team_s[1:]} signed {player} to a {yrs} deal worth {money_short(aav)} per year"
    if wording == "agreed_dollars":
        return f"{player} agreed to a {yrs} deal worth ${tot:,.0f} in total"
    return f"It was reported that {player} inked a contract carrying an AAV of {money_short(aav)}"


class SalaryPlanter(Planter):
    """Salary calibration claims: other players' contracts signed after (post_cutoff) or before
    (pre_cutoff) the cutoff, the player's own previous contract (pre_cutoff); outcome: the
    contract being predicted, by full name or surname. ``all_instances``' labels are the pool
    of contracts unless ``data`` has a ``contracts`` table."""

    CONTRACT_WORDINGS = ["signed_total", "team_signed_aav", "agreed_dollars", "reported_aav"]

    def __init__(self, insts, data, rng, frames, all_instances=None):
        super().__init__(insts, data, rng, frames)
        self._c = _contracts_table(data, all_instances)

    def families(self, kind):
        """Outcome: the own contract; pre_cutoff: others' and the previous one; post_cutoff: others'."""
        if kind == "outcome":
            return [self.outcome]
        if kind == "pre_cutoff":
            return [self.other_contract, self.previous_contract]
        return [self.other_contract]

    def other_contract(self, inst: PlantInstance, kind: str) -> Plant | None:
        """Another player's contract in the same league, signed after or before the cutoff."""
        c, league, player = inst.cutoff, inst.inputs.get("league"), inst.inputs["player"]
        df = self._c[(self._c["league"] == league) & (self._c["player"] != player)]
        if kind == "post_cutoff":
            pool = df[(df["signing_date"] > c) & (df["signing_date"] <= c + dt.timedelta(days=365))]
        else:
            pool = df[(df["signing_date"] <= c) & (df["signing_date"] >= c - dt.timedelta(days=730))]
        if pool.empty:
            return None
        r = pool.iloc[int(self.rng.integers(len(pool)))]
        wording = self.pick(self.CONTRACT_WORDINGS)
        body = _contract_body(r["player"], r["team"], _years(r["years"]), float(r["aav"]), r["total_value"], wording)
        return self.finish("contract", wording, body, r["signing_date"], inst, kind)

    def previous_contract(self, inst: PlantInstance, kind: str) -> Plant | None:
        """The player's latest contract signed on or before the cutoff (clean)."""
        c, player = inst.cutoff, inst.inputs["player"]
        df = self._c[(self._c["player"] == player) & (self._c["signing_date"] <= c)]
        if df.empty:
            return None
        r = df.iloc[-1]
        wording = self.pick(self.CONTRACT_WORDINGS)
        body = _contract_body(player, r["team"], _years(r["years"]), float(r["aav"]), r["total_value"], wording)
        return self.finish("previous_contract", wording, body, r["signing_date"], inst, kind)

    def outcome(self, inst: PlantInstance, kind: str) -> Plant | None:
        """The contract being predicted (A4)."""
        lab, player = inst.label, inst.inputs["player"]
        day = dt.date.fromisoformat(lab["signing_date"])
        form = self.pick(["full", "full", "surname"])
        who = player if form == "full" or not player.split() else surname(player)
        wording = self.pick(self.CONTRACT_WORDINGS)
        body = _contract_body(who, lab.get("team"), _years(lab.get("years")), float(lab["aav"]), lab.get("total_value"), wording)
        return self.finish("own_contract", f"{wording}_{form}", body, day, inst, kind)
