"""A toy task and its source, defined only in this folder: "will it rain in <town> on <day>?".

Used by tests/tasks/test_toy_task.py as a plugin (config key ``plugins: [toy_weather]``, this folder's
parent on ``PYTHONPATH``): importing it registers the source ``weather`` and the task ``toy``, and
the real workflow then fetches, builds, runs, verifies, scores and loads the task with no other
module touched. It implements only what a task must (prompt, schema, Perf) plus an outcome rule and
a grounded check; it has no calibration planter, so calibration leaves it out with a note.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path

import pandas as pd

from anachron.io import manifest_entry, sha256_file
from anachron.sources.paths import source_inputs
from anachron.sources.registry import register_source
from anachron.tasks.base import INSTANCE_COLUMNS, ProbabilityTask, brier_perf, instance_inputs, instance_label
from anachron.tasks.registry import register_task
from anachron.verify.layers.grounded import GroundedVerdict

#: The task's config block (``tasks.toy``).
CONFIG_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "default": {},
    "properties": {"seed": {"type": "integer", "default": 0}},
}


def fetch(*, snapshot_dir=None, **params):
    """The source ``weather``: ``<snapshot_dir>/weather/days.csv`` (town, day, rained) and a manifest."""
    if snapshot_dir is None:
        raise RuntimeError("the toy weather source has no live mode")
    path = Path(snapshot_dir) / "weather" / "days.csv"
    table = pd.read_csv(path, dtype={"town": str, "day": str, "rained": int})
    return table, {"sources": [manifest_entry(f"snapshot:{path}", sha256_file(path), len(table))], "rows": len(table)}


class RainGrounding:
    """The toy's grounded check: "it rained in <town> on <day>" for the instance's day is its outcome."""

    def check(self, fact, instance):
        if instance["town"] in fact and re.search(r"\brain(?:ed)?\b", fact) and instance["day"] in fact:
            day = dt.date.fromisoformat(instance["day"])
            return GroundedVerdict(day, f"states the weather of {instance['day']}", outcome=True, category="A4")
        return None


class RainTask(ProbabilityTask):
    """Will it rain in a town on a day? Perf = 1 - Brier."""

    name = "toy"
    sources = ("weather",)
    outcome_nouns = r"downpour|outcome"

    def dataset_inputs(self):
        return source_inputs(self.sources)

    def build(self, tables, task_config, *, knowledge_cutoffs):
        w = tables["weather"]
        rows = [
            {"instance_id": f"toy-{r.town}-{r.day}", "task": self.name, "split": "eval",
             "cutoff_date": (dt.date.fromisoformat(r.day) - dt.timedelta(days=1)).isoformat(),
             "inputs": json.dumps({"town": r.town, "day": r.day}), "label": json.dumps({"rained": int(r.rained)}),
             "provenance": json.dumps({"seed": task_config.get("seed", 0)})}
            for r in w.itertuples(index=False)
        ]
        return pd.DataFrame(rows, columns=INSTANCE_COLUMNS), pd.DataFrame({"reason": ["no_town"] * int(w["town"].isna().sum())})

    def messages(self, row):
        inp = instance_inputs(row)
        return [{"role": "system", "content": f"Answer as of {row['cutoff_date']}."},
                {"role": "user", "content": f"Will it rain in {inp['town']} on {inp['day']}?"}]

    def perf(self, row, prediction):
        return brier_perf(prediction, instance_label(row)["rained"])

    def grounding_context(self, row):
        return {"cutoff_date": row["cutoff_date"], **instance_inputs(row)}

    def describe(self, inputs):
        return (f"Will it rain in {inputs['town']}?", f"the weather in {inputs['town']} on {inputs['day']}")

    def outcome_rule(self, text, context):
        rained = re.search(r"\brain(?:ed)?\b", text) and context["town"] in text and context["day"] in text
        return "A4:toy:the-weather" if rained else None

    def make_grounding(self, inputs):
        return RainGrounding()


def rain_answer(town: str, day: str) -> str:
    """A model answer for one instance: evidence whose first item states the instance's own outcome."""
    return json.dumps({
        "evidence": [
            {"id": 1, "fact": f"It rained in {town} on {day}.", "source_date": "2023-06-01"},
            {"id": 2, "fact": f"{town} has a wet climate.", "source_date": "2023-06-01"},
        ],
        "reasoning": f"{town} is wet [2]. Following the downpour, the fair was cancelled in July 2023.",
        "prediction": 0.8,
    })


register_source("weather", __name__)
register_task("toy", RainTask)
