"""The cached, concurrent, logged entry point for every LLM call.

``LLMClient.complete`` looks the request up in the :class:`~anachron.llm.cache.LLMCache`,
calls the provider on a miss, stores successful results and appends one record per
call to a :class:`CallLog`. A caller that can judge an answer (e.g. parse it) passes an
``accept`` predicate: an answer it rejects is stored marked ``"final": false`` (recorded, never
served as a hit), and :meth:`LLMClient.fresh_sample` moves a later request past such samples. ``complete_many`` runs a batch concurrently (bounded by
``ModelSpec.concurrency``), keeps the input order and shows its progress (:mod:`anachron.progress`:
a bar on the terminal, lines in the rule's log).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import datetime as dt
import threading
import time
import uuid
from typing import Any, Callable, Iterable, Sequence

import pandas as pd

from anachron.errors import AnachronError, ConfigError
from anachron.io import sha256_file
from anachron.llm.cache import LLMCache, answer_settings, cache_key
from anachron.llm.providers import BaseProvider, Provider, effective_params, error_text, make_provider
from anachron.llm.slots import EndpointGate, gate_for
from anachron.llm.types import ChatRequest, ChatResult, ModelSpec
from anachron.progress import Progress, count_call
from anachron.tables import CALL_LOG_COLUMNS


def _now_iso() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="milliseconds")


class CallLog:
    """Thread-safe collector of one record per LLM call (hits included); each call is also counted
    for the progress display (:func:`anachron.progress.count_call`).

    Record fields: see :data:`CALL_LOG_COLUMNS` (``latency_s`` in seconds, ``started_at``
    ISO-8601 UTC, ``attempts`` the requests sent, 0 for a cache hit) plus every key of the request's ``tag`` (``instance_id``, ``step``, ...)
    as its own field; a tag key that clashes with a core field is stored as ``tag_<key>``.
    """

    def __init__(self) -> None:
        """Start an empty log."""
        self._records: list[dict[str, Any]] = []
        self._lock = threading.Lock()

    def record(self, spec: ModelSpec, request: ChatRequest, result: ChatResult, started_at: str) -> dict[str, Any]:
        """Append (and return) the record of one call of ``spec`` for ``request`` with ``result``."""
        rec: dict[str, Any] = {
            "call_id": uuid.uuid4().hex,
            "cache_key": result.cache_key,
            "model_name": spec.name,
            "model": spec.model,
            "provider": spec.provider,
            "sample_index": request.sample_index,
            "prompt_tokens": result.prompt_tokens,
            "completion_tokens": result.completion_tokens,
            "latency_s": result.latency_s,
            "cache_hit": result.cache_hit,
            "attempts": result.attempts,
            "error": result.error,
            "finish_reason": result.finish_reason,
            "started_at": started_at,
        }
        for k, v in request.tag.items():
            rec[f"tag_{k}" if k in rec else k] = v
        with self._lock:
            self._records.append(rec)
        count_call(result)
        return rec

    @property
    def records(self) -> list[dict[str, Any]]:
        """A copy of the records so far, in the order the calls finished."""
        with self._lock:
            return list(self._records)

    def __len__(self) -> int:
        with self._lock:
            return len(self._records)

    def frame(self, **leading: Any) -> pd.DataFrame:
        """:meth:`to_frame` with constant columns (``task``, ``method``, ``model_key``, ...) first."""
        df = self.to_frame()
        for i, (k, v) in enumerate(leading.items()):
            df.insert(i, k, pd.Series([v] * len(df), index=df.index, dtype=object))
        return df

    def to_frame(self) -> pd.DataFrame:
        """All records as a DataFrame: one row per call, columns :data:`CALL_LOG_COLUMNS` then tag fields.

        An empty log gives an empty frame with the core columns.
        """
        records = self.records
        if not records:
            return pd.DataFrame(columns=CALL_LOG_COLUMNS)
        df = pd.DataFrame.from_records(records)
        extra = [c for c in df.columns if c not in CALL_LOG_COLUMNS]
        return df[CALL_LOG_COLUMNS + extra]


def _servable(record: dict[str, Any]) -> bool:
    """Whether a cache record is served as a hit: a final answer, or a rejected one marked for replay."""
    return record.get("final", True) is not False or bool(record.get("replay"))


def _run_sync(coro_factory: Any) -> Any:
    """``asyncio.run(coro_factory())``, or in a helper thread when a loop already runs here."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro_factory())
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(lambda: asyncio.run(coro_factory())).result()


class LLMClient:
    """Cached, logged, concurrency-bounded calls to one configured model.

    Args:
        spec: the model.
        cache: where results live; ``None`` disables caching (every call hits the provider).
        call_log: receives one record per call.
        provider: backend to use; default :func:`~anachron.llm.providers.make_provider` ``(spec)``.
        gate: the endpoint's shared limits (a slot of its in-flight limit for each provider call, a
            rate token for each request, retries through the provider's ``throttle``); default: the
            gate installed for ``spec``'s endpoint by :func:`~anachron.llm.slots.shared_endpoint_gates`, if any.

    Only successful results (``error is None``) are cached, and with an ``accept`` predicate
    (see :meth:`complete`) only accepted ones as final. A cache hit returns the
    stored text, token counts and finish reason with ``cache_hit=True`` and the lookup
    time as ``latency_s``. Identical requests in flight at the same time share one
    provider call (the followers are logged as hits).

    Raises ``ConfigError`` (from the provider) when the model cannot run here.
    """

    def __init__(
        self,
        spec: ModelSpec,
        cache: LLMCache | None,
        call_log: CallLog,
        *,
        provider: Provider | None = None,
        gate: EndpointGate | None = None,
    ) -> None:
        self.spec = spec
        self.cache = cache
        self.call_log = call_log
        self.provider = provider if provider is not None else make_provider(spec)
        self.gate = gate if gate is not None else gate_for(spec)
        if self.gate is not None and self.gate.rate is not None and isinstance(self.provider, BaseProvider):
            self.provider.throttle = self.gate.acquire
        self._loop_state: dict[int, tuple[asyncio.AbstractEventLoop, asyncio.Semaphore, dict[str, asyncio.Future]]] = {}
        self._state_lock = threading.Lock()
        self._adapter_digest: str | None = None

    @property
    def adapter_digest(self) -> str | None:
        """``"sha256:<hex>"`` of the LoRA adapter file (``spec.lora_path``), or ``None`` without one.

        Read once per client (the first key computed), so the file must not change during a run.

        Raises:
            ConfigError: the adapter file does not exist (naming ``models.<name>.lora_path``).
        """
        path = self.spec.adapter_path
        if path is None:
            return None
        if self._adapter_digest is None:
            problem = self.spec.adapter_problem()
            if problem:
                raise ConfigError(problem)
            self._adapter_digest = "sha256:" + sha256_file(path)
        return self._adapter_digest

    def key_for(self, request: ChatRequest) -> str:
        """The cache key of ``request`` for this model (spec params merged with request params;
        the adapter's digest when the spec has a ``lora_path``).

        Raises ``ValueError`` on an unknown decoding parameter and ``ConfigError`` for a missing
        adapter file.
        """
        return cache_key(
            self.spec.provider,
            self.spec.model_id,
            request.messages,
            effective_params(self.spec, request),
            request.response_schema,
            request.sample_index,
            adapter=self.adapter_digest,
            variant=answer_settings(self.spec.provider, self.spec.mock),
        )

    def _state(self) -> tuple[asyncio.Semaphore, dict[str, asyncio.Future]]:
        loop = asyncio.get_running_loop()
        with self._state_lock:
            entry = self._loop_state.get(id(loop))
            if entry is None or entry[0] is not loop:
                self._loop_state = {k: v for k, v in self._loop_state.items() if not v[0].is_closed()}
                entry = (loop, asyncio.Semaphore(self.spec.concurrency), {})
                self._loop_state[id(loop)] = entry
            return entry[1], entry[2]

    def _hit(self, record: dict[str, Any], key: str, t0: float) -> ChatResult:
        return ChatResult(
            text=record.get("text", ""),
            prompt_tokens=int(record.get("prompt_tokens") or 0),
            completion_tokens=int(record.get("completion_tokens") or 0),
            latency_s=time.perf_counter() - t0,
            cache_hit=True,
            finish_reason=record.get("finish_reason"),
            error=None,
            cache_key=key,
            attempts=0,
        )

    def fresh_sample(self, request: ChatRequest) -> ChatRequest:
        """``request`` at the first sample index (from its own up) whose cache entry is not a rejected
        answer (one stored with ``"final": false`` by :meth:`complete`), so that asking again after a
        rejected answer gets a new key and seed instead of the same answer from a deterministic server.

        A rejected answer marked ``"replay": true`` (see :meth:`mark_replay`) is not passed over: the
        caller's retries led from it to an accepted answer, so a re-run replays that chain from the cache.

        Returns ``request`` itself when its own entry is absent, final or to be replayed, or without a cache.
        """
        if self.cache is None:
            return request
        index = request.sample_index
        while True:
            record = self.cache.get(self.key_for(request.model_copy(update={"sample_index": index})))
            if record is None or _servable(record):
                break
            index += 1
        return request if index == request.sample_index else request.model_copy(update={"sample_index": index})

    def mark_replay(self, keys: Iterable[str]) -> None:
        """Mark the rejected answers stored under ``keys`` (``"final": false``) to be served again as
        hits, rejected as they are, because the caller's retries went on from them to an accepted
        answer: a re-run then replays the same chain from the cache (same answers, same trace, no
        call) instead of asking for a fresh sample. Keys without an entry, or with a final one, are
        left alone. No-op without a cache."""
        if self.cache is None:
            return
        for key in keys:
            record = self.cache.get(key)
            if record is not None and record.get("final", True) is False and not record.get("replay"):
                self.cache.put(key, {**record, "replay": True})

    async def complete(
        self, request: ChatRequest, *, accept: Callable[[ChatResult], bool] | None = None
    ) -> ChatResult:
        """Run one request: cache lookup, else provider call (bounded by ``spec.concurrency``), then store.

        Args:
            request: the call.
            accept: judges an answer (``error is None``): a cached entry it rejects is a miss, and a
                new answer it rejects is stored with ``"final": false`` (durable and visible to
                :meth:`fresh_sample`, not served as a hit) instead of as a final entry. ``None``
                accepts every answer. Entries stored ``"final": false`` are misses either way,
                unless :meth:`mark_replay` marked them: those are served as hits whatever ``accept`` says.

        Returns a :class:`ChatResult` with ``cache_key`` set; failures come back as
        ``error`` (never raised), except ``ConfigError`` and ``ValueError`` for an unknown
        decoding parameter.
        """
        started_at = _now_iso()
        t0 = time.perf_counter()
        key = self.key_for(request)
        sem, inflight = self._state()

        record = self.cache.get(key) if self.cache is not None else None
        if record is not None and _servable(record):
            result = self._hit(record, key, t0)
            if accept is None or record.get("replay") or accept(result):
                self.call_log.record(self.spec, request, result, started_at)
                return result

        leader = inflight.get(key)
        if leader is not None:  # an identical request is running: share its result
            shared: ChatResult = await asyncio.shield(leader)
            result = shared.model_copy(update={"cache_hit": True, "latency_s": time.perf_counter() - t0, "attempts": 0})
            self.call_log.record(self.spec, request, result, started_at)
            return result

        fut: asyncio.Future = asyncio.get_running_loop().create_future()
        inflight[key] = fut
        try:
            params = effective_params(self.spec, request)
            call = request.model_copy(update={"params": params})
            async with sem, (self.gate.hold() if self.gate is not None else contextlib.nullcontext()):
                try:
                    result = await self.provider.complete(call)
                except AnachronError:
                    raise
                except Exception as exc:  # a provider bug must not kill a long run
                    result = ChatResult(error=error_text(exc), latency_s=time.perf_counter() - t0)
            result = result.model_copy(update={"cache_key": key, "cache_hit": False})
            if result.error is None and self.cache is not None:
                final = accept is None or accept(result)
                self.cache.put(
                    key,
                    {
                        "cache_key": key,
                        "provider": self.spec.provider,
                        "model": self.spec.model_id,
                        **({"adapter": self.adapter_digest} if self.spec.lora_path else {}),
                        "text": result.text,
                        "prompt_tokens": result.prompt_tokens,
                        "completion_tokens": result.completion_tokens,
                        "finish_reason": result.finish_reason,
                        "latency_s": result.latency_s,
                        "created_at": started_at,
                        "request": {
                            "messages": request.messages,
                            "params": params,
                            "response_schema": request.response_schema,
                            "sample_index": request.sample_index,
                        },
                        **({} if final else {"final": False}),
                    },
                )
            fut.set_result(result)
        except BaseException as exc:
            if not fut.done():
                fut.set_exception(exc)
                fut.exception()  # mark retrieved: followers re-raise it themselves
            raise
        finally:
            inflight.pop(key, None)
        self.call_log.record(self.spec, request, result, started_at)
        return result

    async def complete_many_async(
        self,
        requests: Sequence[ChatRequest],
        *,
        desc: str | None = None,
        progress: bool = True,
        accept: Sequence[Callable[[ChatResult], bool] | None] | None = None,
        unit: str = "call",
    ) -> list[ChatResult]:
        """Async form of :meth:`complete_many` (for callers already inside an event loop)."""
        judges = list(accept) if accept is not None else [None] * len(requests)
        if len(judges) != len(requests):
            raise ValueError(f"accept has {len(judges)} predicates for {len(requests)} requests")
        bar = Progress(len(requests), desc or self.spec.name, unit=unit, enabled=progress)

        async def one(req: ChatRequest, judge: Callable[[ChatResult], bool] | None) -> ChatResult:
            res = await self.complete(req, accept=judge)
            bar.update(1)
            return res

        try:
            return list(await asyncio.gather(*(one(r, j) for r, j in zip(requests, judges))))
        finally:
            bar.close()

    def complete_many(
        self,
        requests: Iterable[ChatRequest],
        *,
        desc: str | None = None,
        progress: bool = True,
        accept: Sequence[Callable[[ChatResult], bool] | None] | None = None,
        unit: str = "call",
    ) -> list[ChatResult]:
        """Run ``requests`` concurrently (at most ``spec.concurrency`` provider calls at once).

        Returns one :class:`ChatResult` per request, in input order. Shows its progress unless
        ``progress`` is False (:class:`~anachron.progress.Progress`, label ``desc``, default the
        model name; ``unit`` names what one request is, e.g. ``"inst"`` when there is one per instance).
        ``accept``: one predicate (or ``None``) per request, passed to :meth:`complete`.
        Synchronous: runs its own event loop (in a helper thread if one is already running).

        Raises ``ValueError`` when ``accept`` and ``requests`` differ in length.
        """
        reqs = list(requests)

        async def run() -> list[ChatResult]:
            try:
                return await self.complete_many_async(reqs, desc=desc, progress=progress, accept=accept, unit=unit)
            finally:  # this loop ends here: release the provider's loop-bound connections
                aclose = getattr(self.provider, "aclose", None)
                if aclose is not None:
                    await aclose()

        return _run_sync(run)
