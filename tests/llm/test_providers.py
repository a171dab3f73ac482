"""OpenAICompatProvider against a local fake HTTP server; the provider registry and readiness checks."""

from __future__ import annotations

import asyncio
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from anachron.errors import ConfigError
from anachron.llm.cache import LLMCache
from anachron.llm.client import CallLog, LLMClient
from anachron.llm.providers import (
    PROVIDERS,
    LocalLlamaProvider,
    MockProvider,
    OpenAICompatProvider,
    check_provider_ready,
    make_provider,
    provider_class,
)
from anachron.llm.types import KNOWN_PROVIDERS, ChatRequest, ModelSpec

SECRET = "sk-test-SECRET-do-not-print-0123456789"
SCHEMA = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}


def ok_body(text: str = '{"answer": "42"}') -> dict:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": "fake-model",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 11, "completion_tokens": 5, "total_tokens": 16},
    }


class FakeServer:
    """Serves POST /v1/chat/completions from a script of (status, body, headers) or a callable
    (a ``bytes`` body is sent as it is, e.g. cut off)."""

    def __init__(self, script):
        self.script = list(script)
        self.requests: list[dict] = []
        self.auth: list[str | None] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep test output clean
                pass

            def do_POST(self):
                n = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(n) or b"{}")
                server.requests.append(body)
                server.auth.append(self.headers.get("authorization"))
                if self.path != "/v1/chat/completions":
                    status, payload, headers = 404, {"error": {"message": "not found"}}, {}
                elif callable(server.script[0]):
                    status, payload, headers = server.script[0](body)
                else:
                    status, payload, headers = server.script.pop(0) if len(server.script) > 1 else server.script[0]
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for k, v in headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=lambda: self.httpd.serve_forever(poll_interval=0.05), daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


def make_spec(**over) -> ModelSpec:
    base = dict(
        name="qwen3",
        model="openai/fake-model",
        knowledge_cutoff="2024-06-01",
        base_url_env="TEST_ANACHRON_BASE_URL",
        api_key_env="TEST_ANACHRON_API_KEY",
        max_retries=3,
        timeout_s=5,
        retry_base_delay_s=0.01,
        retry_max_delay_s=0.05,
        params={"temperature": 0.0, "max_tokens": 32},
    )
    base.update(over)
    return ModelSpec(**base)


@pytest.fixture
def env(monkeypatch):
    def set_url(url):
        monkeypatch.setenv("TEST_ANACHRON_BASE_URL", url)

    monkeypatch.setenv("TEST_ANACHRON_API_KEY", SECRET)
    return set_url


def run(provider, request):
    return asyncio.run(provider.complete(request))


REQ = ChatRequest(messages=[{"role": "user", "content": "hi"}], response_schema=SCHEMA)


def test_retries_429_then_500_then_ok(env):
    script = [
        (429, {"error": {"message": "rate limited"}}, {"retry-after": "0"}),
        (500, {"error": {"message": "boom"}}, {}),
        (200, ok_body(), {}),
    ]
    with FakeServer(script) as srv:
        env(srv.url)
        sleeps = []

        async def fake_sleep(s):
            sleeps.append(s)

        prov = OpenAICompatProvider(make_spec(), sleep=fake_sleep)
        res = run(prov, REQ)
    assert res.error is None, res.error
    assert res.text == '{"answer": "42"}'
    assert (res.prompt_tokens, res.completion_tokens, res.finish_reason) == (11, 5, "stop")
    assert len(srv.requests) == 3 and len(sleeps) == 2
    assert all(0 <= s <= 0.05 for s in sleeps)
    assert srv.auth[0] == f"Bearer {SECRET}"
    sent = srv.requests[-1]
    assert sent["model"] == "fake-model"
    assert sent["response_format"] == {"type": "json_schema", "json_schema": {"name": "output", "schema": SCHEMA}}
    assert sent["temperature"] == 0.0 and sent["max_tokens"] == 32


def test_real_backoff_sleeps_are_short_with_small_base(env):
    script = [(503, {"error": {"message": "busy"}}, {}), (200, ok_body(), {})]
    with FakeServer(script) as srv:
        env(srv.url)
        res = run(OpenAICompatProvider(make_spec()), REQ)
    assert res.error is None and len(srv.requests) == 2


def test_retry_after_header_is_respected(env):
    script = [(429, {"error": {"message": "slow down"}}, {"retry-after": "0.3"}), (200, ok_body(), {})]
    with FakeServer(script) as srv:
        env(srv.url)
        sleeps = []

        async def fake_sleep(s):
            sleeps.append(s)

        res = run(OpenAICompatProvider(make_spec(), sleep=fake_sleep), REQ)
    assert res.error is None
    assert sleeps == [pytest.approx(0.3)]


def test_gives_up_after_max_retries_with_error_result(env):
    with FakeServer([(500, {"error": {"message": "down"}}, {})]) as srv:
        env(srv.url)
        res = run(OpenAICompatProvider(make_spec(max_retries=2)), REQ)
    assert res.text == "" and res.error is not None and "InternalServerError" in res.error
    assert len(srv.requests) == 3  # first try + 2 retries


def test_non_retryable_4xx_is_not_retried(env):
    with FakeServer([(401, {"error": {"message": "bad key"}}, {})]) as srv:
        env(srv.url)
        res = run(OpenAICompatProvider(make_spec()), REQ)
    assert "AuthenticationError" in res.error and len(srv.requests) == 1
    assert SECRET not in res.error


@pytest.mark.parametrize(
    "bad",
    [
        json.dumps(ok_body()).encode()[:60],  # cut off in the middle
        b"<html>bad gateway</html>",  # not JSON at all
        b"{}",  # JSON without choices
        json.dumps({**ok_body(), "choices": []}).encode(),
        json.dumps({**ok_body(), "choices": [{"index": 0, "message": None}]}).encode(),
    ],
)
def test_malformed_200_body_is_retried_like_a_5xx(env, bad):
    with FakeServer([(200, bad, {}), (200, ok_body(), {})]) as srv:
        env(srv.url)
        sleeps = []

        async def fake_sleep(s):
            sleeps.append(s)

        res = run(OpenAICompatProvider(make_spec(), sleep=fake_sleep), REQ)
    assert res.error is None, res.error
    assert res.text == '{"answer": "42"}'
    assert len(srv.requests) == 2 and len(sleeps) == 1 and 0 <= sleeps[0] <= 0.05


def test_malformed_200_body_gives_up_after_max_retries(env, tmp_path):
    with FakeServer([(200, json.dumps(ok_body()).encode()[:60], {})]) as srv:
        env(srv.url)
        log = CallLog()
        client = LLMClient(make_spec(max_retries=2), LLMCache(tmp_path), log)
        [res] = client.complete_many([REQ], progress=False)
    assert res.text == "" and res.error is not None and res.error.startswith("malformed response")
    assert len(srv.requests) == 3  # first try + 2 retries
    assert len(log) == 1 and len(LLMCache(tmp_path)) == 0


def test_connection_error_is_retried_then_reported(env):
    env("http://127.0.0.1:9/v1")  # discard port: connection refused
    res = run(OpenAICompatProvider(make_spec(max_retries=1)), REQ)
    assert res.error is not None and "Connection" in res.error and res.text == ""


def test_structured_output_fallback_is_remembered(env):
    def respond(body):
        rf = body.get("response_format")
        if rf is not None:
            return 400, {"error": {"message": f"response_format type {rf['type']} not supported", "type": "invalid_request_error"}}, {}
        return 200, ok_body(), {}

    with FakeServer([respond]) as srv:
        env(srv.url)
        prov = OpenAICompatProvider(make_spec())
        res = run(prov, REQ)
        assert res.error is None and res.text == '{"answer": "42"}'
        assert [r.get("response_format", {}).get("type") for r in srv.requests] == ["json_schema", "json_object", None]
        assert prov.format_mode == "none"
        n = len(srv.requests)
        res2 = run(prov, REQ)  # the fallback is remembered: one request, no response_format
        assert res2.error is None
        assert len(srv.requests) == n + 1 and "response_format" not in srv.requests[-1]


def test_fallback_stops_at_json_object_when_supported(env):
    def respond(body):
        rf = body.get("response_format") or {}
        if rf.get("type") == "json_schema":
            return 400, {"error": {"message": "json_schema response_format is not supported by this server"}}, {}
        return 200, ok_body(), {}

    with FakeServer([respond]) as srv:
        env(srv.url)
        prov = OpenAICompatProvider(make_spec())
        assert run(prov, REQ).error is None
    assert prov.format_mode == "json_object"
    assert srv.requests[-1]["response_format"] == {"type": "json_object"}


def test_unrelated_400_does_not_fall_back(env):
    with FakeServer([(400, {"error": {"message": "maximum context length is 4096 tokens"}}, {})]) as srv:
        env(srv.url)
        prov = OpenAICompatProvider(make_spec())
        res = run(prov, REQ)
    assert "BadRequestError" in res.error and len(srv.requests) == 1
    assert prov.format_mode == "json_schema"


def test_sample_seed_and_extra_params(env):
    with FakeServer([(200, ok_body(), {})]) as srv:
        env(srv.url)
        prov = OpenAICompatProvider(make_spec(params={"temperature": 0.6, "seed": 10, "top_k": 20, "repeat_penalty": 1.1}))
        run(prov, ChatRequest(messages=[{"role": "user", "content": "hi"}], sample_index=3))
    sent = srv.requests[-1]
    assert sent["seed"] == 13 and sent["top_k"] == 20 and sent["repetition_penalty"] == 1.1
    assert "response_format" not in sent


def test_client_over_http_caches(env, tmp_path):
    with FakeServer([(200, ok_body(), {})]) as srv:
        env(srv.url)
        log = CallLog()
        client = LLMClient(make_spec(), LLMCache(tmp_path), log)
        a = client.complete_many([REQ], progress=False)
        b = client.complete_many([REQ], progress=False)  # a new event loop: a new AsyncOpenAI is made
    assert len(srv.requests) == 1
    assert a[0].text == b[0].text and b[0].cache_hit
    for f in tmp_path.rglob("*.json"):
        assert SECRET not in f.read_text() and "127.0.0.1" not in f.read_text()


# --------------------------------------------------------------------------- readiness


def test_missing_api_key_env_is_a_config_error(monkeypatch):
    monkeypatch.delenv("ANACHRON_API_KEY", raising=False)
    monkeypatch.setenv("ANACHRON_BASE_URL", "http://localhost:8000/v1")
    spec = ModelSpec(name="qwen3", model="openai/Qwen/Qwen3-30B-A3B", knowledge_cutoff="2024-06-01")
    with pytest.raises(ConfigError) as ei:
        check_provider_ready(spec)
    msg = str(ei.value)
    assert "ANACHRON_API_KEY" in msg and "models.qwen3.api_key_env" in msg and "'qwen3'" in msg
    assert "ANACHRON_BASE_URL" not in msg  # only the problem is reported
    with pytest.raises(ConfigError):
        make_provider(spec)


def test_empty_base_url_is_a_config_error_without_leaking_the_key(monkeypatch):
    monkeypatch.setenv("MY_KEY", SECRET)
    monkeypatch.setenv("MY_URL", "  ")
    spec = ModelSpec(name="qwen3", model="openai/Qwen/Qwen3-30B-A3B", knowledge_cutoff="2024-06-01",
                     api_key_env="MY_KEY", base_url_env="MY_URL")
    with pytest.raises(ConfigError) as ei:
        check_provider_ready(spec)
    msg = str(ei.value)
    assert "MY_URL" in msg and "models.qwen3.base_url_env" in msg
    assert SECRET not in msg and SECRET not in repr(ei.value)


def test_base_url_must_be_a_url(monkeypatch):
    monkeypatch.setenv("MY_KEY", SECRET)
    monkeypatch.setenv("MY_URL", f"localhost:8000?token={SECRET}")
    spec = ModelSpec(name="q", model="openai/m", knowledge_cutoff="2024-06-01", api_key_env="MY_KEY", base_url_env="MY_URL")
    with pytest.raises(ConfigError) as ei:
        check_provider_ready(spec)
    assert "http://" in str(ei.value) and SECRET not in str(ei.value)


def test_ready_when_env_is_set(env):
    env("http://localhost:8000/v1")
    check_provider_ready(make_spec())
    prov = make_provider(make_spec())
    assert isinstance(prov, OpenAICompatProvider)
    assert SECRET not in repr(prov)


def test_missing_gguf_is_a_config_error(tmp_path):
    spec = ModelSpec(name="tiny", model="local/tiny", knowledge_cutoff="2024-06-01", gguf_path=str(tmp_path / "nope.gguf"))
    with pytest.raises(ConfigError, match=r"GGUF file not found .*models\.tiny\.gguf_path"):
        check_provider_ready(spec)
    prov = make_provider(spec)  # constructing is lazy; the first call fails loudly
    assert isinstance(prov, LocalLlamaProvider)
    with pytest.raises(ConfigError):
        asyncio.run(prov.complete(ChatRequest(messages=[{"role": "user", "content": "x"}])))


def test_unknown_provider_is_rejected():
    with pytest.raises(ConfigError, match="models.x.model") as ei:
        ModelSpec.from_config("x", {"model": "anthropic/claude", "knowledge_cutoff": "2024-01-01"})
    assert "'anthropic'" in str(ei.value) and "local, openai, mock" in str(ei.value)
    # a spec that skipped validation still meets a clear error in the registry
    bad = ModelSpec.model_construct(name="x", model="anthropic/claude")
    for call in (provider_class, make_provider, check_provider_ready):
        with pytest.raises(ConfigError, match=r"unknown provider 'anthropic' \(config key models\.x\.model\)"):
            call(bad)


def test_registry_maps_prefixes_to_provider_classes(env, tmp_path):
    assert PROVIDERS == {"local": LocalLlamaProvider, "openai": OpenAICompatProvider, "mock": MockProvider}
    assert tuple(PROVIDERS) == KNOWN_PROVIDERS  # what ModelSpec accepts is what the registry serves
    env("http://localhost:8000/v1")
    specs = {
        "local": ModelSpec(name="l", model="local/tiny", knowledge_cutoff="2024-06-01", gguf_path=str(tmp_path / "t.gguf")),
        "openai": make_spec(),
        "mock": ModelSpec(name="m", model="mock/anything/at/all", knowledge_cutoff="2024-06-01"),
    }
    for prefix, spec in specs.items():
        assert spec.provider == prefix and provider_class(spec) is PROVIDERS[prefix]
        assert type(make_provider(spec)) is PROVIDERS[prefix]
    with pytest.raises(ConfigError, match="needs a 'mock/...' model"):
        MockProvider(specs["local"])


def test_readiness_is_per_provider(monkeypatch, tmp_path):
    monkeypatch.delenv("ANACHRON_API_KEY", raising=False)
    monkeypatch.delenv("ANACHRON_BASE_URL", raising=False)
    mock = ModelSpec(name="m", model="mock/m", knowledge_cutoff="2024-06-01", gguf_path=str(tmp_path / "nope.gguf"))
    check_provider_ready(mock)  # no endpoint, no GGUF, no llama-cpp needed
    assert MockProvider.readiness_problems(mock) == []
    remote = ModelSpec(name="r", model="openai/m", knowledge_cutoff="2024-06-01")
    problems = OpenAICompatProvider.readiness_problems(remote)
    assert len(problems) == 2 and "ANACHRON_API_KEY" in problems[0] and "ANACHRON_BASE_URL" in problems[1]
    local = ModelSpec(name="l", model="local/m", knowledge_cutoff="2024-06-01", gguf_path=str(tmp_path / "nope.gguf"))
    assert any("GGUF file not found" in p for p in LocalLlamaProvider.readiness_problems(local))
    with pytest.raises(ConfigError, match="ANACHRON_API_KEY.*; .*ANACHRON_BASE_URL"):
        check_provider_ready(remote)
