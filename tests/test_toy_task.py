"""Adding a task is a package plus one registry line: a toy task defined here runs through
build -> temporal_hint (the real method runner, a scripted provider) -> verify (the real
pipeline: its outcome rule, consequence nouns and grounded check) -> score (real metrics),
without any other module knowing about it."""

from __future__ import annotations

import datetime as dt
import functools
import json
import re

import pandas as pd
import pytest

from anachron.llm.client import LLMClient
from anachron.llm.providers import MockProvider
from anachron.llm.types import ChatRequest, ModelSpec
from anachron.metrics.core import aggregate, instance_scores
from anachron.tasks.base import INSTANCE_COLUMNS, ProbabilityTask, brier_perf, instance_inputs, instance_label
from anachron.tasks.build import build_task_dataset
from anachron.tasks.checks import check_instances
from anachron.tasks.registry import TASKS, get_task
from anachron.verify.categorize import categorize
from anachron.verify.extract.llm import describe_instance
from anachron.verify.layers.grounded import GroundedVerdict
from anachron.verify.pipeline import verify_run

KNOWLEDGE_CUTOFF = "2024-01-01"


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
    outcome_nouns = r"downpour|outcome"

    def dataset_inputs(self):
        return {"weather": "data/raw/weather/data.parquet"}

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


def rain_answer(request: ChatRequest) -> str:
    """The mock provider's script: the same evidence, reasoning and a probability of 0.8 for every
    instance, naming the instance's own town and day (the first evidence item is its outcome)."""
    town, day = re.search(r"rain in (\w+) on (\S+)\?", request.messages[-1]["content"]).groups()
    return json.dumps({
        "evidence": [
            {"id": 1, "fact": f"It rained in {town} on {day}.", "source_date": "2023-06-01"},
            {"id": 2, "fact": f"{town} has a wet climate.", "source_date": "2023-06-01"},
        ],
        "reasoning": f"{town} is wet [2]. Following the downpour, the fair was cancelled in July 2023.",
        "prediction": 0.8,
    })


@pytest.fixture
def toy(monkeypatch, tmp_path):
    """The toy task registered (one line, undone after the test), its raw data in a work dir."""
    monkeypatch.setitem(TASKS, "toy", RainTask)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data" / "raw" / "weather").mkdir(parents=True)
    pd.DataFrame({"town": ["Ashby", "Brill"], "day": ["2023-07-02", "2023-07-09"], "rained": [1, 0]}).to_parquet(
        tmp_path / "data" / "raw" / "weather" / "data.parquet"
    )
    return get_task("toy")


def test_toy_task_runs_through_the_whole_pipeline(toy, monkeypatch, tmp_path):
    from anachron.methods import runner

    # build: the task's own inputs and builder; the generic checks pass
    instances, exclusions, manifest = build_task_dataset("toy", toy.dataset_inputs(), {"seed": 3},
                                                         knowledge_cutoffs={"m": KNOWLEDGE_CUTOFF})
    assert manifest["counts"] == {"eval": 2} and list(manifest["inputs"]) == ["weather"]
    assert check_instances("toy", instances, {"m": KNOWLEDGE_CUTOFF}) == []

    # temporal_hint through the real runner, its provider scripted
    model = {"model": "mock/toy", "knowledge_cutoff": KNOWLEDGE_CUTOFF, "params": {"temperature": 0}}
    provider = MockProvider(ModelSpec(name="toy-model", **model), answers=rain_answer)
    monkeypatch.setattr(runner, "LLMClient", functools.partial(LLMClient, provider=provider))
    run, calls, _, meta = runner.run_method(
        instances, task_name="toy", method_name="temporal_hint", model_name="toy-model",
        model_config=model,
        method_config={}, cache_dir=tmp_path / "cache", splits=["eval"], sample=None, seed=0,
    )
    assert len(provider.requests) == 2 and meta["parse_ok"] == 2
    assert set(run["parse_status"]) == {"ok"} and set(run["task"]) == {"toy"}

    # verify: the task's grounded check and outcome rules, through the registry
    instances = instances.set_index("instance_id", drop=False)
    contexts = {iid: toy.grounding_context(instances.loc[iid]) for iid in run["instance_id"]}
    claims = verify_run(run, contexts, grounding=toy.make_grounding({}), layers=("grounded", "rules"), task=toy)
    outcome = claims[claims["fact"].str.startswith("It rained")]
    assert outcome["leaked"].all() and set(outcome["layer"]) == {"grounded"} and set(outcome["category"]) == {"A4"}
    clean = claims[claims["fact"].str.endswith("wet climate.")]
    assert not clean["leaked"].any()
    ruled = verify_run(run, contexts, layers=("rules",), task=toy)  # no grounding: the categoriser's A4 rule
    assert set(ruled.loc[ruled["fact"].str.startswith("It rained"), "category_rule"]) == {"A4:toy:the-weather"}
    consequence = ruled[ruled["source"] == "reasoning"]
    assert set(consequence["category"]) == {"A5"}  # "following the downpour": the toy's outcome noun
    ctx = {"task": toy, **contexts["toy-Ashby-2023-07-02"]}
    assert categorize("Following the downpour, roads closed on 2023-07-03.", ctx)[0] == "A5"
    assert categorize("Following the downpour, roads closed on 2023-07-03.", {"task": get_task("stock")})[0] != "A5"
    assert describe_instance(toy, instances.iloc[0]) == ("Will it rain in Ashby?", "the weather in Ashby on 2023-07-02")

    # score: real metrics with the task's Perf
    scores = instance_scores(run, claims, lambda iid, p: toy.perf(instances.loc[iid], p))
    assert list(scores["olr"]) == [0.5, 0.5]
    assert scores.set_index("instance_id")["perf"].to_dict() == pytest.approx(
        {"toy-Ashby-2023-07-02": 1 - 0.2**2, "toy-Brill-2023-07-09": 1 - 0.8**2}
    )
    metrics = aggregate(scores).set_index("metric")
    assert metrics.loc["olr", "value"] == 0.5 and metrics.loc["parse_rate", "value"] == 1.0
    assert metrics.loc["cov", "value"] == 0.5  # evidence [2] is cited, [1] is not


def test_registering_a_task_is_one_line(toy):
    assert "toy" in TASKS and get_task("toy").name == "toy"
    # hooks the toy did not implement have their defaults
    assert toy.overlap_problems(pd.DataFrame()) == [] and toy.grounding_inputs(edgar=True) == {}
    assert toy.is_consequence("anything", {}) is True and toy.rag_query_counts == (3, 6)
