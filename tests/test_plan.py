"""Which runs a config plans: probe variants, the perf_clean runs and nested samples."""

from __future__ import annotations

import copy

import pandas as pd
import pytest
import yaml

from anachron.config import validate_config
from anachron.methods.runner import sample_instances
from anachron.plan import clean_runs, method_sample, planned_runs, probe_runs, shapley_runs, split_variant, variant_name
from conftest import REPO


@pytest.fixture()
def cfg():
    with open(REPO / "config" / "config.yaml") as fh:
        return validate_config(yaml.safe_load(fh))


def test_variant_names_round_trip_and_an_unknown_probe_is_an_error():
    assert split_variant("temporal_hint") == ("temporal_hint", None)
    assert split_variant(variant_name("rag_unrestricted", "date_shift")) == ("rag_unrestricted", "date_shift")
    with pytest.raises(ValueError, match="unknown probe 'masked'"):
        split_variant("rag@masked")


def test_probe_runs_follow_the_probed_methods_tasks_and_kinds(cfg):
    runs = probe_runs(cfg)
    assert {m for _, m, _ in runs} == {"temporal_hint@neutered", "temporal_hint@date_shift"}
    assert {t for t, _, _ in runs} == set(cfg["run"]["tasks"])
    assert planned_runs(cfg)[-len(runs):] == runs
    # neither Shapley nor perf_clean attributes a probe run
    assert not any("@" in m for _, m, _ in shapley_runs(cfg) + clean_runs(cfg))
    c = copy.deepcopy(cfg)
    c["probes"].update(kinds=["neutered"], tasks=["legal"])
    assert probe_runs(c) == [("legal", "temporal_hint@neutered", "smollm2")]
    c["perf_clean"]["enabled"] = False
    assert clean_runs(c) == []


def test_a_probe_sample_is_nested_in_its_methods_sample(cfg):
    assert method_sample(cfg, "stock", "temporal_hint") == 20
    assert method_sample(cfg, "stock", "temporal_hint@neutered") == 2
    ids = pd.DataFrame({"instance_id": [f"i{k:03d}" for k in range(200)], "split": "eval"})
    big = set(sample_instances(ids, ["eval"], 20, 42)["instance_id"])
    small = set(sample_instances(ids, ["eval"], 4, 42)["instance_id"])
    assert small < big


def test_tempo_runs_get_no_perf_clean(cfg):
    c = copy.deepcopy(cfg)
    c["run"]["methods"] = ["temporal_hint", "tempo"]
    assert {m for _, m, _ in clean_runs(c)} == {"temporal_hint"}
