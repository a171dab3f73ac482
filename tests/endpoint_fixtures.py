"""Fixtures of the endpoint tests (probe, limits, failures): hand-written forecast instances and a
loopback OpenAI-compatible endpoint.

The endpoint is local to these tests until the project's fault-injecting test server is merged. It answers
``POST /v1/chat/completions`` with the mock provider's schema-valid default answer after
``latency_s``, ``GET /v1/models`` with ``models_status``, can fail chosen requests, and can go away
(close its port) after a number of answers, like a server that dies mid-run.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable

import pandas as pd

from anachron.llm.providers.mock import default_answer
from anachron.llm.types import ChatRequest
from anachron.tables import INSTANCE_COLUMNS


def forecast_instances(n: int, split: str = "eval") -> pd.DataFrame:
    """``n`` made-up forecast instances (the columns of a task dataset), ids ``fc-000``, ``fc-001``, ..."""
    rows = [
        {
            "instance_id": f"fc-{i:03d}", "task": "forecast", "split": split, "cutoff_date": "2023-03-01",
            "inputs": json.dumps({"question": f"Will the made-up index {i} close above 100 on 2023-06-30?",
                                  "resolution_criteria": "Resolves Yes if the index closes above 100.",
                                  "resolution_date": "2023-06-30"}),
            "label": json.dumps({"resolved_to": i % 2, "resolution_date": "2023-06-30"}),
            "provenance": json.dumps({"made_up": True}),
        }
        for i in range(n)
    ]
    return pd.DataFrame(rows, columns=INSTANCE_COLUMNS)


def closed_port_url() -> str:
    """A base URL on 127.0.0.1 whose port nothing listens on (connections are refused)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


class StubEndpoint:
    """The endpoint; use as a context manager or call :meth:`start` / :meth:`stop`.

    Args:
        latency_s: seconds every chat completion takes.
        fail: ``body -> HTTP status or None``: a status makes that request fail (checked per request).
        models_status: status of ``GET /v1/models``.
        stop_after: close the port after this many successful answers (None: never).

    Attributes: ``url`` (base URL, ``.../v1``), ``answered`` (successful answers), ``requests``
    (chat request bodies, failed ones included), ``starts`` (monotonic start time of each chat
    request), ``max_in_flight``, ``auth`` (Authorization headers seen).
    """

    def __init__(
        self,
        *,
        latency_s: float = 0.0,
        fail: Callable[[dict], int | None] | None = None,
        models_status: int = 200,
        stop_after: int | None = None,
    ) -> None:
        self.latency_s = latency_s
        self.fail = fail
        self.models_status = models_status
        self.stop_after = stop_after
        self.answered = 0
        self.requests: list[dict] = []
        self.starts: list[float] = []
        self.auth: list[str | None] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        self._stopped = False
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _send(self, status: int, payload: dict) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                stub.auth.append(self.headers.get("authorization"))
                if self.path.rstrip("/") == "/v1/models":
                    self._send(stub.models_status, {"object": "list", "data": [{"id": "stub", "object": "model"}]})
                else:
                    self._send(404, {"error": {"message": "not found"}})

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
                with stub._lock:
                    stub.requests.append(body)
                    stub.starts.append(time.monotonic())
                    stub.in_flight += 1
                    stub.max_in_flight = max(stub.max_in_flight, stub.in_flight)
                try:
                    time.sleep(stub.latency_s)
                    status = stub.fail(body) if stub.fail is not None else None
                    if status is not None:
                        self._send(status, {"error": {"message": f"injected HTTP {status}"}})
                        return
                    fmt = body.get("response_format") or {}
                    schema = (fmt.get("json_schema") or {}).get("schema")
                    text = default_answer(ChatRequest(messages=body["messages"], response_schema=schema))
                    self._send(200, {
                        "id": "chatcmpl-stub", "object": "chat.completion", "created": 0, "model": body.get("model"),
                        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
                    })
                    with stub._lock:
                        stub.answered += 1
                        done = stub.stop_after is not None and stub.answered >= stub.stop_after
                    if done:
                        threading.Thread(target=stub.stop, daemon=True).start()
                finally:
                    with stub._lock:
                        stub.in_flight -= 1

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self._thread = threading.Thread(target=lambda: self.httpd.serve_forever(poll_interval=0.05), daemon=True)

    def start(self) -> "StubEndpoint":
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop answering and close the port (idempotent)."""
        with self._lock:
            if self._stopped:
                return
            self._stopped = True
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self) -> "StubEndpoint":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
