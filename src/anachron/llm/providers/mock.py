"""The mock provider (``mock/...``): no model at all, for trying the workflow in seconds and for tests.

Its answer to a request is, in order of precedence:

1. a scripted answer: ``answers`` in the model's ``mock`` options (a list cycled over the
   calls in the order they reach the provider, or a mapping from the request's ``step``
   tag — ``generate``, ``regenerate``, ``queries``, ``aggregate``, ``shapley``,
   ``extract_claims``, ``plausibility`` — to one answer or a list cycled per step), or, from Python, any
   callable ``request -> answer`` (returning ``None`` falls through to 2/3);
2. with ``echo: true``, the last user message;
3. otherwise a minimal instance of the request's JSON schema (:func:`schema_instance`),
   so every structured call parses; ``"{}"`` for a request without a schema.

A string answer is sent as is, a :class:`ChatResult` is returned as is (a scripted model-side
failure), anything else as its JSON. Token counts are whitespace-separated words.

Latency and failures are injected per attempt: every attempt waits ``latency_s`` (plus up to
``latency_jitter_s``); the first ``fail_first`` attempts of every call fail, and each later
attempt fails with probability ``failure_rate``, with the error of ``failure_kind``. The
retryable kinds (``rate_limit``, ``server_error``, ``timeout``) are retried like the
OpenAI-compatible provider retries (``spec.max_retries``, exponential backoff), then returned
as ``ChatResult.error``; ``bad_request`` is returned at once; ``crash`` raises out of
:meth:`MockProvider.complete` (the client turns it into an error result). The random draws
depend only on ``seed``, the request and the attempt number, never on call order.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
import re._constants as _sre  # the regex parser behind `re` (Python 3.11+), for regex_example
import re._parser as _sre_parse
import string
import time
from collections import Counter
from typing import Any, Awaitable, Callable, Literal, Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from anachron.errors import ConfigError
from anachron.llm.cache import cache_key
from anachron.llm.providers.base import BaseProvider, effective_params, error_text
from anachron.llm.types import ChatRequest, ChatResult, ModelSpec

#: What a scripted answer may be: text, a ready :class:`ChatResult`, or any other JSON value.
Answer = Any


class MockOptions(BaseModel):
    """The ``mock:`` block of a ``mock/...`` model entry (every field optional).

    Fields:
        answers: scripted answers: a list (cycled over the calls in call order) or a mapping
            from the request's ``step`` tag to an answer or a list of answers (cycled per step).
            A string is sent as is, any other value as its JSON (so an answer that is itself a
            JSON array is written as a string or inside a one-element list). ``None``: nothing
            scripted.
        echo: answer with the last user message when no scripted answer applies.
        latency_s: seconds every attempt waits before answering.
        latency_jitter_s: up to this many seconds more, drawn per attempt (seeded).
        fail_first: the first N attempts of every call fail.
        failure_rate: probability that a later attempt fails (seeded draw per attempt).
        failure_kind: the injected error: ``rate_limit`` (HTTP 429), ``server_error`` (HTTP 500)
            and ``timeout`` are retried up to ``max_retries`` times; ``bad_request`` (HTTP 400)
            is not; ``crash`` raises out of the provider.
        seed: seed of the latency and failure draws.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    answers: list[Any] | dict[str, Any] | None = None
    echo: bool = False
    latency_s: float = Field(default=0.0, ge=0)
    latency_jitter_s: float = Field(default=0.0, ge=0)
    fail_first: int = Field(default=0, ge=0)
    failure_rate: float = Field(default=0.0, ge=0, le=1)
    failure_kind: Literal["rate_limit", "server_error", "timeout", "bad_request", "crash"] = "server_error"
    seed: int = 0

    @classmethod
    def of(cls, spec: ModelSpec) -> "MockOptions":
        """The options of ``spec`` (its ``mock`` block; defaults when absent).

        Raises:
            ConfigError: naming ``models.<name>.mock.<field>`` for each invalid or unknown option.
        """
        try:
            return cls.model_validate(spec.mock or {})
        except ValidationError as exc:
            problems = [f"models.{spec.name}.mock.{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()]
            raise ConfigError("invalid mock options: " + "; ".join(problems)) from None


# --------------------------------------------------------------------------- injected failures


class MockFailure(Exception):
    """An injected failure of the mock provider; ``retryable`` ones are retried with backoff."""

    retryable = True


class MockRateLimitError(MockFailure):
    """Injected HTTP 429."""


class MockServerError(MockFailure):
    """Injected HTTP 500."""


class MockTimeoutError(MockFailure):
    """Injected request timeout."""


class MockBadRequestError(MockFailure):
    """Injected HTTP 400 (not retried)."""

    retryable = False


class MockCrash(RuntimeError):
    """Raised out of :meth:`MockProvider.complete` (``failure_kind: crash``)."""


_FAILURES: dict[str, tuple[type[Exception], str]] = {
    "rate_limit": (MockRateLimitError, "HTTP 429: rate limited (mock)"),
    "server_error": (MockServerError, "HTTP 500: internal server error (mock)"),
    "timeout": (MockTimeoutError, "request timed out (mock)"),
    "bad_request": (MockBadRequestError, "HTTP 400: bad request (mock)"),
    "crash": (MockCrash, "the provider crashed (mock)"),
}


# --------------------------------------------------------------------------- schema instances

#: Readable strings tried first for a string with a ``pattern``.
_STRING_CANDIDATES = ("mock", "2000-01-01", "2000-01-01T00:00:00Z", "00:00:00", "0", "a", "A")
_FORMATS = {
    "date": "2000-01-01",
    "date-time": "2000-01-01T00:00:00Z",
    "time": "00:00:00",
    "uuid": "00000000-0000-0000-0000-000000000000",
    "email": "mock@example.org",
    "uri": "https://example.org/",
}
#: Characters tried, in order, for a regex character class.
_CLASS_CANDIDATES = string.digits + string.ascii_lowercase + string.ascii_uppercase + " -_.:/" + string.punctuation


class _Unsupported(Exception):
    pass


def _category_test(category: Any) -> Callable[[str], bool]:
    tests: dict[Any, Callable[[str], bool]] = {
        _sre.CATEGORY_DIGIT: str.isdigit,
        _sre.CATEGORY_NOT_DIGIT: lambda c: not c.isdigit(),
        _sre.CATEGORY_SPACE: str.isspace,
        _sre.CATEGORY_NOT_SPACE: lambda c: not c.isspace(),
        _sre.CATEGORY_WORD: lambda c: c.isalnum() or c == "_",
        _sre.CATEGORY_NOT_WORD: lambda c: not (c.isalnum() or c == "_"),
    }
    if category not in tests:
        raise _Unsupported(category)
    return tests[category]


def _class_char(items: list[tuple[Any, Any]]) -> str:
    negate = bool(items) and items[0][0] is _sre.NEGATE
    members = items[1:] if negate else items

    def inside(c: str) -> bool:
        for op, av in members:
            if op is _sre.LITERAL and ord(c) == av:
                return True
            if op is _sre.RANGE and av[0] <= ord(c) <= av[1]:
                return True
            if op is _sre.CATEGORY and _category_test(av)(c):
                return True
        return False

    if not negate and members and members[0][0] is _sre.LITERAL:
        return chr(members[0][1])
    if not negate and members and members[0][0] is _sre.RANGE:
        return chr(members[0][1][0])
    for c in _CLASS_CANDIDATES:
        if inside(c) != negate:
            return c
    raise _Unsupported("empty character class")


def _regex_emit(items: Any) -> str:
    out: list[str] = []
    for op, av in items:
        if op is _sre.LITERAL:
            out.append(chr(av))
        elif op is _sre.NOT_LITERAL:
            out.append("a" if av != ord("a") else "b")
        elif op is _sre.ANY:
            out.append("a")
        elif op is _sre.IN:
            out.append(_class_char(list(av)))
        elif op in (_sre.MAX_REPEAT, _sre.MIN_REPEAT, _sre.POSSESSIVE_REPEAT):
            low, _high, sub = av
            out.append(_regex_emit(sub) * low)
        elif op is _sre.SUBPATTERN:
            out.append(_regex_emit(av[-1]))
        elif op is _sre.ATOMIC_GROUP:
            out.append(_regex_emit(av))
        elif op is _sre.BRANCH:
            out.append(_regex_emit(av[1][0]))
        elif op in (_sre.AT, _sre.ASSERT, _sre.ASSERT_NOT):
            continue
        else:
            raise _Unsupported(op)
    return "".join(out)


def regex_example(pattern: str) -> str | None:
    """A short string that ``re.search(pattern, s)`` matches, or ``None`` when none is found.

    Tries readable candidates (``"mock"``, an ISO date, ...) first, then builds the shortest
    string the regex's first alternatives describe (each class's first member, each repeat
    at its minimum). Handles the patterns of JSON schemas (anchors, classes, groups,
    alternation, ``{m,n}``); backreferences and the like give ``None``.
    """
    try:
        rx = re.compile(pattern)
    except re.error:
        return None
    for cand in _STRING_CANDIDATES:
        if rx.search(cand):
            return cand
    try:
        built = _regex_emit(_sre_parse.parse(pattern))
    except (_Unsupported, re.error, RecursionError):
        return None
    return built if rx.search(built) else None


def _number(schema: Mapping[str, Any], integer: bool, index: int) -> int | float:
    lo, hi = schema.get("minimum"), schema.get("maximum")
    xlo, xhi = schema.get("exclusiveMinimum"), schema.get("exclusiveMaximum")
    step = 1 if integer else 1e-6
    if xlo is not None and (lo is None or xlo >= lo):
        lo = xlo + step
    if xhi is not None and (hi is None or xhi <= hi):
        hi = xhi - step
    if lo is not None and hi is not None:
        value: float = (lo + hi) / 2
    elif lo is not None:
        value = lo
    elif hi is not None:
        value = hi
    else:  # unconstrained: integers are positions (ids, indexes), numbers positive quantities
        value = index if integer else 1.0
    mult = schema.get("multipleOf")
    if mult:
        value = round(value / mult) * mult
        if lo is not None and value < lo:
            value += mult
    return int(value) if integer else float(value)


def _string(schema: Mapping[str, Any]) -> str:
    fmt = schema.get("format")
    pattern = schema.get("pattern")
    if pattern:
        text = regex_example(pattern) or "mock"
    elif fmt in _FORMATS:
        text = _FORMATS[fmt]
    else:
        text = "mock"
    min_len, max_len = schema.get("minLength", 0), schema.get("maxLength")
    if len(text) < min_len:
        text += "x" * (min_len - len(text))
    if max_len is not None and len(text) > max_len:
        text = text[:max_len]
    return text


def _pick_type(types: Any) -> str | None:
    if isinstance(types, list):
        return "null" if "null" in types else (types[0] if types else None)
    return types


def schema_instance(schema: Mapping[str, Any] | bool | None, index: int = 0) -> Any:
    """A minimal JSON value valid under ``schema`` (the mock provider's default answer).

    Rules: ``const`` / the first ``enum`` value (the ``index``-th, cycling, inside arrays, so an
    array of enum items of length ``n <= len(enum)`` lists distinct values); ``anyOf`` /
    ``oneOf`` / type lists prefer ``null``, else the first alternative; objects carry their
    ``required`` properties (and more up to ``minProperties``), in schema order; arrays have
    ``minItems`` items; numbers are the middle of ``[minimum, maximum]``, else the bound, else
    1 (an unconstrained integer is its item's position in the enclosing array, 0 outside one);
    strings are ``"mock"``, a value of their ``format`` (``date`` gives ``"2000-01-01"``) or an
    example of their ``pattern`` (:func:`regex_example`), fitted to ``minLength``/``maxLength``;
    booleans ``false``. ``$ref`` is not followed.

    Args:
        schema: a JSON Schema (``True``/``None``/``{}`` accept anything: ``None`` is returned).
        index: position of the value in its enclosing array.

    Raises:
        ValueError: for a ``type`` that JSON Schema does not define.
    """
    if not isinstance(schema, Mapping):
        return None
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        enum = list(schema["enum"])
        return enum[index % len(enum)]
    for key in ("anyOf", "oneOf"):
        alts = schema.get(key)
        if alts:
            nulls = [a for a in alts if isinstance(a, Mapping) and _pick_type(a.get("type")) == "null"]
            return schema_instance(nulls[0] if nulls else alts[0], index)
    if schema.get("allOf"):
        merged: dict[str, Any] = {}
        for part in schema["allOf"]:
            merged.update(part)
        return schema_instance({**merged, **{k: v for k, v in schema.items() if k != "allOf"}}, index)
    kind = _pick_type(schema.get("type"))
    if kind is None:
        kind = "object" if "properties" in schema else "array" if "items" in schema else "null"
    if kind == "null":
        return None
    if kind == "boolean":
        return False
    if kind in ("integer", "number"):
        return _number(schema, kind == "integer", index)
    if kind == "string":
        return _string(schema)
    if kind == "array":
        items = schema.get("items")
        prefix = list(schema.get("prefixItems") or (items if isinstance(items, list) else []))  # draft-07 tuples
        n = max(int(schema.get("minItems", 0)), 0)
        return [schema_instance(prefix[i] if i < len(prefix) else items, i) for i in range(n)]
    if kind == "object":
        props: Mapping[str, Any] = schema.get("properties") or {}
        required = list(schema.get("required") or [])
        names = [p for p in props if p in required] + [p for p in required if p not in props]
        names += [p for p in props if p not in names][: max(0, int(schema.get("minProperties", 0)) - len(names))]
        return {name: schema_instance(props.get(name, {}), index) for name in names}
    raise ValueError(f"unknown JSON schema type {kind!r}")


def default_answer(request: ChatRequest) -> str:
    """The JSON text of :func:`schema_instance` of the request's schema; ``"{}"`` without one."""
    if request.response_schema is None:
        return "{}"
    return json.dumps(schema_instance(request.response_schema))


# --------------------------------------------------------------------------- the provider


def _words(text: str) -> int:
    return len(text.split())


class MockProvider(BaseProvider):
    """A provider that answers from a script, by echo or with a schema-valid default (``mock/...``).

    See the module docstring for how an answer is chosen and how latency and failures are
    injected; options come from ``spec.mock`` (:class:`MockOptions`).

    Args:
        spec: a ``mock/...`` model.
        answers: overrides ``spec.mock.answers``: a list, a mapping by step, or a callable
            ``request -> str | ChatResult | JSON value | None`` (``None``: not scripted).
        sleep: the coroutine that waits between retries.

    Attributes:
        requests: every request received, in arrival order (one per call, retries not repeated).
        attempts: attempts made, retries included.
        max_in_flight: the most calls running at once.

    Raises:
        ConfigError: for a non-mock model or invalid ``mock`` options.
    """

    prefix = "mock"

    def __init__(
        self,
        spec: ModelSpec,
        *,
        answers: Sequence[Answer] | Mapping[str, Answer] | Callable[[ChatRequest], Answer] | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        super().__init__(spec, sleep=sleep)
        self.options = MockOptions.of(spec)
        self.answers = answers if answers is not None else self.options.answers
        self.requests: list[ChatRequest] = []
        self.attempts = 0
        self.max_in_flight = 0
        self._in_flight = 0
        self._turns: Counter[str | None] = Counter()

    @classmethod
    def readiness_problems(cls, spec: ModelSpec) -> list[str]:
        """Always ready; only invalid ``mock`` options are reported."""
        try:
            MockOptions.of(spec)
        except ConfigError as exc:
            return [str(exc)]
        return []

    def _cycle(self, answers: Any, turn_key: str | None) -> Any:
        if isinstance(answers, Sequence) and not isinstance(answers, str):
            if not answers:
                return None
            turn = self._turns[turn_key]
            self._turns[turn_key] += 1
            return answers[turn % len(answers)]
        return answers

    def _scripted(self, request: ChatRequest) -> Any:
        answers = self.answers
        if answers is None:
            return None
        if callable(answers):
            return answers(request)
        if isinstance(answers, Mapping):
            step = request.tag.get("step")
            return self._cycle(answers[step], step) if step in answers else None
        return self._cycle(answers, None)

    def _answer(self, request: ChatRequest) -> str | ChatResult:
        got = self._scripted(request)
        if got is None and self.options.echo:
            users = [m for m in request.messages if m.get("role") == "user"]
            got = str(users[-1]["content"]) if users else ""
        if got is None:
            got = default_answer(request)
        if isinstance(got, (str, ChatResult)):
            return got
        return json.dumps(got)

    def _rng(self, request: ChatRequest, attempt: int, purpose: str) -> random.Random:
        key = cache_key(self.spec.provider, self.spec.model_id, request.messages, effective_params(self.spec, request),
                        request.response_schema, request.sample_index)
        return random.Random(f"{self.options.seed}:{key}:{attempt}:{purpose}")

    def _failure(self, request: ChatRequest, attempt: int) -> MockFailure | MockCrash | None:
        opts = self.options
        fails = attempt < opts.fail_first or (
            opts.failure_rate > 0 and self._rng(request, attempt, "failure").random() < opts.failure_rate
        )
        if not fails:
            return None
        cls, message = _FAILURES[opts.failure_kind]
        return cls(message)  # type: ignore[return-value]

    async def complete(self, request: ChatRequest) -> ChatResult:
        """Answer ``request`` after the injected latency and failures (see the module docstring).

        Raises:
            MockCrash: on an injected ``crash``.
        """
        t0 = time.perf_counter()
        self.requests.append(request)
        answer = self._answer(request)  # chosen on arrival, so list answers follow call order
        self._in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self._in_flight)
        opts = self.options
        try:
            attempt = 0
            while True:
                self.attempts += 1
                wait = opts.latency_s
                if opts.latency_jitter_s:
                    wait += opts.latency_jitter_s * self._rng(request, attempt, "latency").random()
                await asyncio.sleep(wait)
                failure = self._failure(request, attempt)
                if failure is None:
                    break
                if isinstance(failure, MockCrash):
                    raise failure
                if failure.retryable and await self.pause_before_retry(attempt, failure, type(failure).__name__):
                    attempt += 1
                    continue
                return ChatResult(error=error_text(failure), latency_s=time.perf_counter() - t0, attempts=attempt + 1)
        finally:
            self._in_flight -= 1
        if isinstance(answer, ChatResult):
            return answer.model_copy(update={"attempts": attempt + 1})
        prompt = sum(_words(str(m.get("content", ""))) for m in request.messages)
        return ChatResult(
            text=answer,
            prompt_tokens=prompt,
            completion_tokens=_words(answer),
            latency_s=time.perf_counter() - t0,
            finish_reason="stop",
            attempts=attempt + 1,
        )
