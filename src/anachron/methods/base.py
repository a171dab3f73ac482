"""What every method returns, and the shared generation step.

A method maps eval instances to one :class:`MethodResult` per instance: the
final completion, its parse, and a trace of the steps it took.

Every answer a method parses with the output schema goes through :func:`complete_and_parse`,
which asks again, up to :data:`PARSE_RETRIES` times, for an answer whose parse status is in
:data:`~anachron.tables.RETRIED` (docs/methods.md#output); each retry follows from the
latest answer:

* ``truncated``: the same request with ``max_tokens`` doubled (the effective limit: the
  request's, else the model's, else the tokens the cut-off answer used), capped at
  :data:`RETRY_MAX_TOKENS` and, for a local model, at the room its ``n_ctx`` leaves after the
  prompt; no retry when the cap
  leaves no room to grow (the same request would return the same cut-off answer);
* ``invalid``, ``duplicate_keys``: the same request as the next sample (``sample_index + 1``),
  a new cache key and seed, so the cache does not return the same answer.

The last retry's answer is final, whatever its status; when a retry call itself fails
(``ChatResult.error``) the answer before it is kept and asking stops. Answers that parse are never
asked again, so their requests, cache keys and outputs are what they were without retries. Two
retries rather than one: an answer cut off in transit (a proxy or server fault, indistinguishable
from a model that ran out of tokens) at rate p stays unparsed at rate p³ instead of p².

Across runs (no poisoned cache entries, docs/running.md): an answer is cached as final only when its parse
status is in :data:`~anachron.tables.EVIDENCE_USABLE` (``invalid_prediction`` included: its
evidence and reasoning are scored and it is not retried within a run either). Any other answer
(``truncated``, ``invalid``, ``duplicate_keys``, ``not_json``, ``empty``) is stored marked not final:
the run uses it, a re-run asks again, and :meth:`~anachron.llm.client.LLMClient.fresh_sample` moves
that request past the sample indices whose answers were rejected, so a deterministic server is
asked for a new sample (new key and seed) rather than the same answer. When a retry did get an
accepted answer, the rejected answers before it are marked for replay
(:meth:`~anachron.llm.client.LLMClient.mark_replay`): a re-run then goes through the same chain from
the cache, with the same answers and trace and no call. The output row
layout (:data:`~anachron.tables.RUN_COLUMNS`) is what ``results/runs/{task}/{method}/{model}.parquet``
holds.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

import pandas as pd

from anachron.llm.structured import ParsedOutput, output_schema, parse_output
from anachron.llm.types import ChatRequest, ChatResult, ModelSpec
from anachron.tables import EVIDENCE_USABLE, RETRIED, ParseStatus
from anachron.tasks.base import Task

if TYPE_CHECKING:
    from anachron.llm.client import LLMClient


@dataclass
class MethodResult:
    """One instance's outcome under a method.

    ``evidence`` holds dicts ``{"id", "fact", "source_date"}`` exactly as declared by
    the model (dates unverified). ``trace`` is a list of step dicts (JSON-serialisable).
    """

    instance_id: str
    completion: str
    parsed: ParsedOutput
    finish_reason: str | None = None
    llm_error: str | None = None
    n_llm_calls: int = 1
    trace: list[dict[str, Any]] = field(default_factory=list)

    def to_row(self, row: pd.Series, *, task: str, method: str, model: str) -> dict[str, Any]:
        """Flatten to a :data:`~anachron.tables.RUN_COLUMNS` dict (JSON columns as strings)."""
        return {
            "instance_id": self.instance_id,
            "task": task,
            "method": method,
            "model": model,
            "split": row["split"],
            "cutoff_date": row["cutoff_date"],
            "completion": self.completion,
            "finish_reason": self.finish_reason,
            "llm_error": self.llm_error,
            "parse_status": str(self.parsed.status),
            "parse_error": self.parsed.error,
            "evidence": json.dumps([e.model_dump() for e in self.parsed.evidence]),
            "n_evidence_dropped": self.parsed.n_dropped,
            "reasoning": self.parsed.reasoning,
            "prediction": json.dumps(self.parsed.prediction),
            "n_llm_calls": self.n_llm_calls,
            "trace": json.dumps(self.trace),
        }


def generation_request(task: Task, row: pd.Series, params: dict[str, Any], max_evidence: int) -> ChatRequest:
    """The task's three-step prompt as one structured-output request (temporal_hint's only call)."""
    return ChatRequest(
        messages=task.messages(row),
        params=params,
        response_schema=output_schema(task.prediction_schema(row), max_evidence=max_evidence),
        tag={"instance_id": row["instance_id"], "step": "generate"},
    )


def parse_result(task: Task, row: pd.Series, result: ChatResult) -> ParsedOutput:
    """Parse one completion with the task's prediction validator (never raises)."""
    return parse_output(
        result.text,
        validate_prediction=lambda p: task.validate_prediction(row, p),
        aliases=task.prediction_aliases,
    )


def parses(task: Task, row: pd.Series) -> Callable[[ChatResult], bool]:
    """The cache's ``accept`` predicate for answers to ``row``: True when the answer's parse status is
    in :data:`~anachron.tables.EVIDENCE_USABLE` (only such answers are cached as final)."""
    return lambda result: parse_result(task, row, result).status in EVIDENCE_USABLE


#: The largest ``max_tokens`` a retry of a truncated answer asks for (a local model: also at most ``n_ctx``).
RETRY_MAX_TOKENS = 8192

#: How many times :func:`complete_and_parse` asks again for an answer that did not parse.
PARSE_RETRIES = 2


def retry_request(request: ChatRequest, status: str, result: ChatResult, spec: ModelSpec) -> tuple[ChatRequest, dict[str, Any]] | None:
    """The retry of an answer with parse ``status`` (module docstring), or None for no retry.

    Args:
        request: the request that gave the answer.
        status: the answer's parse status.
        result: the answer (its ``completion_tokens`` stand in for an unknown token limit).
        spec: the model (its ``params`` give the default ``max_tokens``; a local model's ``n_ctx``
            less the answer's ``prompt_tokens`` caps the new limit).

    Returns:
        ``(retry request, trace fields)``: ``reason`` (the status) and ``max_tokens`` (old and new)
        or ``sample_index`` of the retry; None when the status is not retried or a truncated
        answer's limit cannot grow.
    """
    if status not in RETRIED:
        return None
    tag = {**request.tag, "retry": str(status)}
    if status != ParseStatus.TRUNCATED:
        index = request.sample_index + 1
        return request.model_copy(update={"sample_index": index, "tag": tag}), {"reason": str(status), "sample_index": index}
    cap = min(RETRY_MAX_TOKENS, spec.n_ctx - result.prompt_tokens) if spec.provider == "local" else RETRY_MAX_TOKENS
    limit = {**spec.params, **request.params}.get("max_tokens") or result.completion_tokens or None
    new = cap if limit is None else min(2 * int(limit), cap)
    if limit is not None and new <= int(limit):
        return None
    params = {**request.params, "max_tokens": new}
    fields = {"reason": str(status), "max_tokens_before": None if limit is None else int(limit), "max_tokens": new}
    return request.model_copy(update={"params": params, "tag": tag}), fields


@dataclass
class Completed:
    """One answer of :func:`complete_and_parse`: the final result and its parse.

    Attributes:
        result: the final completion (the last retry's whose call succeeded, if any).
        parsed: its parse.
        first_key, first_status: cache key and parse status of the first answer.
        first_sample: sample index of the first answer (above the request's own when earlier runs'
            answers at lower indices were rejected; see :meth:`LLMClient.fresh_sample`).
        retries: one trace step per retry, in order (``step`` ``retry``, ``of`` the step retried,
            ``reason``, the new ``max_tokens`` or ``sample_index``, its ``cache_key``,
            ``parse_status`` and ``llm_error``); empty without one.
    """

    result: ChatResult
    parsed: ParsedOutput
    first_key: str
    first_status: str
    retries: list[dict[str, Any]] = field(default_factory=list)
    first_sample: int = 0

    @property
    def n_calls(self) -> int:
        """LLM calls made for this answer: 1 plus its retries."""
        return 1 + len(self.retries)

    def steps(self, step: str, **extra: Any) -> list[dict[str, Any]]:
        """Its trace steps: ``{"step": step, "cache_key", "parse_status", **extra}`` of the first
        answer (plus ``sample_index`` when it is not 0), then one retry step per retry."""
        first = {"step": step, "cache_key": self.first_key, "parse_status": self.first_status, **extra}
        if self.first_sample:
            first["sample_index"] = self.first_sample
        return [first, *self.retries]


def complete_and_parse(
    task: Task,
    rows: list[pd.Series],
    requests: list[ChatRequest],
    client: "LLMClient",
    *,
    desc: str,
) -> list[Completed]:
    """Run ``requests``, parse each answer, and ask again (up to :data:`PARSE_RETRIES` times) where
    :func:`retry_request` says so; only answers that parse are cached as final (module docstring).

    Args:
        task: the task (its prediction validator is used by the parser).
        rows: instance rows, in the order of ``requests``.
        requests: one request per row (output-schema answers).
        client: the LLM client (cached, concurrent); each round of retries runs as one concurrent batch.
        desc: progress-bar label (``desc + " retry"`` for the retries).

    Returns:
        One :class:`Completed` per request, in order. Never raises on model output.
    """
    requests = [client.fresh_sample(r) for r in requests]
    results = client.complete_many(requests, desc=desc, accept=[parses(task, row) for row in rows], unit="inst")
    done = []
    for row, req, res in zip(rows, requests, results):
        parsed = parse_result(task, row, res)
        done.append(Completed(res, parsed, res.cache_key, parsed.status, first_sample=req.sample_index))
    latest = list(requests)  # the request behind each instance's current answer
    open_ = list(range(len(done)))  # instances that may still be asked again
    for round_ in range(1, PARSE_RETRIES + 1):
        retries = []
        for i in open_:
            c = done[i]
            retry = retry_request(latest[i], c.parsed.status, c.result, client.spec)
            if retry is not None:
                req = client.fresh_sample(retry[0])
                moved = req.sample_index != latest[i].sample_index
                fields = {**retry[1], "sample_index": req.sample_index} if moved else retry[1]
                retries.append((i, req, fields))
        if not retries:
            break
        label = f"{desc} retry" if round_ == 1 else f"{desc} retry {round_}"
        second = client.complete_many([r for _, r, _ in retries], desc=label, accept=[parses(task, rows[i]) for i, _, _ in retries],
                                     unit="inst")
        open_ = []
        for (i, req, fields), res in zip(retries, second):
            prev = done[i]
            parsed = parse_result(task, rows[i], res) if res.ok else prev.parsed
            step = {"step": "retry", "of": requests[i].tag.get("step"), **fields, "cache_key": res.cache_key,
                    "parse_status": parsed.status if res.ok else None, "llm_error": res.error}
            done[i] = Completed(res if res.ok else prev.result, parsed, prev.first_key, prev.first_status,
                                [*prev.retries, step], prev.first_sample)
            if res.ok:
                latest[i] = req
                open_.append(i)
    # a chain that ended in an accepted answer is replayed as it is by a re-run (no call, same answer)
    client.mark_replay(
        key for c in done if c.retries and c.parsed.status in EVIDENCE_USABLE
        for key in [c.first_key, *(r["cache_key"] for r in c.retries[:-1])]
    )
    return done


def generate_and_parse(
    task: Task,
    rows: list[pd.Series],
    requests: list[ChatRequest],
    client: "LLMClient",
    *,
    desc: str,
    traces: list[list[dict[str, Any]]] | None = None,
    calls_before: int = 0,
) -> list[MethodResult]:
    """Run the final generation request of every instance and parse it, retrying once where
    :func:`complete_and_parse` does (never raises).

    Args:
        task: the task (its prediction validator is used by the parser).
        rows: instance rows, in the order of ``requests``.
        requests: one generation request per row.
        client: the LLM client (cached, concurrent).
        desc: progress-bar label.
        traces: per-row trace steps recorded so far (a ``generate`` step is appended, and a
            ``retry`` step after it when the answer was asked again).
        calls_before: LLM calls each instance made before this one (for ``n_llm_calls``).
    """
    done = complete_and_parse(task, rows, requests, client, desc=desc)
    traces = traces if traces is not None else [[] for _ in rows]
    out = []
    for row, c, trace in zip(rows, done, traces):
        trace.extend(c.steps("generate"))
        out.append(
            MethodResult(
                instance_id=row["instance_id"],
                completion=c.result.text,
                parsed=c.parsed,
                finish_reason=c.result.finish_reason,
                llm_error=c.result.error,
                n_llm_calls=calls_before + c.n_calls,
                trace=trace,
            )
        )
    return out
