"""The loopback test server at the HTTP level (plain ``http.client`` requests): each fault kind,
answers that do not depend on faults, injected statuses, a server that stops after some answers,
its records (arrivals, calls in flight), authentication, ``/models``, a prompt stop, concurrency
and the command line."""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest

from anachron.llm.providers.mock import default_answer
from anachron.llm.testserver import FAULT_KINDS, FaultRates, TestServer, build_parser
from anachron.llm.types import ChatRequest

from conftest import REPO

SCHEMA = {
    "type": "object",
    "properties": {"answer": {"type": "string"}, "score": {"type": "number", "minimum": 0, "maximum": 1}},
    "required": ["answer", "score"],
}


def body(content: str = "What is the weather?", *, model: str = "m1", schema: dict | None = SCHEMA, **extra) -> dict:
    out = {"model": model, "messages": [{"role": "user", "content": content}], **extra}
    if schema is not None:
        out["response_format"] = {"type": "json_schema", "json_schema": {"name": "output", "schema": schema}}
    return out


def post(srv: TestServer, payload: dict | bytes, *, key: str | None = None, path: str = "/v1/chat/completions",
         timeout: float = 5.0) -> tuple[int, dict[str, str], bytes]:
    """(status, headers, raw body) of one POST on a fresh connection."""
    conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=timeout)
    try:
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        headers = {"Content-Type": "application/json", **({"Authorization": f"Bearer {key}"} if key else {})}
        conn.request("POST", path, data, headers)
        resp = conn.getresponse()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
    finally:
        conn.close()


def get(srv: TestServer, path: str = "/v1/models", *, key: str | None = None) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=5)
    try:
        conn.request("GET", path, headers={"Authorization": f"Bearer {key}"} if key else {})
        resp = conn.getresponse()
        return resp.status, resp.read()
    finally:
        conn.close()


def expected_answer(schema: dict | None = SCHEMA) -> str:
    return default_answer(ChatRequest(messages=[{"role": "user", "content": "x"}], response_schema=schema))


# ---------------------------------------------------------------------------- fault rates


def test_fault_rates_are_validated():
    with pytest.raises(ValueError, match="sum to 1.1"):
        FaultRates(rate_limit=0.5, hang=0.6)
    with pytest.raises(ValueError):
        FaultRates(timeout=0.1)  # unknown kind
    with pytest.raises(ValueError):
        FaultRates(reset=-0.1)
    with pytest.raises(ValueError):
        FaultRates(retry_after_s=-1)
    rates = FaultRates(rate_limit=0.5, reset=0.5)
    with pytest.raises(ValueError):
        rates.rate_limit = 0.1  # frozen
    with pytest.raises(ValueError):
        TestServer(latency_s=-1)


# ---------------------------------------------------------------------------- answers


def test_answer_is_the_schema_instance_with_word_usage():
    with TestServer() as srv:
        assert srv.base_url == f"http://127.0.0.1:{srv.port}/v1"
        status, headers, raw = post(srv, body("one two three"))
        plain = post(srv, body("no schema", schema=None))
        srv.stop()  # a second stop is a no-op
    assert status == 200 and headers["content-type"] == "application/json"
    resp = json.loads(raw)
    choice = resp["choices"][0]
    assert choice["message"] == {"role": "assistant", "content": expected_answer()}
    assert json.loads(choice["message"]["content"]) == {"answer": "mock", "score": 0.5}
    assert choice["finish_reason"] == "stop" and resp["model"] == "m1"
    assert resp["usage"] == {"prompt_tokens": 3, "completion_tokens": len(expected_answer().split()),
                             "total_tokens": 3 + len(expected_answer().split())}
    assert json.loads(plain[2])["choices"][0]["message"]["content"] == "{}"


def test_answers_do_not_depend_on_max_tokens_faults_or_order():
    requests = [body(f"question {i}", max_tokens=m, seed=s) for i in range(4) for m in (5, 500) for s in (0, 1)]

    def answers(srv: TestServer, order: list[int]) -> dict[int, str]:
        out = {}
        for i in order:
            status, _, raw = post(srv, requests[i])
            assert status == 200
            out[i] = json.loads(raw)["choices"][0]["message"]["content"]
        return out

    with TestServer(seed=0) as clean:
        first = answers(clean, list(range(len(requests))))
    with TestServer(seed=3, faults=FaultRates(rate_limit=0.3, server_error=0.3)) as faulty:
        second: dict[int, str] = {}
        for _ in range(30):  # ask again until every request got through its faults
            missing = [i for i in reversed(range(len(requests))) if i not in second]
            for i in missing:
                status, _, raw = post(faulty, requests[i])
                if status == 200:
                    second[i] = json.loads(raw)["choices"][0]["message"]["content"]
        stats = faulty.stats()
    assert first == second
    assert set(first.values()) == {expected_answer()}
    assert stats["rate_limit"] > 0 and stats["server_error"] > 0


def test_fault_draws_follow_the_request_not_the_order():
    requests = [body(f"q{i}") for i in range(40)]
    rates = FaultRates(rate_limit=0.25, server_error=0.25, truncated=0.25)

    def statuses(order: list[int], seed: int) -> dict[int, tuple[int, int]]:
        with TestServer(seed=seed, faults=rates) as srv:
            out = {}
            for i in order:  # two attempts each, so each request's second draw is seen too
                out[i] = tuple(post(srv, requests[i])[0] for _ in range(2))
        return out

    forward = statuses(list(range(40)), seed=0)
    assert statuses(list(reversed(range(40))), seed=0) == forward
    assert statuses(list(range(40)), seed=1) != forward
    assert {s for pair in forward.values() for s in pair} == {200, 429, 500}


# ---------------------------------------------------------------------------- each fault kind


def test_rate_limit_is_a_429_with_retry_after():
    with TestServer(faults=FaultRates(rate_limit=1.0, retry_after_s=1.5)) as srv:
        status, headers, raw = post(srv, body())
        stats = srv.stats()
    assert status == 429
    assert headers["retry-after"] == "1.5" and headers["retry-after-ms"] == "1500"
    assert json.loads(raw)["error"]["code"] == "rate_limit_exceeded"
    assert stats["requests"] == 1 and stats["rate_limit"] == 1 and stats["ok"] == 0


def test_server_error_is_a_500_with_an_error_body():
    with TestServer(faults=FaultRates(server_error=1.0)) as srv:
        status, _, raw = post(srv, body())
        assert srv.stats()["server_error"] == 1
    assert status == 500 and json.loads(raw)["error"]["type"] == "server_error"


def test_malformed_body_is_cut_off_with_a_matching_length():
    with TestServer(faults=FaultRates(malformed=1.0)) as srv:
        status, headers, raw = post(srv, body())
        assert srv.stats()["malformed"] == 1 and srv.stats()["ok"] == 0
    assert status == 200 and int(headers["content-length"]) == len(raw) > 0
    with pytest.raises(json.JSONDecodeError):
        json.loads(raw)
    assert raw.startswith(b'{"id": "chatcmpl-')


def test_truncated_content_is_valid_json_cut_mid_way():
    with TestServer(faults=FaultRates(truncated=1.0)) as srv:
        status, _, raw = post(srv, body())
        assert srv.stats()["truncated"] == 1
    resp = json.loads(raw)
    content = resp["choices"][0]["message"]["content"]
    full = expected_answer()
    assert status == 200 and resp["choices"][0]["finish_reason"] == "length"
    assert full.startswith(content) and 0 < len(content) < len(full)
    assert resp["usage"]["completion_tokens"] == len(content.split())


def test_reset_closes_the_connection_without_a_response():
    with TestServer(faults=FaultRates(reset=1.0)) as srv:
        with pytest.raises(ConnectionResetError):
            post(srv, body())
        assert srv.stats()["reset"] == 1


def test_hang_answers_nothing_until_the_client_leaves():
    with TestServer(faults=FaultRates(hang=1.0)) as srv:
        t0 = time.perf_counter()
        with pytest.raises(TimeoutError):
            post(srv, body(), timeout=0.3)
        assert 0.3 <= time.perf_counter() - t0 < 1.0
        assert srv.stats()["hang"] == 1
        deadline = time.time() + 2
        while srv._connections and time.time() < deadline:  # the handler notices the client left
            time.sleep(0.02)
        assert not srv._connections


def test_stop_returns_promptly_with_hung_requests():
    srv = TestServer(faults=FaultRates(hang=1.0)).start()
    errors: list[BaseException] = []

    def hung() -> None:
        try:
            post(srv, body(f"hang {threading.get_ident()}"), timeout=30)
        except BaseException as exc:  # noqa: BLE001 - the test inspects it
            errors.append(exc)

    threads = [threading.Thread(target=hung) for _ in range(8)]
    for t in threads:
        t.start()
    while srv.stats()["hang"] < 8:
        time.sleep(0.01)
    t0 = time.perf_counter()
    srv.stop()
    assert time.perf_counter() - t0 < 1.0
    for t in threads:
        t.join(timeout=2)
    assert not any(t.is_alive() for t in threads)
    assert len(errors) == 8  # every client saw its connection end without an answer
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", srv.port), timeout=1).close()


def test_latency_and_token_rate():
    n_words = len(expected_answer().split())
    with TestServer(latency_s=0.1, tokens_per_s=n_words / 0.2) as srv:
        t0 = time.perf_counter()
        assert post(srv, body())[0] == 200
        elapsed = time.perf_counter() - t0
    assert 0.3 <= elapsed < 1.0


# ---------------------------------------------------------------------------- injected statuses, a dying server


def test_scripted_statuses_fail_the_first_attempts_in_order():
    with pytest.raises(ValueError, match="200 or an HTTP error status"):
        TestServer(statuses=[302])
    with pytest.raises(ValueError, match="stop_after"):
        TestServer(stop_after=0)
    with TestServer(statuses=[500, 429, 200, 404], faults=FaultRates(retry_after_s=0.75)) as srv:
        got = [post(srv, body(f"q{i}")) for i in range(5)]
        stats = srv.stats()
    assert [status for status, _, _ in got] == [500, 429, 200, 404, 200]
    assert json.loads(got[0][2])["error"]["type"] == "server_error"
    assert got[1][1]["retry-after"] == "0.75" and got[1][1]["retry-after-ms"] == "750"
    assert json.loads(got[1][2])["error"]["code"] == "rate_limit_exceeded"
    assert json.loads(got[3][2])["error"]["type"] == "invalid_request_error"
    assert json.loads(got[4][2])["choices"][0]["message"]["content"] == expected_answer()
    counts = ("requests", "injected", "ok", "rate_limit", "server_error")
    assert [stats[k] for k in counts] == [5, 3, 2, 0, 0]


def test_status_for_fails_chosen_requests_and_is_read_per_request():
    seen: list[str] = []

    def status_for(b: dict) -> int | None:
        seen.append(b["model"])
        return 503 if b["model"] == "bad" else None

    with TestServer(status_for=status_for, statuses=[400]) as srv:
        scripted = post(srv, body(model="bad"))[0]  # the script comes first: status_for is not asked
        bad, good = post(srv, body(model="bad")), post(srv, body(model="good"))
        srv.status_for = None
        healed = post(srv, body(model="bad"))[0]
        stats = srv.stats()
    assert scripted == 400 and seen == ["bad", "good"]
    assert bad[0] == 503 and json.loads(bad[2])["error"]["type"] == "server_error"
    assert good[0] == 200 and healed == 200
    assert (stats["injected"], stats["ok"]) == (2, 2)
    assert srv.models() == ["bad", "good"]  # failed attempts name their model too


def test_injected_statuses_do_not_shift_the_fault_draws():
    rates = FaultRates(server_error=0.5)
    with TestServer(faults=rates, seed=4) as plain:
        clean = [post(plain, body())[0] for _ in range(8)]
    with TestServer(faults=rates, seed=4, statuses=[429, 429]) as scripted:
        shifted = [post(scripted, body())[0] for _ in range(10)]
    assert set(clean) == {200, 500}  # the seed draws both
    assert shifted == [429, 429] + clean


def test_stop_after_closes_the_port_after_that_many_answers():
    with TestServer(stop_after=2, statuses=[500]) as srv:
        first = [post(srv, body(f"q{i}"))[0] for i in range(3)]  # the 500 is not an answer
        deadline = time.time() + 2
        while srv._httpd is not None and time.time() < deadline:
            time.sleep(0.02)
        assert srv.stopped and srv._httpd is None
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.1", srv.port), timeout=1).close()
    assert first == [500, 200, 200] and srv.stats()["ok"] == 2


def test_stop_after_drops_the_requests_in_flight_and_sends_no_more_answers():
    results: list[object] = []

    def call(i: int) -> None:
        try:
            results.append(post(srv, body(f"q{i}"), timeout=10)[0])
        except OSError as exc:  # the connection ended without an answer
            results.append(type(exc).__name__)

    with TestServer(latency_s=0.3, stop_after=3) as srv:
        threads = [threading.Thread(target=call, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=10)
        stats = srv.stats()
    assert not any(t.is_alive() for t in threads) and len(results) == 8
    assert results.count(200) == stats["ok"] == 3
    assert all(isinstance(r, str) for r in results if r != 200)  # the others: no answer at all


def test_arrivals_and_max_in_flight():
    with TestServer(faults=FaultRates(hang=1.0)) as srv:
        def hung(i: int) -> None:
            try:
                post(srv, body(f"h{i}"), timeout=30)
            except OSError:  # the stop at the end closes the connection
                pass

        threads = [threading.Thread(target=hung, args=(i,)) for i in range(4)]
        t0 = time.monotonic()
        for t in threads:
            t.start()
        deadline = time.time() + 5
        while srv.stats()["hang"] < 4 and time.time() < deadline:
            time.sleep(0.01)
        assert srv.max_in_flight() == 4  # all four held at once
        arrivals = srv.arrivals()
    for t in threads:
        t.join(timeout=5)
    assert len(arrivals) == 4 and arrivals == sorted(arrivals) and t0 <= arrivals[0] <= arrivals[-1] <= time.monotonic()
    with TestServer() as srv:
        for i in range(3):
            post(srv, body(f"q{i}"))
        assert srv.max_in_flight() == 1 and len(srv.arrivals()) == srv.stats()["requests"] == 3


# ---------------------------------------------------------------------------- auth, models, paths


def test_api_key_is_required_when_set():
    with TestServer(api_key="secret-1") as srv:
        missing = post(srv, body())
        wrong = post(srv, body(), key="secret-2")
        right = post(srv, body(), key="secret-1")
        models_missing = get(srv)
        stats = srv.stats()
    for status, _, raw in (missing, wrong):
        assert status == 401 and json.loads(raw)["error"]["code"] == "invalid_api_key"
    assert right[0] == 200 and models_missing[0] == 401
    assert stats["unauthorized"] == 3 and stats["ok"] == 1 and stats["requests"] == 3


def test_models_lists_the_models_seen():
    with TestServer(api_key="k") as srv:
        status, raw = get(srv, key="k")
        assert status == 200 and [m["id"] for m in json.loads(raw)["data"]] == ["test-model"]
        post(srv, body(model="org/model-a"), key="k")
        post(srv, body(model="model-b"), key="k")
        post(srv, body(model="org/model-a"), key="k")
        status, raw = get(srv, key="k")
        assert srv.stats()["models"] == 2
    listing = json.loads(raw)
    assert listing["object"] == "list" and [m["id"] for m in listing["data"]] == ["org/model-a", "model-b"]


def test_any_path_prefix_is_served_and_unknown_paths_are_404():
    with TestServer() as srv:
        assert post(srv, body(), path="/prefix/v1/chat/completions")[0] == 200
        assert get(srv, "/prefix/v1/models")[0] == 200
        status, raw = get(srv, "/v1/nothing")
        bad_json = post(srv, b"{not json")
        no_messages = post(srv, {"model": "m", "messages": []})
        stats = srv.stats()
    assert status == 404 and json.loads(raw)["error"]["code"] == "not_found"
    assert bad_json[0] == 400 and no_messages[0] == 400 and stats["bad_request"] == 2


# ---------------------------------------------------------------------------- concurrency


def test_64_concurrent_keep_alive_connections():
    openai = pytest.importorskip("openai")
    import asyncio

    async def run(base_url: str) -> tuple[list[str], list[float]]:
        client = openai.AsyncOpenAI(base_url=base_url, api_key="k", max_retries=0, timeout=10)
        answers, walls = [], []
        try:
            for round_ in range(2):  # the second round reuses the first round's connections
                t0 = time.perf_counter()
                resps = await asyncio.gather(*(
                    client.chat.completions.create(model="m", messages=[{"role": "user", "content": f"{round_}-{i}"}])
                    for i in range(64)))
                walls.append(time.perf_counter() - t0)
                answers += [r.choices[0].message.content for r in resps]
            return answers, walls
        finally:
            await client.close()

    with TestServer(latency_s=2.0, api_key="k") as srv:
        answers, walls = asyncio.run(run(srv.base_url))
        stats = srv.stats()
    assert answers == ["{}"] * 128 and stats["ok"] == 128
    # 64 at once: one latency per round (fewer in parallel would need two); a long latency leaves room
    # for opening 64 connections on a loaded machine
    assert max(walls) < 3.8, walls
    assert stats["connections"] == 64  # kept alive between rounds


# ---------------------------------------------------------------------------- command line


def test_help_explains_every_option():
    text = build_parser().format_help()
    for option in ("--port", "--latency", "--tokens-per-s", "--api-key", "--seed", "--retry-after", "--statuses",
                   "--stop-after"):
        assert option in text
    for kind in FAULT_KINDS:
        assert "--" + kind.replace("_", "-") in text
    assert "not a model" in text


def test_command_line_serves_until_interrupted():
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen(
        [sys.executable, "-m", "anachron.llm.testserver", "--port", "0", "--truncated", "1", "--api-key", "k2"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        # as a shell's background job: SIGINT ignored on entry; the server must still stop on it
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )
    try:
        base_url = proc.stdout.readline().strip()
        port = int(base_url.rsplit(":", 1)[1].split("/")[0])
        assert base_url == f"http://127.0.0.1:{port}/v1"
        srv = TestServer(port=port)  # only for post()'s port
        status, _, raw = post(srv, body(), key="k2")
        assert status == 200 and json.loads(raw)["choices"][0]["finish_reason"] == "length"
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=10)
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    stats = json.loads(out.strip().splitlines()[-1])
    assert stats["requests"] == 1 and stats["truncated"] == 1


def test_command_line_rejects_rates_over_one():
    proc = subprocess.run([sys.executable, "-m", "anachron.llm.testserver", "--hang", "0.6", "--reset", "0.6"],
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(REPO / "src")})
    assert proc.returncode == 2 and "sum to 1.2" in proc.stderr


def test_command_line_statuses_and_stop_after():
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen(
        [sys.executable, "-m", "anachron.llm.testserver", "--port", "0", "--statuses", "503,200", "--stop-after", "2"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )
    try:
        base_url = proc.stdout.readline().strip()
        srv = TestServer(port=int(base_url.rsplit(":", 1)[1].split("/")[0]))  # only for post()'s port
        got = [post(srv, body(f"q{i}"))[0] for i in range(3)]
        out, err = proc.communicate(timeout=10)  # it exits by itself after its second answer
    finally:
        proc.kill()
    assert got == [503, 200, 200] and proc.returncode == 0, err
    stats = json.loads(out.strip().splitlines()[-1])
    assert (stats["requests"], stats["injected"], stats["ok"]) == (3, 1, 2)
    bad = subprocess.run([sys.executable, "-m", "anachron.llm.testserver", "--statuses", "500,302"],
                         capture_output=True, text=True, timeout=60, env=env)
    assert bad.returncode == 2 and "400-599" in bad.stderr


def test_answer_for_replays_a_scripted_answer_and_leaves_the_others_default():
    scripted = json.dumps({"answer": "written in advance"})

    def answer_for(request_body):
        return scripted if "scripted" in request_body["messages"][-1]["content"] else None

    with TestServer(answer_for=answer_for) as srv:
        status, _, raw = post(srv, body("a scripted question"))
        assert status == 200 and json.loads(raw)["choices"][0]["message"]["content"] == scripted
        status, _, raw = post(srv, body("any other question"))
        default = json.loads(raw)["choices"][0]["message"]["content"]
        assert status == 200 and default != scripted and json.loads(default)  # the schema-valid default
