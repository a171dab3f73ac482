import copy
import re
import tomllib

import pytest
import yaml
from snakemake.utils import update_config

from anachron.config import SCHEMA_PATH, check_ready, load_schema, model_spec, validate_config
from anachron.errors import ConfigError
from anachron.llm.providers import PROVIDERS
from anachron.llm.providers.mock import MockOptions
from conftest import REPO


@pytest.fixture()
def cfg():
    with open(REPO / "config" / "config.yaml") as fh:
        return yaml.safe_load(fh)


def test_default_config_validates_and_fills_defaults(cfg, monkeypatch):
    monkeypatch.delenv("ANACHRON_SNAPSHOT_DIR", raising=False)
    out = validate_config(copy.deepcopy(cfg))
    assert out["bootstrap"]["n_resamples"] == 2000
    assert out["models"]["smollm2"]["concurrency"] == 4
    assert out["methods"]["temporal_hint"]["max_evidence"] == 10
    assert out["snapshot_dir"] is None


def test_corpus_layer_is_a_verify_and_calibration_layer(cfg):
    cfg["verify"] = {"layers": ["grounded", "corpus", "rules"], "corpus": {"min_support": 0.95}}
    cfg["calibration"] = {"layer_sets": [["grounded", "rules"], ["grounded", "corpus", "rules"]]}
    out = validate_config(cfg)
    assert out["verify"]["corpus"] == {"k": 10, "min_support": 0.95}
    cfg["verify"]["corpus"]["min_support"] = 0
    with pytest.raises(ConfigError, match=r"verify\.corpus\.min_support"):
        validate_config(cfg)


def test_paper_config_validates(monkeypatch):
    with open(REPO / "config" / "paper.yaml") as fh:
        out = validate_config(yaml.safe_load(fh))
    assert len(out["tasks"]["stock"]["windows"]) == 6


def test_probe_kinds_are_checked_and_a_method_not_run_is_not_probed(cfg):
    from anachron.plan import probe_runs

    cfg["probes"] = {"methods": ["timespec", "temporal_hint"]}
    cfg["run"]["methods"] = ["temporal_hint"]
    assert {m for _, m, _ in probe_runs(validate_config(cfg))} == {"temporal_hint@neutered", "temporal_hint@date_shift"}
    cfg["probes"] = {"methods": ["temporal_hint"], "kinds": ["masked"]}
    with pytest.raises(ConfigError, match=r"probes\.kinds\.0"):
        validate_config(cfg)


def test_unknown_key_is_named(cfg):
    cfg["run"]["methodz"] = ["temporal_hint"]
    with pytest.raises(ConfigError, match=r"run.*methodz"):
        validate_config(cfg)


def test_wrong_type_is_named(cfg):
    cfg["tasks"]["stock"]["windows"][0]["n"] = "twenty"
    with pytest.raises(ConfigError, match=r"tasks\.stock\.windows\.0\.n"):
        validate_config(cfg)


def test_undefined_model_in_run(cfg):
    cfg["run"]["models"] = ["gpt-x"]
    with pytest.raises(ConfigError, match="gpt-x"):
        validate_config(cfg)


def test_window_end_before_start(cfg):
    cfg["tasks"]["stock"]["windows"][0]["end"] = "2019-01-01"
    with pytest.raises(ConfigError, match="not after start"):
        validate_config(cfg)


def test_snapshot_env_overrides(cfg, monkeypatch):
    monkeypatch.setenv("ANACHRON_SNAPSHOT_DIR", "/some/where")
    assert validate_config(cfg)["snapshot_dir"] == "/some/where"


def test_missing_api_key_reported_before_work(cfg, monkeypatch):
    monkeypatch.delenv("MY_ENDPOINT_KEY", raising=False)
    monkeypatch.setenv("MY_ENDPOINT_URL", "http://127.0.0.1:9/v1")
    cfg["models"]["remote"] = {
        "model": "openai/some-model", "knowledge_cutoff": "2025-01-01",
        "api_key_env": "MY_ENDPOINT_KEY", "base_url_env": "MY_ENDPOINT_URL",
    }
    cfg["run"]["models"] = ["remote"]
    validate_config(cfg)
    with pytest.raises(ConfigError, match="MY_ENDPOINT_KEY"):
        check_ready(cfg)


def test_mock_model_is_accepted_and_ready(cfg, monkeypatch):
    monkeypatch.delenv("ANACHRON_API_KEY", raising=False)
    cfg["models"] = {"dry": {"model": "mock/dry", "knowledge_cutoff": "2024-06-30",
                             "mock": {"answers": {"queries": ['[{"query": "x"}]']}, "latency_s": 0.01}}}
    cfg["run"]["models"] = ["dry"]
    out = validate_config(cfg)
    assert out["models"]["dry"]["mock"]["failure_kind"] == "server_error"  # defaults filled in the block
    spec = model_spec(out, "dry")
    assert spec.provider == "mock" and MockOptions.of(spec).latency_s == 0.01
    check_ready(out)  # no endpoint, key or model file needed


def test_mock_options_are_checked_and_absent_elsewhere(cfg):
    out = validate_config(copy.deepcopy(cfg))
    assert "mock" not in out["models"]["smollm2"]  # no default block: other models' config hashes stay
    cfg["models"]["dry"] = {"model": "mock/dry", "knowledge_cutoff": "2024-06-30", "mock": {"latency": 1}}
    with pytest.raises(ConfigError, match=r"models\.dry\.mock.*latency"):
        validate_config(cfg)


def test_schema_accepts_every_registered_provider_and_mirrors_the_mock_options():
    entry = load_schema()["properties"]["models"]["additionalProperties"]["properties"]
    for prefix in PROVIDERS:
        assert re.match(entry["model"]["pattern"], f"{prefix}/x")
    assert not re.match(entry["model"]["pattern"], "anthropic/x")
    block = entry["mock"]["properties"]
    assert {k: v.get("default") for k, v in block.items()} == MockOptions().model_dump()


def test_test_configs_validate(cfg):
    # e2e.yaml overrides the default config: lists replace, mappings merge key by key
    update_config(cfg, yaml.safe_load((REPO / ".test" / "config" / "e2e.yaml").read_text()))
    out = validate_config(cfg)
    assert out["tasks"]["stock"]["windows"][0]["name"] == "fixture"
    assert out["methods"]["rag"] == {**out["methods"]["rag"], "tasks": ["stock"], "sample": 1, "token_budget": 500}
    assert out["models"]["smollm2"]["params"]["max_tokens"] == 300
    assert out["models"]["smollm2"]["params"]["repeat_penalty"] == 1.1
    snapshots = validate_config(yaml.safe_load((REPO / ".test" / "config" / "snapshots.yaml").read_text()))
    assert snapshots["run"]["methods"] == cfg["run"]["methods"] and snapshots["run"]["tasks"] == cfg["run"]["tasks"]


def test_schema_ships_as_package_data():
    package = REPO / "src" / "anachron"
    globs = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["anachron"]
    assert SCHEMA_PATH.is_file() and not SCHEMA_PATH.is_symlink()
    assert any(SCHEMA_PATH in {p.resolve() for p in package.glob(g)} for g in globs)
    assert {"snapshot_dir", "tasks", "run", "methods", "models"} <= set(load_schema()["properties"])
