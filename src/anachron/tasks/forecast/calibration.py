"""Forecast: the calibration planter (claims of known truth on forecast instances)."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any, Mapping

from anachron.verify.calibration.market import MarketFamilies
from anachron.verify.calibration.planting import Plant, PlantInstance, join_fact, long_date


def _question_short(q: str, limit: int = 140) -> str:
    first = re.split(r"\n", q.strip())[0]
    return first if len(first) <= limit else first[: limit - 3].rstrip() + "..."


class ForecastPlanter(MarketFamilies):
    """Forecast calibration claims: EDGAR figures and index changes, other questions' resolutions
    after the cutoff (post_cutoff), the question's own freeze value (pre_cutoff); outcome: how
    the question resolved."""

    def __init__(self, insts, data, rng, frames):
        super().__init__(insts, data, rng, frames)
        self._res = [(i.inputs, i.label, i.instance_id) for i in insts]

    def families(self, kind):
        """Outcome: the own resolution; otherwise index changes, EDGAR, and another question's
        resolution (post_cutoff) or the freeze value (pre_cutoff)."""
        if kind == "outcome":
            return [self.outcome]
        fams = [self.index_change]
        if self._edgar is not None:
            fams.append(self.edgar)
        if kind == "pre_cutoff":
            fams.append(self.freeze_value)
        else:
            fams.append(self.other_resolution)
        return fams

    @staticmethod
    def _wording(inputs: Mapping[str, Any], wording: str) -> str:
        """"natural" exists only for the yfinance close-vs-close questions; else "answer"."""
        if wording == "natural" and not re.match(r"Will \S+'s market close price on", inputs["question"]):
            return "answer"
        return wording

    @staticmethod
    def _resolution_body(inputs: Mapping[str, Any], label: Mapping[str, Any], wording: str) -> str:
        yes = bool(int(label["resolved_to"]))
        q = _question_short(inputs["question"])
        m = re.match(r"Will (\S+)'s market close price on (\d{4}-\d{2}-\d{2}) be higher than its market close price on (\d{4}-\d{2}-\d{2})", q)
        if m and wording == "natural":
            return f"{m[1]}'s close on {m[2]} was {'higher' if yes else 'not higher'} than its close on {m[3]}"
        if wording == "resolved_quote":
            return f"The question \"{q}\" resolved {'YES' if yes else 'NO'}"
        return f"The answer to \"{q}\" turned out to be {'yes' if yes else 'no'}"

    def other_resolution(self, inst: PlantInstance, kind: str) -> Plant | None:
        """Another question's resolution within a year after the cutoff."""
        c = inst.cutoff
        pool = [(inp, lab) for inp, lab, iid in self._res if iid != inst.instance_id
                and c < dt.date.fromisoformat(lab["resolution_date"]) <= c + dt.timedelta(days=365)
                and inp["question"] != inst.inputs["question"]]
        if not pool:
            return None
        inp, lab = pool[int(self.rng.integers(len(pool)))]
        wording = self._wording(inp, self.pick(["natural", "resolved_quote", "answer"]))
        body = self._resolution_body(inp, lab, wording)
        day = dt.date.fromisoformat(lab["resolution_date"])
        return self.finish("resolution", wording, body, day, inst, kind, allowed=("on_day", "iso", "as_of"))

    def freeze_value(self, inst: PlantInstance, kind: str) -> Plant | None:
        """The question's value on its freeze date, on or before the cutoff (clean)."""
        inp = inst.inputs
        val, expl, fd = inp.get("freeze_value"), inp.get("freeze_value_explanation"), inp.get("freeze_date")
        if val in (None, "", "nan") or not expl or not fd:
            return None
        day = dt.date.fromisoformat(str(fd)[:10])
        if day > inst.cutoff:
            return None
        expl = str(expl).strip().rstrip(".")
        body = f"As of {long_date(day)}, {expl[0].lower() + expl[1:]} stood at {val}"
        declared = self.pick([day.isoformat(), None])
        return Plant(join_fact("", body, ""), declared, f"freeze_value:as_of:in_body:declared={'honest' if declared else 'missing'}", day)

    def outcome(self, inst: PlantInstance, kind: str) -> Plant | None:
        """How the question resolved (A4)."""
        wording = self._wording(inst.inputs, self.pick(["natural", "resolved_quote", "answer"]))
        body = self._resolution_body(inst.inputs, inst.label, wording)
        day = dt.date.fromisoformat(inst.label["resolution_date"])
        return self.finish("own_resolution", wording, body, day, inst, kind, allowed=("on_day", "iso", "none"))
