"""Forecast: the Task (prompt, Perf) and its hooks."""

from __future__ import annotations

import json
from typing import Any

from anachron.tasks.base import ProbabilityTask, brier_perf, instance_inputs, instance_label, three_step_system_prompt
from anachron.tasks.forecast.claims import OUTCOME_NOUNS, outcome_rule
from anachron.tasks.forecast.neuter import neuter_forecast
from anachron.tasks.forecast.crossref import answers_in_other_questions
from anachron.tasks.forecast.calibration import ForecastPlanter
from anachron.tasks.forecast.dataset import SOURCE_TABLE, build_forecast_instances
from anachron.tasks.forecast.grounding import make_forecast_grounding
from anachron.verify.layers.market import market_grounding_inputs


class ForecastTask(ProbabilityTask):
    """Probability that a ForecastBench question resolves Yes (docs/tasks.md#forecast).

    Prediction: one number in [0, 1]. Perf is :func:`brier_perf`, 1 - (p - y)^2.
    """

    name = "forecast"
    prediction_aliases = ("probability", "probability_yes", "forecast")
    sources = (SOURCE_TABLE,)
    outcome_nouns = OUTCOME_NOUNS
    cutoff_rule = "the question set's freeze date (the question was open then)"
    audit_fields = ("question", "background", "resolution_criteria", "market_resolution_criteria", "freeze_value_explanation")
    # hooks implemented by the package's modules
    outcome_rule = staticmethod(outcome_rule)
    make_grounding = staticmethod(make_forecast_grounding)
    build = staticmethod(build_forecast_instances)

    def messages(self, row):
        inp = instance_inputs(row)
        today = row["cutoff_date"]
        system = three_step_system_prompt(
            role="a careful forecaster",
            goal="You give the probability that a question about the future will be settled as Yes.",
            cutoff_date=today,
            date_hint=(
                "A statistic or a market price is dated by the day it was published or observed, not by the "
                "period it covers; an event is dated by the day it happened."
            ),
            prediction_spec=(
                "one number from 0 to 1, your probability that the question resolves Yes "
                "(0 = surely No, 1 = surely Yes)."
            ),
        )
        lines = [f"Today's date: {today}", f"Question: {inp['question']}"]
        if inp.get("resolution_date"):
            lines.append(f"Resolution date: {inp['resolution_date']}")
        lines.append(f"How it resolves: {inp['resolution_criteria']}")
        if inp.get("market_resolution_criteria"):
            lines.append(f"Detailed criteria: {inp['market_resolution_criteria']}")
        if inp.get("background"):
            lines.append(f"Background: {inp['background']}")
        if inp.get("show_freeze_value") and inp.get("freeze_value"):
            what = inp.get("freeze_value_explanation") or "Reference value"
            lines.append(f"Value on {inp['freeze_date']}: {inp['freeze_value']} ({what.strip()})")
        return [{"role": "system", "content": system}, {"role": "user", "content": "\n".join(lines)}]



    def perf(self, row, prediction):
        return brier_perf(prediction, instance_label(row)["resolved_to"])

    def input_dates(self, row):
        """The freeze date when the prompt shows the value observed on it (:meth:`messages`)."""
        inp = instance_inputs(row)
        return [str(inp["freeze_date"])] if inp.get("show_freeze_value") and inp.get("freeze_value") and inp.get("freeze_date") else []

    def neuter(self, row):
        """A stock question's company as "Company A"; other questions are skipped
        (:func:`anachron.tasks.forecast.neuter.neuter_forecast`)."""
        return neuter_forecast(instance_inputs(row), (self.entities(row).get("tickers") or [None])[0])

    def entities(self, row):
        inp = instance_inputs(row)
        prov = json.loads(row["provenance"]) if isinstance(row.get("provenance"), str) else {}
        out: dict[str, list[str]] = {"sources": [inp["source"]]}
        qid = prov.get("question_id")
        if qid and inp["source"] == "yfinance":
            out["tickers"] = [qid]
        elif qid and inp["source"] == "fred":
            out["series"] = [qid]
        return out

    def grounding_context(self, row):
        inp, label = instance_inputs(row), instance_label(row)
        ctx: dict[str, Any] = dict(self.entities(row))
        ctx.update(
            cutoff_date=row["cutoff_date"],
            question=inp["question"],
            resolution_date=label["resolution_date"],
            resolved_to=label["resolved_to"],
        )
        return ctx

    def audit_across(self, instances):
        """Answers stated in other questions of the same freeze date (:mod:`anachron.tasks.forecast.crossref`)."""
        return answers_in_other_questions(instances, self.grounding_context)

    def describe(self, inputs):
        q = inputs.get("question", "")
        return ("Give the probability that a forecasting question resolves Yes.", f"the resolution of: {q}")

    def grounding_inputs(self, *, edgar):
        return market_grounding_inputs(edgar=edgar)

    def planter(self, instances, data, rng, frames, *, all_instances):
        return ForecastPlanter(instances, data, rng, frames)
