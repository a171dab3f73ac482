"""Failed calls of a method run: counted in its metadata below run.max_failed_share, an error above
it (naming the model and its endpoint), a run cut short by a dead endpoint that a re-run completes
from the cache, endpoint limits applied inside the job, and the re-run token of rule run_method."""

from __future__ import annotations

import functools
import json
import time

import pytest

from anachron.errors import EndpointError
from anachron.llm.client import LLMClient
from anachron.llm.providers import MockProvider
from anachron.llm.testserver import TestServer
from anachron.llm.types import ChatResult, ModelSpec
from anachron.methods import runner
from anachron.store.load import read_run_meta
from anachron.tables import RUN_META_COLUMNS

from endpoint_fixtures import closed_port_url, forecast_instances

ENV, KEY_ENV = "TEST_RUN_BASE_URL", "TEST_RUN_API_KEY"
MOCK = {"model": "mock/scripted", "knowledge_cutoff": "2022-01-01", "params": {"temperature": 0}}


def openai_model(**over) -> dict:
    model = {"model": "openai/stub", "knowledge_cutoff": "2022-01-01", "base_url_env": ENV, "api_key_env": KEY_ENV,
             "concurrency": 2, "max_retries": 1, "timeout_s": 5, "retry_base_delay_s": 0.0, "retry_max_delay_s": 0.0,
             "params": {"temperature": 0}}
    return {**model, **over}


def run(instances, model, cache, **kw):
    return runner.run_method(
        instances, task_name="forecast", method_name="temporal_hint", model_name="m", model_config=model,
        method_config={}, cache_dir=cache, splits=["eval"], sample=None, seed=0, **kw,
    )


def scripted(monkeypatch, failing: set[str]) -> MockProvider:
    """The runner's provider: a mock that fails the calls of the instances whose id is in ``failing``."""

    def answer(request):
        question = request.messages[-1]["content"]
        if any(f"made-up index {int(i[3:])} " in question for i in failing):
            return ChatResult(error="APIConnectionError: Connection error.")
        return None

    provider = MockProvider(ModelSpec(name="m", **MOCK), answers=answer)
    monkeypatch.setattr(runner, "LLMClient", functools.partial(LLMClient, provider=provider))
    return provider


def test_failures_below_the_threshold_are_counted_in_the_metadata(monkeypatch, tmp_path):
    scripted(monkeypatch, {"fc-003"})
    out, calls, _, meta = run(forecast_instances(10), MOCK, tmp_path, max_failed_share=0.2, retry_token="retry:T0")
    assert meta["n_uncached_calls"] == 10 and meta["n_failed_calls"] == 1 and meta["n_failed_instances"] == 1
    assert meta["failed_share"] == pytest.approx(0.1)
    assert meta["n_attempts"] == int(calls["attempts"].sum()) == 10
    assert meta["first_error"] == "APIConnectionError: Connection error."
    assert meta["endpoint"] is None and meta["retry_token"] == "retry:T0"
    assert out.set_index("instance_id").loc["fc-003", "llm_error"] == "APIConnectionError: Connection error."
    # the metadata loads into the declared runs table
    path = tmp_path / "meta.json"
    path.write_text(json.dumps(meta, default=str))
    assert set(read_run_meta([path]).columns) == set(RUN_META_COLUMNS)
    # a clean run: no failures, share 0
    scripted(monkeypatch, set())
    _, _, _, clean = run(forecast_instances(10), MOCK, tmp_path)
    assert (clean["n_failed_calls"], clean["failed_share"], clean["n_uncached_calls"]) == (0, 0.0, 1)
    assert clean["n_cache_hits"] == 9 and clean["first_error"] is None


def test_failures_above_the_threshold_fail_the_run_and_a_rerun_continues(monkeypatch, tmp_path):
    scripted(monkeypatch, {"fc-001", "fc-004"})
    with pytest.raises(EndpointError) as err:
        run(forecast_instances(10), MOCK, tmp_path, max_failed_share=0.1)
    msg = str(err.value)
    assert "run forecast/temporal_hint/m: 2 of 10 uncached LLM calls failed after retries (20.0%" in msg
    assert "above run.max_failed_share 10.0%" in msg and "2 instance(s) affected" in msg
    assert "model 'm' (mock/scripted), endpoint no endpoint" in msg
    assert "- APIConnectionError: Connection error." in msg and "re-running `snakemake` continues" in msg
    provider = scripted(monkeypatch, set())
    _, _, _, meta = run(forecast_instances(10), MOCK, tmp_path, max_failed_share=0.1)
    assert len(provider.requests) == 2 and meta["n_cache_hits"] == 8 and meta["n_failed_calls"] == 0


def test_an_endpoint_that_dies_mid_run_fails_the_job_fast_and_a_rerun_sends_only_the_rest(monkeypatch, tmp_path):
    monkeypatch.setenv(KEY_ENV, "placeholder")
    instances = forecast_instances(30)
    with TestServer(latency_s=0.02, stop_after=8) as srv:  # closes its port after 8 answers
        # credentials in the URL never reach the message
        monkeypatch.setenv(ENV, srv.base_url.replace("http://", "http://user:hunter2@"))
        t0 = time.monotonic()
        with pytest.raises(EndpointError) as err:
            run(instances, openai_model(), tmp_path)
        elapsed = time.monotonic() - t0
    answered = srv.stats()["ok"]
    msg = str(err.value)
    port = srv.port
    assert elapsed < 20 and 8 <= answered < 30
    assert f"endpoint {ENV} (http://127.0.0.1:{port})" in msg and "EndpointDown" in msg
    assert "hunter2" not in msg and "user" not in msg
    assert f"of {30} uncached LLM calls failed" in msg
    # the endpoint is back (elsewhere): the re-run sends exactly the calls that are missing
    with TestServer() as back:
        monkeypatch.setenv(ENV, back.base_url)
        _, calls, _, meta = run(instances, openai_model(), tmp_path)
    assert back.stats()["requests"] == 30 - answered == meta["n_uncached_calls"]
    assert meta["n_failed_calls"] == 0 and meta["endpoint"] == ENV


def test_an_endpoint_down_from_the_start_costs_only_the_breakers_calls(monkeypatch, tmp_path):
    monkeypatch.setenv(KEY_ENV, "placeholder")
    monkeypatch.setenv(ENV, closed_port_url())
    with pytest.raises(EndpointError) as err:
        run(forecast_instances(40), openai_model(concurrency=4, max_retries=3), tmp_path)
    msg = str(err.value)
    assert "40 of 40 uncached LLM calls failed" in msg and "not answering after 4 consecutive failed calls" in msg


def test_endpoint_limits_cap_concurrency_and_rate_inside_the_job(monkeypatch, tmp_path):
    monkeypatch.setenv(KEY_ENV, "placeholder")
    bucket = tmp_path / runner.LIMITS_DIR / ENV / "rate.json"
    bucket.parent.mkdir(parents=True)
    bucket.write_text(json.dumps({"tokens": 0.0, "t": time.time()}))  # another job just spent the minute's burst
    with TestServer(latency_s=0.05) as srv:
        monkeypatch.setenv(ENV, srv.base_url)
        _, _, _, meta = run(
            forecast_instances(12), openai_model(concurrency=8), tmp_path,
            endpoints={ENV: {"concurrency": 2, "requests_per_minute": 600}},
        )
    assert meta["n_uncached_calls"] == 12
    assert srv.max_in_flight() <= 2  # the endpoint's slots, not the model's 8
    # 600 / min: one start every 0.1 s (the first connection's set-up may delay its arrival, so
    # count arrivals per window rather than single gaps)
    starts = srv.arrivals()
    assert len(starts) == 12
    assert starts[-1] - starts[0] >= 0.95
    assert max(sum(1 for t in starts if s <= t < s + 0.35) for s in starts) <= 5
    assert sorted(p.name for p in bucket.parent.iterdir()) == ["rate.json", "slot-0.lock", "slot-1.lock"]
    assert meta["config_hash"] == runner.stable_hash(
        {"model": openai_model(concurrency=8), "method": {}, "splits": ["eval"], "sample": None, "seed": 0})


def test_retry_param_changes_once_per_run_with_failures(tmp_path):
    assert runner.retry_state_path("results/runs/t/m/x.meta.json") == runner.Path("results/runs/t/m/x.retry.json")
    path = tmp_path / "m.retry.json"
    assert runner.retry_param(path) == ""
    path.write_text(json.dumps({"n_failed_calls": 0, "finished_at": "T1"}))
    assert runner.retry_param(path) == ""
    path.write_text(json.dumps({"n_failed_calls": 2, "finished_at": "T1", "retry_token": ""}))
    assert runner.retry_param(path) == "retry:T1"
    # the re-run got "retry:T1" and had no failures: the value stays, so nothing re-runs again
    path.write_text(json.dumps({"n_failed_calls": 0, "finished_at": "T2", "retry_token": "retry:T1"}))
    assert runner.retry_param(path) == "retry:T1"
    # it failed again: a new value, one more re-run
    path.write_text(json.dumps({"n_failed_calls": 1, "finished_at": "T2", "retry_token": "retry:T1"}))
    assert runner.retry_param(path) == "retry:T2"
    path.write_text("{not json")
    assert runner.retry_param(path) == ""


def test_failed_runs_summary_lists_only_runs_with_failed_calls(tmp_path):
    base = {"task": "stock", "method": "temporal_hint", "n_uncached_calls": 50, "n_failed_instances": 1}
    (tmp_path / "a.json").write_text(json.dumps({**base, "model": "a", "n_failed_calls": 0}))
    (tmp_path / "b.json").write_text(json.dumps({**base, "model": "b", "n_failed_calls": 1, "endpoint": "E_URL",
                                                 "first_error": "APITimeoutError: Request timed out."}))
    assert runner.failed_runs_summary([tmp_path / "a.json", tmp_path / "missing.json"]) is None
    text = runner.failed_runs_summary([tmp_path / "a.json", tmp_path / "b.json"])
    assert text.splitlines()[1] == (
        "  stock/temporal_hint/b: 1 of 50 uncached calls, 1 instance(s), endpoint E_URL; "
        "first error: APITimeoutError: Request timed out.")
    assert "/a:" not in text and "re-runs exactly these runs" in text
