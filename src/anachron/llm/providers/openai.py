"""The OpenAI-compatible provider (``openai/...``): any ``/v1/chat/completions`` endpoint
(vLLM, SGLang, Ollama, llama.cpp server, hosted APIs) through ``openai.AsyncOpenAI``, with its
own retry loop and structured-output fallback. ``openai`` is imported only when a call runs.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import threading
import time
from typing import Any, Awaitable, Callable

from anachron.llm.endpoints import endpoint_label
from anachron.llm.providers.base import BaseProvider, effective_params, error_text, sample_seed
from anachron.llm.types import ChatRequest, ChatResult, ModelSpec

log = logging.getLogger(__name__)

#: Parameters the OpenAI chat API takes as named arguments; the rest go in ``extra_body``.
_OPENAI_NATIVE = frozenset({"temperature", "top_p", "max_tokens", "seed", "stop", "presence_penalty", "frequency_penalty"})
_OPENAI_RENAME = {"repeat_penalty": "repetition_penalty"}  # vLLM's name for it

#: Substrings of a 400/422 body that mean "this endpoint does not do that response_format".
_FORMAT_ERROR_HINTS = ("response_format", "json_schema", "json schema", "structured", "guided", "grammar", "json_object")


class CircuitBreaker:
    """Stops a job from calling an endpoint that has stopped answering.

    After ``threshold`` consecutive calls whose last attempt failed with no answer (connection
    error, timeout) or a 5xx, the breaker opens and stays open for the life of the provider (one
    ``run_method`` job): later calls and retries in progress end at once with :attr:`message`, so
    an endpoint that dies mid-run costs one call's retries, not every call's. A call that got any
    other answer (success, 4xx, a malformed body) resets the count.

    Args:
        threshold: consecutive failed calls that open the breaker (>= 1).
        endpoint: how messages name the endpoint (``"ENV (scheme://host:port)"``).
    """

    def __init__(self, threshold: int, endpoint: str) -> None:
        self.threshold = max(1, int(threshold))
        self.endpoint = endpoint
        self._consecutive = 0
        self._open = False
        self._lock = threading.Lock()

    @property
    def is_open(self) -> bool:
        """True once the endpoint is considered gone."""
        return self._open

    @property
    def message(self) -> str:
        """The error of the calls refused or cut short by the open breaker."""
        return (
            f"EndpointDown: endpoint {self.endpoint} not answering after {self.threshold} consecutive failed calls "
            "(connection errors, timeouts or 5xx after all retries); the job's later calls were not sent"
        )

    def record(self, outage: bool, error: str | None = None) -> None:
        """Count the outcome of one finished call: ``outage`` True for a final connection error,
        timeout or 5xx; anything else resets the count."""
        with self._lock:
            if not outage:
                self._consecutive = 0
                return
            self._consecutive += 1
            if self._consecutive >= self.threshold and not self._open:
                self._open = True
                log.error("%s (last error: %s)", self.message, error)


class OpenAICompatProvider(BaseProvider):
    """An OpenAI-compatible chat endpoint (provider ``openai``; ``openai.AsyncOpenAI`` with its own retries).

    Base URL and API key come from the environment variables named by
    ``spec.base_url_env`` / ``spec.api_key_env`` (read when the provider is created).

    Retries: 429, 408/409, 5xx, timeouts, connection errors and malformed 200 responses (a body
    that is not JSON, e.g. cut off mid-way, or JSON without ``choices[0].message``) are retried up to
    ``spec.max_retries`` times with exponential backoff (``retry_base_delay_s * 2**n``,
    capped at ``retry_max_delay_s``, with jitter) or the server's ``Retry-After`` when
    longer (at most 600 s). Other 4xx errors are not retried.

    Structured output: with a schema, the first call sends ``response_format={"type":
    "json_schema", ...}``; a 400/422 that names the response format makes this instance
    fall back to ``{"type": "json_object"}`` and then to no ``response_format`` (the
    fallback is remembered for later calls; see :attr:`format_mode`).

    Seeds: when a seed is set, sample ``k`` sends ``seed + k``.

    A dead endpoint: :attr:`breaker` (a :class:`CircuitBreaker` opening after ``max(3,
    spec.concurrency)`` consecutive calls that ended without an answer or with a 5xx) ends every
    later call at once with an ``EndpointDown`` error naming the endpoint.
    """

    prefix = "openai"
    FORMAT_MODES = ("json_schema", "json_object", "none")

    def __init__(
        self,
        spec: ModelSpec,
        *,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        """Create the provider for ``spec`` (provider ``openai``).

        Raises:
            ConfigError: when ``spec`` is not an ``openai/...`` model or the base URL or API key
                environment variable is missing or empty (see :meth:`readiness_problems`).
        """
        super().__init__(spec, sleep=sleep)
        self.check_ready(spec)
        self._base_url = os.environ[spec.base_url_env]  # type: ignore[index]
        self._api_key = os.environ[spec.api_key_env]  # type: ignore[index]
        self._clients: dict[int, tuple[asyncio.AbstractEventLoop, Any]] = {}
        self.format_mode = "json_schema"
        self._format_lock = threading.Lock()
        self.breaker = CircuitBreaker(max(3, spec.concurrency), endpoint_label(spec) or spec.name)

    def __repr__(self) -> str:  # never show the key or URL
        return f"OpenAICompatProvider(name={self.spec.name!r}, model={self.spec.model_id!r})"

    def _client(self) -> Any:
        """One ``AsyncOpenAI`` per running event loop (its connection pool is loop-bound)."""
        import openai

        loop = asyncio.get_running_loop()
        entry = self._clients.get(id(loop))
        if entry is None or entry[0] is not loop:
            # drop clients of loops that are gone
            self._clients = {k: v for k, v in self._clients.items() if not v[0].is_closed()}
            client = openai.AsyncOpenAI(
                base_url=self._base_url,
                api_key=self._api_key,
                max_retries=0,
                timeout=self.spec.timeout_s,
            )
            self._clients[id(loop)] = (loop, client)
            return client
        return entry[1]

    async def aclose(self) -> None:
        """Close the HTTP client of the running event loop (a later call opens a new one)."""
        loop = asyncio.get_running_loop()
        entry = self._clients.pop(id(loop), None)
        if entry is not None and entry[0] is loop:
            await entry[1].close()

    def _build_body(self, request: ChatRequest, mode: str) -> dict[str, Any]:
        """The JSON body of one ``/chat/completions`` request: OpenAI's named parameters as they are,
        the others under the names OpenAI-compatible servers use (``repeat_penalty`` is vLLM's
        ``repetition_penalty``)."""
        params = effective_params(self.spec, request)
        seed = sample_seed(params, request.sample_index)
        if seed is not None:
            params["seed"] = seed
        kwargs: dict[str, Any] = {"model": self.spec.model_id, "messages": request.messages}
        for k, v in params.items():
            kwargs[k if k in _OPENAI_NATIVE else _OPENAI_RENAME.get(k, k)] = v
        if request.response_schema is not None:
            if mode == "json_schema":
                kwargs["response_format"] = {
                    "type": "json_schema",
                    "json_schema": {"name": "output", "schema": request.response_schema},
                }
            elif mode == "json_object":
                kwargs["response_format"] = {"type": "json_object"}
        return kwargs

    def _downgrade(self, failed_mode: str) -> bool:
        """Move the remembered format mode past ``failed_mode``; False when already at 'none'."""
        with self._format_lock:
            idx = self.FORMAT_MODES.index(failed_mode)
            if idx + 1 >= len(self.FORMAT_MODES):
                return False
            nxt = self.FORMAT_MODES[idx + 1]
            if self.FORMAT_MODES.index(self.format_mode) < idx + 1:
                log.warning(
                    "model '%s': endpoint rejected response_format %s; falling back to %s",
                    self.spec.name, failed_mode, nxt,
                )
                self.format_mode = nxt
            return True

    async def complete(self, request: ChatRequest) -> ChatResult:
        """Run one completion with retries and structured-output fallback; never raises for API errors.

        ``ChatResult.attempts`` counts the requests sent (format fallbacks and retries included;
        0 when the :attr:`breaker` is open and nothing was sent).

        Raises ``ValueError`` only for an unknown decoding parameter (a programming error).
        """
        import httpx2  # the HTTP client of the pinned openai SDK
        import openai

        t0 = time.perf_counter()
        if self.breaker.is_open:
            return ChatResult(error=self.breaker.message, attempts=0)
        client = self._client()
        attempt = 0  # retries used
        sent = 0  # requests sent

        def failed(error: str, *, outage: bool = False) -> ChatResult:
            self.breaker.record(outage, error)
            return ChatResult(error=error, latency_s=time.perf_counter() - t0, attempts=sent)

        async def retry(exc: BaseException, what: str) -> bool:
            nonlocal attempt
            if self.breaker.is_open:  # another call found the endpoint gone: stop retrying
                return False
            if await self.pause_before_retry(attempt, exc, what):
                attempt += 1
                return True
            return False

        while True:
            mode = self.format_mode
            body = self._build_body(request, mode)
            sent += 1
            try:
                # the SDK's documented raw route (client.post): the same retries, errors and headers
                # as chat.completions.create, without its per-call request transform and response
                # model (about 1.3 ms of CPU a call, which a run of thousands of calls feels)
                raw = await client.post("/chat/completions", cast_to=httpx2.Response, body=body)
                resp = json.loads(raw.content)
            except (openai.BadRequestError, openai.UnprocessableEntityError) as exc:
                if (
                    request.response_schema is not None
                    and mode != "none"
                    and any(h in str(exc).lower() for h in _FORMAT_ERROR_HINTS)
                    and self._downgrade(mode)
                ):
                    continue  # a fallback does not use up a retry
                return failed(error_text(exc))
            except openai.APIStatusError as exc:
                status = exc.status_code
                retryable = status in (408, 409, 429) or status >= 500
                if retryable and await retry(exc, f"HTTP {status}"):
                    continue
                return failed(self._final_error(exc), outage=status >= 500)
            except openai.APIConnectionError as exc:  # includes APITimeoutError
                if await retry(exc, type(exc).__name__):
                    continue
                return failed(self._final_error(exc), outage=True)
            except openai.OpenAIError as exc:
                return failed(error_text(exc))
            except json.JSONDecodeError as exc:  # a 200 whose body was cut off or is not JSON
                if await retry(exc, "malformed response body"):
                    continue
                return failed(f"malformed response: {error_text(exc)}")
            latency = time.perf_counter() - t0
            try:
                choice = resp["choices"][0]
                text = choice["message"].get("content") or ""
                finish = choice.get("finish_reason")
                usage = resp.get("usage") or {}
                if not isinstance(text, str) or not isinstance(usage, dict):
                    raise TypeError("content is not a string or usage not an object")
            except (AttributeError, IndexError, KeyError, TypeError) as exc:  # JSON without choices[0].message
                if await retry(exc, "malformed response body"):
                    continue
                return failed(f"malformed response: {error_text(exc)}")
            self.breaker.record(False)
            return ChatResult(
                text=text,
                prompt_tokens=int(usage.get("prompt_tokens") or 0),
                completion_tokens=int(usage.get("completion_tokens") or 0),
                latency_s=latency,
                finish_reason=finish,
                attempts=sent,
            )

    def _final_error(self, exc: BaseException) -> str:
        """The error text of a call that ended in ``exc``; the breaker's message once it is open."""
        return self.breaker.message if self.breaker.is_open else error_text(exc)

    @classmethod
    def readiness_problems(cls, spec: ModelSpec) -> list[str]:
        """Both environment variables named by ``base_url_env`` and ``api_key_env`` must be set and
        non-empty (for a keyless local server any placeholder value will do), and the base URL
        must start with ``http://`` or ``https://``. Never includes a variable's value."""
        name = spec.name
        problems: list[str] = []
        for field, what in (("api_key_env", "API key"), ("base_url_env", "base URL")):
            var = getattr(spec, field)
            if not var:
                problems.append(
                    f"model '{name}' needs the name of the environment variable holding its {what} "
                    f"(config key models.{name}.{field})"
                )
            elif not os.environ.get(var, "").strip():
                problems.append(
                    f"model '{name}' needs environment variable {var} (config key models.{name}.{field}) "
                    f"set to the {what} of its OpenAI-compatible endpoint"
                    + (" (e.g. http://localhost:8000/v1)" if field == "base_url_env" else " (any placeholder for a keyless server)")
                )
            elif field == "base_url_env" and not os.environ[var].strip().lower().startswith(("http://", "https://")):
                problems.append(
                    f"environment variable {var} (config key models.{name}.{field}) of model '{name}' "
                    "must hold a URL starting with http:// or https://"
                )
        return problems
