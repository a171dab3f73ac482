"""Salary: the Task (prompt, prediction schema, parsing, Perf) and its hooks."""

from __future__ import annotations

import math
import re
from typing import Any

from anachron.money import MoneyError, parse_money
from anachron.tasks.base import Task, instance_inputs, instance_label, three_step_system_prompt
from anachron.tasks.salary.claims import OUTCOME_NOUNS, is_consequence, outcome_rule
from anachron.tasks.salary.neuter import neuter_salary
from anachron.tasks.salary.calibration import SalaryPlanter
from anachron.tasks.salary.checks import salary_overlap
from anachron.tasks.salary.dataset import SOURCE_TABLES, build_salary_instances
from anachron.tasks.salary.records import open_signing_records

#: A per-year suffix a predicted AAV may carry ("$25.5M/yr", "$25.5M per year").
_PER_YEAR = re.compile(r"\s*(?:/\s*(?:yr|year)|(?:per|a)\s+year)\s*$", re.I)


def parse_amount(value: Any) -> float:
    """A predicted AAV in USD from a number or a plainly written amount.

    Accepts ints and floats, and strings that :func:`anachron.money.parse_money` reads as one
    amount in dollars or without a currency ("25500000", "25,500,000", "$25.5M", "25.5
    million", "$950K"), optionally followed by "/yr" or "per year". Raises ``ValueError`` for
    anything else (booleans, None, lists, text with words, an ambiguous or foreign-currency
    amount, a range, NaN or infinite values) and for amounts that are not positive.
    """
    if isinstance(value, str):
        value = _PER_YEAR.sub("", value)
    try:
        money = parse_money(value)
    except MoneyError as exc:
        raise ValueError(f"predicted AAV {value!r} is not a plain dollar amount: {exc.reason}") from None
    if money.currency not in (None, "USD"):
        raise ValueError(f"predicted AAV {value!r} is in {money.currency}, not US dollars")
    if money.value <= 0:
        raise ValueError(f"predicted AAV must be a positive finite number of dollars, got {value!r}")
    return money.value


def salary_perf(predicted: float, actual: float) -> float:
    """Perf = max(0, 1 - |predicted - actual| / actual), in [0, 1] (TEMPO paper, App. D).

    Raises ``ValueError`` when ``actual`` is not positive.
    """
    if not actual or actual <= 0 or not math.isfinite(actual):
        raise ValueError(f"actual AAV must be positive, got {actual!r}")
    return float(max(0.0, 1.0 - abs(float(predicted) - float(actual)) / float(actual)))


def _status_text(status: str | None) -> str:
    if status == "unrestricted":
        return "unrestricted free agent"
    if status == "restricted":
        return "restricted free agent (his team may match offers)"
    return "free agent (restricted or unrestricted not recorded)"


class SalaryTask(Task):
    """Predict the AAV (USD) of a free agent's contract with a new team (docs/tasks.md#salary).

    Prediction: one positive number of US dollars per year (strings such as "$25.5M" are
    accepted). Perf is :func:`salary_perf`.
    """

    name = "salary"
    prediction_aliases = ("predicted_salary", "predicted_aav", "aav", "salary")
    sources = SOURCE_TABLES
    outcome_nouns = OUTCOME_NOUNS
    # the first negotiating window of the contract tables (anachron.tasks.salary.windows: NBA 2011)
    data_begins = "2011-07-01"
    cutoff_rule = "negotiating window"  # each label's cutoff_rule (anachron.tasks.salary.windows)
    # hooks implemented by the package's modules
    outcome_rule = staticmethod(outcome_rule)
    is_consequence = staticmethod(is_consequence)
    overlap_problems = staticmethod(salary_overlap)
    build = staticmethod(build_salary_instances)

    def messages(self, row):
        inp = instance_inputs(row)
        system = three_step_system_prompt(
            role="a sports salary analyst who prices professional free-agent contracts",
            goal=(
                "You estimate the average annual value (AAV: total contract value divided by its years, in US "
                "dollars) of the contract a free agent signs."
            ),
            cutoff_date=row["cutoff_date"],
            date_hint=(
                "A contract is dated by the day it was announced or signed; season statistics and awards by the "
                "day the season or vote ended; salary-cap figures by the league's announcement."
            ),
            prediction_spec="a single number: the expected AAV in US dollars per year, e.g. 12500000.",
        )
        user = (
            f"Sport: {inp['sport']} ({inp['league']})\n"
            f"Free-agency year: {inp['year']}\n"
            f"Player: {inp['player']}\n"
            f"Status: {_status_text(inp.get('status'))}\n"
            f"Today's date: {row['cutoff_date']}\n"
            f"Estimate the AAV of the contract {inp['player']} signs as a free agent in {inp['year']}."
        )
        return [{"role": "system", "content": system}, {"role": "user", "content": user}]

    def prediction_schema(self, row):
        return {"type": "number", "description": "expected average annual value in US dollars"}

    def validate_prediction(self, row, prediction):
        return parse_amount(prediction)

    def perf(self, row, prediction):
        return salary_perf(parse_amount(prediction), float(instance_label(row)["aav"]))

    def neuter(self, row):
        """The player as "the player" (:func:`anachron.tasks.salary.neuter.neuter_salary`)."""
        return neuter_salary(instance_inputs(row))

    def entities(self, row):
        inp = instance_inputs(row)
        return {"players": [inp["player"]], "league": [inp["league"]]}

    def grounding_context(self, row):
        inp, lab = instance_inputs(row), instance_label(row)
        return {
            "cutoff_date": row["cutoff_date"],
            "player": inp["player"],
            "league": inp["league"],
            "team": lab.get("team"),
            "previous_team": lab.get("previous_team"),
            "signing_date": lab["signing_date"],
            "aav": lab["aav"],
            "total_value": lab.get("total_value"),
            "years": lab.get("years"),
        }

    def describe(self, inputs):
        player, year = inputs.get("player", "the player"), inputs.get("year", "")
        return (
            f"Estimate the average annual value (AAV, USD) of the free-agent contract {player} signs in {year} "
            f"({inputs.get('league', '')}).",
            f"the free-agent contract {player} signs in {year}",
        )

    def grounding_inputs(self, *, edgar):
        return {k: v for k, v in self.dataset_inputs().items() if not k.endswith("_manifest")}

    def make_grounding(self, inputs):
        return open_signing_records(inputs)

    def planter(self, instances, data, rng, frames, *, all_instances):
        return SalaryPlanter(instances, data, rng, frames, all_instances=all_instances)
