"""What every method returns, and the shared generation step.

A method maps eval instances to one :class:`MethodResult` per instance: the
final completion, its parse, and a trace of the steps it took. The output row
layout (:data:`~anachron.store.schema.RUN_COLUMNS`) is what ``results/runs/{task}/{method}/{model}.parquet``
holds.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pandas as pd

from anachron.llm.structured import ParsedOutput, output_schema, parse_output
from anachron.llm.types import ChatRequest, ChatResult
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
        """Flatten to a :data:`~anachron.store.schema.RUN_COLUMNS` dict (JSON columns as strings)."""
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
            "parse_status": self.parsed.status,
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
    """Run the final generation request of every instance and parse it (never raises).

    Args:
        task: the task (its prediction validator is used by the parser).
        rows: instance rows, in the order of ``requests``.
        requests: one generation request per row.
        client: the LLM client (cached, concurrent).
        desc: progress-bar label.
        traces: per-row trace steps recorded so far (a ``generate`` step is appended).
        calls_before: LLM calls each instance made before this one (for ``n_llm_calls``).
    """
    results = client.complete_many(requests, desc=desc)
    traces = traces if traces is not None else [[] for _ in rows]
    out = []
    for row, res, trace in zip(rows, results, traces):
        parsed = parse_result(task, row, res)
        trace.append({"step": "generate", "cache_key": res.cache_key, "parse_status": parsed.status})
        out.append(
            MethodResult(
                instance_id=row["instance_id"],
                completion=res.text,
                parsed=parsed,
                finish_reason=res.finish_reason,
                llm_error=res.error,
                n_llm_calls=calls_before + 1,
                trace=trace,
            )
        )
    return out
