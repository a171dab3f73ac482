"""A loopback OpenAI-compatible chat server with injected faults: a test and benchmark instrument.

This is **not a model**. It stands in for a rate-limited, sometimes failing endpoint (vLLM, a
hosted API) so that the retry, caching and failure handling of the OpenAI-compatible provider
and of the whole workflow can be exercised, and their throughput measured, without a network
or a GPU.

Endpoints (under any path prefix; the usual base URL is ``http://127.0.0.1:<port>/v1``):

* ``POST .../chat/completions`` (non-streaming): the answer is the mock provider's minimal
  instance of the request's JSON schema (:func:`anachron.llm.providers.mock.default_answer`;
  ``"{}"`` without a ``response_format`` schema). It depends on the request alone (in fact on its
  schema), never on ``max_tokens``, the attempt or the call order, so a run against a faulty
  server ends with the same answers as a run against a clean one. Token counts in ``usage`` are
  whitespace-separated words.
* ``GET .../models``: the model ids seen in chat requests so far (``test-model`` before any),
  which is what an endpoint probe calls.

With ``api_key`` set, a request without ``Authorization: Bearer <api_key>`` gets a 401.
Errors have the OpenAI body ``{"error": {"message", "type", "param", "code"}}``.

Knobs (arguments of :class:`TestServer`; its command-line option in brackets). The defaults serve
every request its answer at once, with no fault:

* ``latency_s`` (``--latency``): seconds every attempt waits before its response;
* ``tokens_per_s`` (``--tokens-per-s``): completion tokens (words) per second added to an answer's wait;
* ``faults`` (``--rate-limit``, ``--server-error``, ``--hang``, ``--malformed``, ``--truncated``,
  ``--reset``, ``--retry-after``): probabilities of each fault kind per attempt (below) and the
  seconds a 429's ``Retry-After`` asks for;
* ``seed`` (``--seed``): seed of the fault draws;
* ``api_key`` (``--api-key``): the bearer token every request must carry (401 otherwise);
* ``statuses`` (``--statuses``): HTTP status codes of the first chat attempts, in arrival order,
  one per attempt: 400-599 fails that attempt with the status, 200 serves it as usual; e.g.
  ``[500]`` fails the first attempt only;
* ``status_for`` (Python only): ``body -> status or None``, called with the JSON body of every chat
  attempt the script of ``statuses`` no longer covers; a status 400-599 fails that attempt with it
  (e.g. fail one model's calls, or every call with a 400), ``None`` or 200 serves it as usual;
* ``stop_after`` (``--stop-after``): a number of whole answers after which the server stops (closes
  its port and drops the requests in flight, without a response), like an endpoint that dies
  mid-run; the command line then exits;
* ``answer_for`` (Python only): ``body -> text or None``: a scripted answer for a request (a replay
  of answers written in advance), ``None`` the default answer;
* ``host``, ``port`` (``--host``, ``--port``): where to listen (port 0: a free one).

Order of a chat attempt: a 401 without the key, a 400 for a body that is not a chat request, then
an injected status (``statuses``, then ``status_for``), then a fault draw, else the answer. An
injected status waits ``latency_s``; a 429 carries the ``Retry-After`` headers of a rate-limit
fault, a 5xx the body of a server error. An attempt failed by an injected status draws no fault,
so the faults a request meets do not depend on the injected statuses.

Records, for tests: :meth:`TestServer.stats` (counts by outcome), :meth:`TestServer.arrivals`
(the arrival time of every chat attempt) and :meth:`TestServer.max_in_flight` (the most chat
attempts handled at once).

Faults (:class:`FaultRates`) are drawn once per chat attempt. The draw depends on the seed, the
request body and how many times that same body was received before, not on the order of
distinct requests, so a fault-injected run is reproducible at any concurrency. Kinds:

* ``rate_limit``: 429 with ``Retry-After`` (seconds) and ``retry-after-ms`` headers;
* ``server_error``: 500;
* ``hang``: the request is read and never answered, until the client closes the connection
  or the server stops;
* ``malformed``: 200 whose JSON body is cut off half-way (``Content-Length`` is the cut length);
* ``truncated``: 200 with valid JSON whose ``message.content`` is cut half-way and whose
  ``finish_reason`` is ``"length"`` (as a model stopped by its token limit);
* ``reset``: the connection is closed abortively (TCP RST, ``SO_LINGER`` 0) with no response.

Timing of an attempt: answers (whole, truncated or malformed) take ``latency_s`` plus
``completion_tokens / tokens_per_s`` seconds; 429, 500, injected statuses and resets take ``latency_s``.

Command line (serves until Ctrl-C, SIGTERM or ``--stop-after``; prints the base URL on start and
the counts of :meth:`TestServer.stats` as JSON on exit)::

    python -m anachron.llm.testserver --port 8000 --latency 0.5 --tokens-per-s 200 \\
        --rate-limit 0.1 --server-error 0.1 --hang 0.05 --malformed 0.05 --truncated 0.05 \\
        --reset 0.05 --api-key "$ANACHRON_API_KEY" --seed 0

    python -m anachron.llm.testserver --port 8000 --statuses 500,429,200,503 --stop-after 100
"""

from __future__ import annotations

import argparse
import hmac
import json
import logging
import random
import select
import signal
import socket
import struct
import sys
import threading
import time
from collections import Counter, deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Sequence

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from anachron.io import stable_hash
from anachron.llm.providers.mock import default_answer
from anachron.llm.types import ChatRequest

log = logging.getLogger(__name__)

#: The fault kinds of :class:`FaultRates`, in the order their probabilities are stacked for a draw.
FAULT_KINDS = ("rate_limit", "server_error", "hang", "malformed", "truncated", "reset")
#: Counts of :meth:`TestServer.stats` besides ``requests``, ``ok`` and the fault kinds.
_OTHER_COUNTS = ("unauthorized", "bad_request", "injected", "models", "connections")
#: The model id ``GET /models`` lists before any chat request named one.
DEFAULT_MODEL = "test-model"
#: How often (seconds) a hung request checks whether its client gave up.
_POLL_S = 0.05


class FaultRates(BaseModel):
    """Probabilities of each injected fault, per chat attempt (see the module docstring).

    Fields:
        rate_limit: 429 with a ``Retry-After`` header of ``retry_after_s``.
        server_error: 500.
        hang: no answer until the client gives up or the server stops.
        malformed: 200 whose JSON body is cut off mid-way.
        truncated: 200 whose ``message.content`` is cut mid-way, ``finish_reason`` ``"length"``.
        reset: the connection is reset without a response.
        retry_after_s: the wait a 429 asks for, in seconds.

    Raises:
        ValueError (a ``pydantic.ValidationError``): a rate outside [0, 1], rates summing to more
            than 1, a negative ``retry_after_s`` or an unknown field.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    rate_limit: float = Field(default=0.0, ge=0, le=1)
    server_error: float = Field(default=0.0, ge=0, le=1)
    hang: float = Field(default=0.0, ge=0, le=1)
    malformed: float = Field(default=0.0, ge=0, le=1)
    truncated: float = Field(default=0.0, ge=0, le=1)
    reset: float = Field(default=0.0, ge=0, le=1)
    retry_after_s: float = Field(default=0.2, ge=0)

    @model_validator(mode="after")
    def _check_total(self) -> "FaultRates":
        total = sum(getattr(self, k) for k in FAULT_KINDS)
        if total > 1 + 1e-9:
            raise ValueError(f"fault rates sum to {total:g}, more than 1")
        return self

    def draw(self, rng: random.Random) -> str | None:
        """One attempt's fault kind (one of :data:`FAULT_KINDS`), or ``None`` for a clean answer."""
        u = rng.random()
        for kind in FAULT_KINDS:
            u -= getattr(self, kind)
            if u < 0:
                return kind
        return None


def _words(text: str) -> int:
    return len(text.split())


def _error_body(message: str, type_: str, code: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": type_, "param": None, "code": code}}


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 512  # the listen backlog: bursts of new keep-alive connections

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that vanished is routine here (timeouts, kills); anything else is logged."""
        if isinstance(sys.exc_info()[1], ConnectionError):
            log.debug("client %s went away", client_address)
        else:
            log.exception("test server: error handling a request from %s", client_address)


#: HTTP statuses an injected status may be: 200 (served as usual) or an error status.
_INJECTABLE = range(400, 600)
#: Type of :class:`TestServer`'s ``status_for``: a chat body to an HTTP status, or ``None`` (no injected status).
StatusFor = Callable[[dict[str, Any]], int | None]


def _check_status(status: int) -> int:
    if isinstance(status, bool) or not isinstance(status, int) or (status != 200 and status not in _INJECTABLE):
        raise ValueError(f"an injected status must be 200 or an HTTP error status 400-599, got {status!r}")
    return status


class TestServer:
    """The loopback OpenAI-compatible server (module docstring), run in a background thread.

    Args:
        latency_s: seconds every attempt waits before its response (not a hang's).
        tokens_per_s: completion tokens (words) per second added to an answer's wait; ``None``: no
            token time.
        faults: the fault probabilities per attempt.
        seed: seed of the fault draws.
        api_key: the bearer token every request must carry; ``None`` accepts any request.
        statuses: HTTP statuses of the first chat attempts in arrival order, one per attempt, each
            200 (served as usual) or 400-599 (that attempt fails with it); then ``status_for``.
        status_for: called with the JSON body of every chat attempt ``statuses`` no longer covers;
            a status other than 200 (400-599) fails that attempt with it, ``None`` or 200 serves it
            as usual. Called concurrently from the handler threads; an exception it raises, or a
            status outside 200 and 400-599, drops the connection without a response (and is logged).
        stop_after: stop serving (close the port, drop the requests in flight) once this many whole
            answers (``stats()["ok"]``) have been sent since :meth:`start`; ``None``: never. At most
            this many whole answers go out.
        answer_for: called with the JSON body of every served chat attempt; a string is the answer's
            text (a replayed, scripted answer: benchmarks/bench_validation.py), ``None`` keeps the
            default answer. Faults and ``statuses`` apply to it as to the default one.
        host, port: where to listen; port 0 picks a free port.

    Use as ``with TestServer(...) as srv: ... srv.base_url ...``, or :meth:`start` / :meth:`stop`.
    Serves many concurrent keep-alive connections (one daemon thread each). ``latency_s``,
    ``tokens_per_s``, ``faults``, ``api_key`` and ``status_for`` are read per request, so a test may
    change them while serving (e.g. slow calls, then fast ones).

    Raises:
        ValueError: a negative ``latency_s``, a ``tokens_per_s`` that is not positive, a status in
            ``statuses`` that is neither 200 nor 400-599, or a ``stop_after`` below 1.
    """

    __test__ = False  # not a pytest test class

    def __init__(
        self,
        *,
        latency_s: float = 0.0,
        tokens_per_s: float | None = None,
        faults: FaultRates = FaultRates(),
        seed: int = 0,
        api_key: str | None = None,
        statuses: Sequence[int] = (),
        status_for: StatusFor | None = None,
        stop_after: int | None = None,
        answer_for: Callable[[dict[str, Any]], str | None] | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        if latency_s < 0:
            raise ValueError(f"latency_s must be >= 0, got {latency_s}")
        if tokens_per_s is not None and tokens_per_s <= 0:
            raise ValueError(f"tokens_per_s must be > 0 or None, got {tokens_per_s}")
        if stop_after is not None and stop_after < 1:
            raise ValueError(f"stop_after must be >= 1 or None, got {stop_after}")
        self.latency_s = latency_s
        self.tokens_per_s = tokens_per_s
        self.faults = faults
        self.seed = seed
        self.api_key = api_key
        self.status_for = status_for
        self.stop_after = stop_after
        self.answer_for = answer_for
        self.host = host
        self.port = port
        self.base_url = ""
        self._script: deque[int] = deque(_check_status(s) for s in statuses)
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._stop_lock = threading.Lock()  # one stop() at a time (a test's and stop_after's)
        self._stats: Counter[str] = Counter({k: 0 for k in ("requests", "ok", *FAULT_KINDS, *_OTHER_COUNTS)})
        self._seen: Counter[str] = Counter()  # attempts per request body
        self._models: dict[str, None] = {}
        self._connections: set[socket.socket] = set()
        self._arrivals: list[float] = []
        self._in_flight = 0
        self._max_in_flight = 0
        self._granted = 0  # whole answers allowed out since start (stop_after)
        self._sending = 0  # of those, being written now
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> "TestServer":
        """Bind and serve in a daemon thread; sets :attr:`base_url`. Returns ``self``.

        Raises:
            RuntimeError: when already started. OSError: when the port cannot be bound.
        """
        if self._httpd is not None:
            raise RuntimeError("the test server is already running")
        self._stop.clear()
        with self._lock:
            self._granted = self._sending = 0
        httpd = _HTTPServer((self.host, self.port), _handler_for(self))
        self._httpd = httpd
        self.port = httpd.server_address[1]
        self.base_url = f"http://{self.host}:{self.port}/v1"
        self._thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        name=f"testserver:{self.port}", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving: hung and waiting requests are released, open connections closed.

        Returns within about 0.1 s whatever the requests in flight; a no-op when not running.
        Thread-safe: a second caller waits for the first one's stop to end. :attr:`base_url`,
        :attr:`port` and the records (:meth:`stats`, ...) stay readable after a stop.
        """
        with self._stop_lock:
            httpd = self._httpd
            if httpd is None:
                return
            self._stop.set()
            httpd.shutdown()
            with self._lock:
                conns = list(self._connections)
            for conn in conns:  # wakes handlers blocked reading an idle keep-alive connection
                try:
                    conn.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
            httpd.server_close()
            if self._thread is not None:
                self._thread.join(timeout=1.0)
            self._httpd = self._thread = None

    @property
    def stopped(self) -> bool:
        """True once the server stops or has begun to (:meth:`stop`, or ``stop_after`` reached)."""
        return self._stop.is_set()

    def __enter__(self) -> "TestServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ------------------------------------------------------------------ records

    def stats(self) -> dict[str, int]:
        """Counts so far: ``requests`` (chat-completion requests received, every attempt), ``ok``
        (whole answers sent), one per fault kind (:data:`FAULT_KINDS`), ``unauthorized`` (401s of chat
        and model requests), ``bad_request`` (400s of invalid bodies), ``injected`` (attempts failed by
        an injected status: ``statuses`` or ``status_for``), ``models`` (``GET /models`` answered) and
        ``connections`` (TCP connections accepted: far fewer than requests when clients keep them alive).
        Thread-safe."""
        with self._lock:
            return dict(self._stats)

    def arrivals(self) -> list[float]:
        """The arrival time of every chat-completion attempt so far (``time.monotonic()`` seconds, taken
        once its body is read), in arrival order: one per ``stats()["requests"]``. Thread-safe."""
        with self._lock:
            return list(self._arrivals)

    def max_in_flight(self) -> int:
        """The most chat-completion attempts handled at once so far, each from its arrival (as in
        :meth:`arrivals`) until its response starts to be written or it is dropped: a client that
        waits for each answer before the next request never has two in flight. Thread-safe."""
        with self._lock:
            return self._max_in_flight

    def models(self) -> list[str]:
        """Model ids seen in chat requests, in first-seen order (``[DEFAULT_MODEL]`` before any)."""
        with self._lock:
            return list(self._models) or [DEFAULT_MODEL]

    # ------------------------------------------------------------------ helpers for the handler

    def _count(self, key: str) -> None:
        with self._lock:
            self._stats[key] += 1

    def _register(self, conn: socket.socket, add: bool) -> None:
        with self._lock:
            (self._connections.add if add else self._connections.discard)(conn)

    def _arrive(self) -> None:
        """A chat attempt arrived: count it, note the time, one more in flight."""
        with self._lock:
            self._stats["requests"] += 1
            self._arrivals.append(time.monotonic())
            self._in_flight += 1
            self._max_in_flight = max(self._max_in_flight, self._in_flight)

    def _leave(self) -> None:
        with self._lock:
            self._in_flight -= 1

    def _note_model(self, body: dict[str, Any]) -> None:
        model = body.get("model")
        if isinstance(model, str) and model:
            with self._lock:
                self._models.setdefault(model, None)

    def _injected(self, body: dict[str, Any]) -> int | None:
        """The attempt's injected error status (``statuses``, then ``status_for``), or ``None``."""
        with self._lock:
            status = self._script.popleft() if self._script else None
            scripted = status is not None
        if not scripted and self.status_for is not None:
            status = self.status_for(body)
            if status is not None:
                _check_status(status)
        return None if status is None or status == 200 else status

    def _draw(self, body: dict[str, Any]) -> str | None:
        """The attempt's fault (seed, body, how often that body drew before)."""
        digest = stable_hash(body)
        with self._lock:
            n = self._seen[digest]
            self._seen[digest] += 1
        return self.faults.draw(random.Random(f"{self.seed}:{digest}:{n}"))

    def _grant_answer(self) -> bool:
        """May a whole answer go out (``stop_after``)? If so it is counted ``ok`` before it is written
        (a client reading :meth:`stats` after its answer sees it); the last one allowed stops new
        waits at once."""
        with self._lock:
            if self.stop_after is not None:
                if self._granted >= self.stop_after:
                    return False
                self._granted += 1
                self._sending += 1
                if self._granted >= self.stop_after:
                    self._stop.set()  # nothing else is answered; the port closes once the last answer is out
            self._stats["ok"] += 1
            return True

    def _answer_sent(self, sent: bool) -> None:
        """A granted answer was written (``sent``) or its client had gone (no longer ``ok``); stops
        the server once the last answer ``stop_after`` allows is done."""
        with self._lock:
            if not sent:
                self._stats["ok"] -= 1
            if self.stop_after is None:
                return
            self._sending -= 1
            last = self._granted >= self.stop_after and self._sending == 0
        if last:
            threading.Thread(target=self.stop, name=f"testserver-stop:{self.port}", daemon=True).start()

    def _wait(self, seconds: float) -> bool:
        """Sleep up to ``seconds``; True when the server was stopped meanwhile."""
        return self._stop.wait(seconds) if seconds > 0 else self._stop.is_set()


def answer_request(body: dict[str, Any]) -> tuple[str, int]:
    """The answer text to a chat-completions body and its prompt token count (whitespace words).

    The answer is :func:`~anachron.llm.providers.mock.default_answer` of the body's messages and
    ``response_format`` JSON schema (``json_schema.schema``; ``"{}"`` for ``json_object`` or none).

    Raises:
        ValueError: a body without a valid ``messages`` list (``pydantic.ValidationError``).
    """
    fmt = body.get("response_format") or {}
    schema = None
    if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
        schema = (fmt.get("json_schema") or {}).get("schema")
    request = ChatRequest(messages=body.get("messages") or [], response_schema=schema)
    prompt = sum(_words(str(m.get("content", ""))) for m in request.messages)
    return default_answer(request), prompt


def _handler_for(server: TestServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "anachron-testserver"
        # headers and body go out in separate writes: without TCP_NODELAY the body waits for the
        # client's delayed ACK (~40 ms on Linux), which would add to every answer's latency
        disable_nagle_algorithm = True

        def setup(self) -> None:
            super().setup()
            server._register(self.connection, True)
            server._count("connections")

        def finish(self) -> None:
            try:
                super().finish()
            finally:
                server._register(self.connection, False)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's name
            log.debug("%s " + format, self.address_string(), *args)

        # -------------------------------------------------------------- responses

        def _send(self, status: int, payload: bytes, headers: dict[str, str] | None = None) -> bool:
            """Send one response; False (and the connection dropped) when the client has gone."""
            self._leave()  # before the write: a client that got its answer may send the next at once
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(payload)
                self.wfile.flush()
            except ConnectionError:  # the client gave up (timeout) or was killed meanwhile
                self.close_connection = True
                return False
            return True

        def _json(self, status: int, obj: Any, headers: dict[str, str] | None = None) -> None:
            self._send(status, json.dumps(obj).encode(), headers)

        def _authorized(self) -> bool:
            if server.api_key is None:
                return True
            got = self.headers.get("Authorization", "")
            if hmac.compare_digest(got.encode(), f"Bearer {server.api_key}".encode()):
                return True
            server._count("unauthorized")
            self._json(401, _error_body("Incorrect or missing API key (test server).", "invalid_request_error",
                                        "invalid_api_key"))
            return False

        def _route(self) -> str:
            path = self.path.split("?", 1)[0].rstrip("/")
            if path.endswith("/chat/completions"):
                return "chat"
            if path.endswith("/models"):
                return "models"
            return ""

        def _not_found(self) -> None:
            self._json(404, _error_body(f"Unknown path {self.path.split('?', 1)[0]!r} (test server).",
                                        "invalid_request_error", "not_found"))

        # -------------------------------------------------------------- methods

        def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
            if self._route() != "models":
                return self._not_found()
            if not self._authorized():
                return
            server._count("models")
            data = [{"id": m, "object": "model", "created": 0, "owned_by": "anachron-testserver"} for m in server.models()]
            self._json(200, {"object": "list", "data": data})

        def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length > 0 else b""
            if self._route() != "chat":
                return self._not_found()
            server._arrive()
            self._in_flight = True
            try:
                self._chat(raw)
            finally:
                self._leave()

        def _leave(self) -> None:
            """This chat attempt is no longer in flight (once: before its response goes out, or at its end)."""
            if getattr(self, "_in_flight", False):
                self._in_flight = False
                server._leave()

        def _chat(self, raw: bytes) -> None:
            """Answer one chat-completion attempt (the order in the module docstring)."""
            if not self._authorized():
                return
            try:
                body = json.loads(raw)
                if not isinstance(body, dict):
                    raise ValueError("the body is not a JSON object")
                text, prompt_tokens = answer_request(body)
                scripted = server.answer_for(body) if server.answer_for is not None else None
                if scripted is not None:
                    text = scripted
            except (ValueError, ValidationError) as exc:
                server._count("bad_request")
                msg = " ".join(str(exc).split())[:300]
                return self._json(400, _error_body(f"Invalid request: {msg}", "invalid_request_error"))
            server._note_model(body)
            injected = server._injected(body)
            if injected is not None:
                server._count("injected")
                if server._wait(server.latency_s):
                    return self._drop()
                return self._error(injected)
            fault = server._draw(body)
            if fault is not None:
                server._count(fault)
            if fault == "hang":
                return self._hang()
            if fault is None or fault in ("malformed", "truncated"):
                finish = "stop"
                if fault == "truncated":
                    text, finish = text[: max(1, len(text) // 2)], "length"
                tokens = _words(text)
                wait = server.latency_s + (tokens / server.tokens_per_s if server.tokens_per_s else 0.0)
                if server._wait(wait):
                    return self._drop()
                payload = json.dumps(self._completion(body, text, finish, prompt_tokens, tokens)).encode()
                if fault == "malformed":
                    payload = payload[: len(payload) // 2]
                if fault is not None:
                    self._send(200, payload)
                    return
                if not server._grant_answer():  # stop_after reached: the server is going away
                    return self._drop()
                sent = False
                try:
                    sent = self._send(200, payload)
                finally:
                    server._answer_sent(sent)
                return
            if server._wait(server.latency_s):
                return self._drop()
            if fault == "reset":
                return self._reset()
            self._error(429 if fault == "rate_limit" else 500)

        def _error(self, status: int) -> None:
            """An error response: a 429 with the rate-limit fault's ``Retry-After`` headers, a 500 (or
            other 5xx) with a server error's body, another status with an invalid-request body."""
            if status == 429:
                s = server.faults.retry_after_s
                headers = {"Retry-After": f"{s:g}", "retry-after-ms": str(int(round(s * 1000)))}
                return self._json(429, _error_body("Rate limit reached (test server).", "requests",
                                                   "rate_limit_exceeded"), headers)
            if status == 500:
                return self._json(500, _error_body("Internal server error (test server).", "server_error"))
            type_ = "server_error" if status >= 500 else "invalid_request_error"
            self._json(status, _error_body(f"Injected HTTP {status} (test server).", type_))

        def _completion(self, body: dict[str, Any], text: str, finish: str, prompt: int, tokens: int) -> dict[str, Any]:
            return {
                "id": "chatcmpl-" + stable_hash(body),
                "object": "chat.completion",
                "created": int(time.time()),
                "model": str(body.get("model", DEFAULT_MODEL)),
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                             "finish_reason": finish, "logprobs": None}],
                "usage": {"prompt_tokens": prompt, "completion_tokens": tokens, "total_tokens": prompt + tokens},
            }

        def _hang(self) -> None:
            """Wait, answering nothing, until the client closes its end or the server stops."""
            sock = self.connection
            while not server._wait(_POLL_S):
                try:
                    readable, _, _ = select.select([sock], [], [], 0)
                    if readable and not sock.recv(1, socket.MSG_PEEK):
                        break  # EOF: the client gave up
                except OSError:
                    break
            self._drop()

        def _drop(self) -> None:
            """End this connection without a response (a stop, or a client that left)."""
            self.close_connection = True

        def _reset(self) -> None:
            """Close the connection abortively: with SO_LINGER 0 the close sends a TCP RST."""
            self.close_connection = True
            try:
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                self.connection.close()  # the descriptor goes when rfile/wfile close in finish()
            except OSError:
                pass

    return Handler


# ---------------------------------------------------------------------- command line


def _status_list(text: str) -> list[int]:
    """``--statuses``: comma-separated HTTP statuses, e.g. ``500,429,200``."""
    try:
        return [_check_status(int(part)) for part in text.split(",") if part.strip()]
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def build_parser() -> argparse.ArgumentParser:
    """The command line of ``python -m anachron.llm.testserver``."""
    p = argparse.ArgumentParser(
        prog="python -m anachron.llm.testserver",
        description="Serve a loopback OpenAI-compatible chat endpoint with injected faults (a test and "
        "benchmark instrument, not a model: every answer is a minimal JSON instance of the request's schema). "
        "Fault rates are probabilities per attempt and must sum to at most 1.",
    )
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default %(default)s)")
    p.add_argument("--port", type=int, default=8000, help="port to listen on; 0 picks a free one (default %(default)s)")
    p.add_argument("--latency", type=float, default=0.0, metavar="S",
                   help="seconds every attempt waits before its response (default %(default)s)")
    p.add_argument("--tokens-per-s", type=float, default=None, metavar="R",
                   help="completion tokens (words) per second added to an answer's wait (default: none)")
    p.add_argument("--rate-limit", type=float, default=0.0, metavar="P",
                   help="probability of a 429 with a Retry-After header (default %(default)s)")
    p.add_argument("--retry-after", type=float, default=0.2, metavar="S",
                   help="seconds a 429's Retry-After asks for (default %(default)s)")
    p.add_argument("--server-error", type=float, default=0.0, metavar="P", help="probability of a 500 (default %(default)s)")
    p.add_argument("--hang", type=float, default=0.0, metavar="P",
                   help="probability that a request is never answered, until the client gives up (default %(default)s)")
    p.add_argument("--malformed", type=float, default=0.0, metavar="P",
                   help="probability of a 200 whose JSON body is cut off half-way (default %(default)s)")
    p.add_argument("--truncated", type=float, default=0.0, metavar="P",
                   help="probability of a 200 whose message content is cut half-way, finish_reason "
                   "'length' (default %(default)s)")
    p.add_argument("--reset", type=float, default=0.0, metavar="P",
                   help="probability that the connection is reset without a response (default %(default)s)")
    p.add_argument("--api-key", default=None,
                   help="require 'Authorization: Bearer KEY' (401 otherwise); default: accept any request")
    p.add_argument("--seed", type=int, default=0, help="seed of the fault draws (default %(default)s)")
    p.add_argument("--statuses", type=_status_list, default=[], metavar="S,S,...",
                   help="HTTP statuses of the first chat attempts in arrival order, one each: 200 serves that "
                   "attempt as usual, 400-599 fails it with that status (a 429 with Retry-After), e.g. 500,500 "
                   "fails the first two attempts (default: none)")
    p.add_argument("--stop-after", type=int, default=None, metavar="N",
                   help="stop (close the port, drop the requests in flight) after N whole answers, like an "
                   "endpoint that dies mid-run, and exit (default: never)")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run the server from the command line until Ctrl-C, SIGTERM or ``--stop-after``; print its stats
    as JSON on exit. Returns the exit status (2: invalid options)."""
    args = build_parser().parse_args(argv)
    try:
        faults = FaultRates(rate_limit=args.rate_limit, server_error=args.server_error, hang=args.hang,
                            malformed=args.malformed, truncated=args.truncated, reset=args.reset,
                            retry_after_s=args.retry_after)
        server = TestServer(latency_s=args.latency, tokens_per_s=args.tokens_per_s, faults=faults, seed=args.seed,
                            api_key=args.api_key, statuses=args.statuses, stop_after=args.stop_after,
                            host=args.host, port=args.port)
    except ValueError as exc:
        print(f"error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2
    done = threading.Event()
    # Ctrl-C and SIGTERM end the loop below; SIGINT explicitly, since a server started in the
    # background by a non-interactive shell inherits SIGINT ignored and would not stop otherwise
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    signal.signal(signal.SIGINT, lambda *_: done.set())
    server.start()
    print(server.base_url, flush=True)
    try:
        while not done.wait(0.2) and not server.stopped:
            pass
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
        print(json.dumps(server.stats()), flush=True)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
