"""Adding a task is one folder: the toy task of ``tests/plugins/toy_weather`` (its task class, its
source, its config block; no planter) runs through the real workflow — config validation, fetch,
dataset build and check, a mock-provider run, verification, scoring, calibration (which leaves it
out with a note) and ``load_results`` — with no other module knowing about it; and, at the unit
level, through build -> temporal_hint (the real method runner, a scripted provider) -> verify (its
outcome rule, consequence nouns and grounded check) -> score (real metrics)."""

from __future__ import annotations

import functools
import json
import re
import sys
from pathlib import Path

import duckdb
import pandas as pd
import pytest

from anachron.llm.client import LLMClient
from anachron.llm.providers import MockProvider
from anachron.llm.types import ChatRequest, ModelSpec
from anachron.metrics.core import aggregate, instance_scores
from anachron.tasks.build import build_task_dataset
from anachron.tasks.checks import check_instances
from anachron.tasks.registry import TASKS, get_task
from anachron.verify.categorize import categorize
from anachron.verify.extract.llm import describe_instance
from anachron.verify.pipeline import verify_run

from conftest import REPO
from toy_workflow import import_plugin, snakemake_toy, write_toy_workdir

toy_weather = import_plugin("toy_weather")
RainTask, _answer = toy_weather.RainTask, toy_weather.rain_answer

KNOWLEDGE_CUTOFF = "2024-01-01"
SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))


def rain_answer(request: ChatRequest) -> str:
    """The scripted provider: the plugin's answer for the instance the prompt names."""
    town, day = re.search(r"rain in (\w+) on (\S+)\?", request.messages[-1]["content"]).groups()
    return _answer(town, day)


@pytest.fixture
def toy(monkeypatch, tmp_path):
    """The toy task registered (undone after the test), its raw data in a work dir."""
    monkeypatch.setitem(TASKS, "toy", RainTask)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data" / "raw" / "weather").mkdir(parents=True)
    pd.DataFrame({"town": ["Ashby", "Brill"], "day": ["2023-07-02", "2023-07-09"], "rained": [1, 0]}).to_parquet(
        tmp_path / "data" / "raw" / "weather" / "data.parquet"
    )
    (tmp_path / "data" / "raw" / "weather" / "manifest.json").write_text("{}")
    return get_task("toy")


def test_toy_task_runs_through_the_whole_pipeline(toy, monkeypatch, tmp_path):
    from anachron.methods import runner

    # build: the task's own inputs and builder; the generic checks pass
    instances, exclusions, manifest, audit = build_task_dataset("toy", toy.dataset_inputs(), {"seed": 3},
                                                                knowledge_cutoffs={"m": KNOWLEDGE_CUTOFF})
    assert manifest["counts"] == {"eval": 2} and list(manifest["inputs"]) == ["weather", "weather_manifest"]
    # a task without audited fields: nothing found, every instance clean
    assert audit.empty and set(instances["input_audit"]) == {"[]"} and manifest["input_audit"]["instances_flagged"] == 0
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


def test_the_registered_toy_has_the_defaults_it_did_not_override(toy):
    assert "toy" in TASKS and get_task("toy").name == "toy"
    # hooks the toy did not implement have their defaults
    assert toy.overlap_problems(pd.DataFrame()) == [] and toy.grounding_inputs(edgar=True) == {}
    assert toy.is_consequence("anything", {}) is True and toy.rag_query_counts == (3, 6)
    assert toy.has_planter() is False


# --------------------------------------------------------------------------- the real workflow


@pytest.fixture(scope="module")
def toy_workflow(tmp_path_factory):
    work = tmp_path_factory.mktemp("toy-workflow")
    config = write_toy_workdir(work, ["temporal_hint", "toy_twice"])
    run = snakemake_toy(work, config)
    assert run.returncode == 0, run.stderr[-4000:]
    return work


def test_the_toy_task_runs_through_the_real_workflow(toy_workflow):
    work = toy_workflow
    con = duckdb.connect(str(work / "results" / "results.duckdb"), read_only=True)
    inst = con.execute("SELECT instance_id, cutoff_date FROM instances WHERE task = 'toy' ORDER BY 1").fetchall()
    assert inst == [("toy-Ashby-2023-07-02", "2023-07-01"), ("toy-Brill-2023-07-09", "2023-07-08")]
    olr = dict(con.execute("SELECT instance_id, olr FROM instance_scores WHERE method = 'temporal_hint'").fetchall())
    # Ashby's first evidence item is its own outcome (the toy's grounded check): 1 of 2 claims leaked
    assert olr == {"toy-Ashby-2023-07-02": 0.5, "toy-Brill-2023-07-09": 0.0}
    layers = con.execute("SELECT DISTINCT layer, category FROM claims WHERE leaked").fetchall()
    assert layers == [("grounded", "A4")]
    perf = con.execute("SELECT value FROM metrics WHERE task='toy' AND method='temporal_hint' AND metric='perf'").fetchone()[0]
    assert perf == pytest.approx(((1 - 0.2**2) + (1 - 0.8**2)) / 2)
    assert con.execute("SELECT count(*) FROM calibration").fetchone()[0] == 0
    con.close()
    log = (work / "logs" / "calibrate_verifier.log").read_text()
    assert "toy: left out of calibration (the task has no planter" in log
    assert (work / "data" / "raw" / "weather" / "data.parquet").exists()
    assert not (work / "data" / "raw" / "edgar").exists() and not (work / "data" / "raw" / "news").exists()
    assert "toy" in (work / "results" / "tables" / "main.md").read_text()


def test_the_toy_task_needs_no_other_module(toy_workflow):
    # nothing outside its folder names the toy task or its source
    for root in (REPO / "src", REPO / "workflow", REPO / "config"):
        for path in root.rglob("*"):
            if path.is_file() and path.suffix in (".py", ".smk", ".yaml", ""):
                text = path.read_text(errors="ignore")
                assert "toy_weather" not in text and '"toy"' not in text and "weather" not in text, path


def test_the_toy_config_is_validated_with_its_own_block(tmp_path):
    config = write_toy_workdir(tmp_path, ["temporal_hint"])
    data = json.loads(config.read_text())
    data["tasks"]["toy"]["rain_gauge"] = 1
    config.write_text(json.dumps(data))
    run = snakemake_toy(tmp_path, config, "-n")
    out = run.stdout + run.stderr
    assert run.returncode != 0 and "config key tasks.toy" in out and "rain_gauge" in out, out[-2000:]
    data["plugins"] = ["no_such_plugin"]
    config.write_text(json.dumps(data))
    run = snakemake_toy(tmp_path, config, "-n")
    out = run.stdout + run.stderr
    assert run.returncode != 0 and "config key plugins: cannot import plugin 'no_such_plugin'" in out, out[-2000:]
