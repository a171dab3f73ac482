"""Endpoints: masked addresses, shared limits (the gate of each endpoint, on a fake clock),
the probe before a run, the circuit breaker of the openai provider, and call attempts."""

from __future__ import annotations

import asyncio
import time

import pytest
import requests

from anachron.errors import EndpointError
from anachron.llm.cache import LLMCache
from anachron.llm.client import CallLog, LLMClient
from anachron.llm.endpoints import (
    EndpointLimits,
    check_endpoints,
    endpoint_address,
    endpoint_label,
    endpoint_limits,
    job_endpoints,
    probe_endpoints,
    resource_name,
)
from anachron.llm.providers import MockProvider, OpenAICompatProvider
from anachron.llm.providers.openai import CircuitBreaker
from anachron.llm.slots import EndpointGate, gate_for, shared_endpoint_gates
from anachron.llm.testserver import TestServer
from anachron.llm.types import ChatRequest, ModelSpec

from endpoint_fixtures import closed_port_url

ENV, KEY_ENV = "TEST_EP_BASE_URL", "TEST_EP_API_KEY"
KEY = "sk-test-" + "k" * 24


def spec(name="m", model="openai/stub", **over) -> ModelSpec:
    base = dict(name=name, model=model, knowledge_cutoff="2024-01-01", base_url_env=ENV, api_key_env=KEY_ENV,
                max_retries=1, timeout_s=5, retry_base_delay_s=0.0, retry_max_delay_s=0.0)
    base.update(over)
    return ModelSpec(**base)


def req(i: int) -> ChatRequest:
    return ChatRequest(messages=[{"role": "user", "content": f"question {i}"}], tag={"instance_id": f"i{i}"})


# --------------------------------------------------------------------------- naming


@pytest.mark.parametrize("url, expected", [
    ("https://user:pw@api.example.org/v1?key=abc", "https://api.example.org:443"),
    ("http://127.0.0.1:8000/v1", "http://127.0.0.1:8000"),
    ("HTTP://Host.Example/v1/", "http://host.example:80"),
    ("http://[::1]:9000/v1", "http://[::1]:9000"),
    ("localhost:8000", "<not a URL>"),
    ("", "<not a URL>"),
])
def test_endpoint_address_keeps_scheme_host_port_only(url, expected):
    assert endpoint_address(url) == expected


def test_endpoint_label_and_resource_name():
    environ = {ENV: "https://u:secret@h.example:8443/v1?token=t"}
    assert endpoint_label(spec(), environ) == f"{ENV} (https://h.example:8443)"
    assert endpoint_label(spec(), {}) == f"{ENV} (unset)"
    assert endpoint_label(spec(model="mock/x"), environ) is None
    assert endpoint_label(spec(model="local/x"), environ) is None
    assert resource_name("ANACHRON_BASE_URL") == "endpoint_anachron_base_url"


# --------------------------------------------------------------------------- shared limits


def test_job_endpoints_are_the_limited_endpoints_a_job_calls():
    limits = endpoint_limits({ENV: {"concurrency": 4, "requests_per_minute": None}})
    assert limits == {ENV: EndpointLimits(4, None)}
    assert job_endpoints([spec(concurrency=8)], limits) == {ENV}
    assert job_endpoints([spec(concurrency=2), spec("sup", base_url_env="OTHER_URL")], limits) == {ENV}
    assert job_endpoints([spec(base_url_env="OTHER_URL")], limits) == set()
    assert job_endpoints([spec(model="mock/x", concurrency=8)], limits) == set()


class FakeClock:
    def __init__(self):
        self.now = 0.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, s: float) -> None:
        self.slept.append(s)
        self.now += s


def test_client_passes_every_call_through_the_gate_and_throttles_retries(tmp_path):
    clock = FakeClock()
    gate = EndpointGate(tmp_path / "ep", 2, 60, clock=clock, sleep=clock.sleep)  # one token per second
    gate.rate.try_take = _drain_then(gate.rate.try_take, 60)  # start with an empty bucket
    mspec = spec(model="mock/x", max_retries=2, mock={"fail_first": 1})
    provider = MockProvider(mspec, sleep=clock.sleep)
    client = LLMClient(mspec, None, CallLog(), provider=provider, gate=gate)
    results = client.complete_many([req(i) for i in range(3)], progress=False)
    assert [r.attempts for r in results] == [2, 2, 2]
    assert provider.attempts == 6
    assert clock.now >= 5.0  # 6 requests at one per second: the last starts 5 s after the first
    assert gate.slots.in_use_here() == 0  # every slot given back


def _drain_then(take, n):
    """``take`` after taking ``n`` tokens once (an empty bucket to start from)."""
    for _ in range(n):
        take()
    return take


def test_shared_gates_reach_clients_of_their_endpoint_only(tmp_path):
    gate = EndpointGate(tmp_path, 4)
    assert gate.rate is None
    assert gate_for(spec()) is None
    with shared_endpoint_gates({ENV: gate}):
        assert gate_for(spec()) is gate
        assert gate_for(spec(base_url_env="OTHER_URL")) is None
        assert gate_for(spec(model="mock/x")) is None
    assert gate_for(spec()) is None


# --------------------------------------------------------------------------- the probe


class FakeResponse:
    def __init__(self, status):
        self.status_code = status


class FakeSession:
    """Answers GET requests from a script of statuses or exceptions; records URLs and headers."""

    def __init__(self, *script):
        self.script = list(script)
        self.calls: list[tuple[str, dict]] = []

    def get(self, url, headers=None, timeout=None):
        self.calls.append((url, headers))
        item = self.script.pop(0) if len(self.script) > 1 else self.script[0]
        if isinstance(item, Exception):
            raise item
        return FakeResponse(item)


ENVIRON = {ENV: "http://user:pw@gpu-7.example:8000/v1", KEY_ENV: KEY}


def test_probe_sends_one_request_per_endpoint_with_the_key():
    session = FakeSession(200)
    notes = check_endpoints([spec("a"), spec("b"), spec("c", model="mock/x"), spec("d", model="local/x")],
                            session=session, environ=ENVIRON)
    assert session.calls == [("http://user:pw@gpu-7.example:8000/v1/models", {"Authorization": f"Bearer {KEY}"})]
    assert notes == [f"endpoint {ENV} (http://gpu-7.example:8000): HTTP 200 (model(s) a, b)"]
    assert check_endpoints([spec(model="mock/x")], session=FakeSession(500), environ=ENVIRON) == []


def test_probe_accepts_a_server_without_models_route():
    notes = check_endpoints([spec()], session=FakeSession(404), environ=ENVIRON)
    assert "HTTP 404 (no /models route; reachable)" in notes[0]


def test_probe_retries_once_then_reports_a_dead_endpoint():
    sleeps = []
    session = FakeSession(requests.ConnectionError("refused"), 200)
    outcomes = probe_endpoints([spec()], session=session, environ=ENVIRON, sleep=sleeps.append)
    assert outcomes[0].ok and len(session.calls) == 2 and sleeps == [1.0]
    for script in ([requests.ConnectionError("refused")], [requests.Timeout("slow")], [503]):
        with pytest.raises(EndpointError) as err:
            check_endpoints([spec("qwen")], session=FakeSession(*script), environ=ENVIRON, sleep=lambda s: None)
        msg = str(err.value)
        assert f"endpoint {ENV} (http://gpu-7.example:8000) of model(s) qwen: not answering after 2 tries" in msg
        assert "probe_endpoints=False" in msg and "pw" not in msg and KEY not in msg
    assert "HTTP 503" in msg


@pytest.mark.parametrize("status", [401, 403])
def test_probe_reports_a_rejected_key(status):
    with pytest.raises(EndpointError, match=f"rejected the API key in {KEY_ENV} \\(HTTP {status}\\)"):
        check_endpoints([spec()], session=FakeSession(status), environ=ENVIRON)


def test_probe_of_a_closed_port_and_of_a_live_server(monkeypatch):
    environ = {ENV: closed_port_url(), KEY_ENV: KEY}
    t0 = time.monotonic()
    with pytest.raises(EndpointError, match="no answer \\(ConnectionError\\)"):
        check_endpoints([spec()], environ=environ, pause_s=0.0)
    assert time.monotonic() - t0 < 5
    with TestServer(api_key=KEY) as srv:  # any other key, or none, would get a 401
        notes = check_endpoints([spec()], environ={ENV: srv.base_url, KEY_ENV: KEY})
        stats = srv.stats()
    assert "HTTP 200" in notes[0]
    assert (stats["models"], stats["unauthorized"], stats["requests"]) == (1, 0, 0)  # one GET, with the key


# --------------------------------------------------------------------------- attempts


def test_attempts_count_retries_and_are_zero_for_cache_hits(tmp_path):
    mspec = spec(model="mock/x", max_retries=3, mock={"fail_first": 2})
    log = CallLog()
    client = LLMClient(mspec, LLMCache(tmp_path), log)
    first = client.complete_many([req(0)], progress=False)[0]
    again = client.complete_many([req(0)], progress=False)[0]
    assert (first.attempts, first.cache_hit) == (3, False)
    assert (again.attempts, again.cache_hit) == (0, True)
    assert log.to_frame()["attempts"].tolist() == [3, 0]
    failing = spec("f", model="mock/x", max_retries=1, mock={"fail_first": 5})
    res = LLMClient(failing, None, CallLog()).complete_many([req(1)], progress=False)[0]
    assert res.error and res.attempts == 2


def test_openai_attempts_count_every_request_sent(monkeypatch):
    with TestServer(statuses=[500]) as srv:  # the first attempt fails
        monkeypatch.setenv(ENV, srv.base_url)
        monkeypatch.setenv(KEY_ENV, KEY)
        res = asyncio.run(OpenAICompatProvider(spec()).complete(req(0)))
        stats = srv.stats()
    assert res.error is None and res.attempts == 2 and stats["requests"] == 2
    assert (stats["injected"], stats["ok"]) == (1, 1)


# --------------------------------------------------------------------------- circuit breaker


def test_circuit_breaker_counts_consecutive_outages_only():
    breaker = CircuitBreaker(3, "E (http://h:1)")
    for outage in (True, True, False, True, True):
        breaker.record(outage)
    assert not breaker.is_open  # a call that got an answer resets the count
    breaker.record(True)
    assert breaker.is_open
    assert breaker.message.startswith("EndpointDown: endpoint E (http://h:1) not answering after 3 consecutive")


def test_dead_endpoint_trips_the_breaker_and_later_calls_are_not_sent(monkeypatch):
    monkeypatch.setenv(ENV, closed_port_url())
    monkeypatch.setenv(KEY_ENV, KEY)
    s = spec(concurrency=2, max_retries=2)
    provider = OpenAICompatProvider(s)
    assert provider.breaker.threshold == 3  # max(3, concurrency)
    t0 = time.monotonic()
    results = LLMClient(s, None, CallLog(), provider=provider).complete_many([req(i) for i in range(20)], progress=False)
    assert time.monotonic() - t0 < 10
    assert all(r.error for r in results)
    sent = [r for r in results if r.attempts > 0]
    # the calls that found the port closed: the three that opened the breaker, and at most one more in flight
    assert 3 <= len(sent) <= 4
    assert sum(r.attempts for r in results) <= 4 * 3
    refused = [r for r in results if r.attempts == 0]
    assert len(refused) >= 16 and all(r.error == provider.breaker.message for r in refused)
    assert f"{ENV} (http://127.0.0.1:" in provider.breaker.message


def test_errors_with_an_answer_do_not_trip_the_breaker(monkeypatch):
    with TestServer(status_for=lambda body: 400) as srv:
        monkeypatch.setenv(ENV, srv.base_url)
        monkeypatch.setenv(KEY_ENV, KEY)
        s = spec(concurrency=1, max_retries=0)
        provider = OpenAICompatProvider(s)
        results = LLMClient(s, None, CallLog(), provider=provider).complete_many([req(i) for i in range(5)], progress=False)
        sent = srv.stats()["requests"]
    assert all(r.error and r.attempts == 1 for r in results)
    assert not provider.breaker.is_open and sent == 5
