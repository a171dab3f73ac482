"""The supervised loop: generate -> supervise -> regenerate (at most once) -> resupervise -> aggregate.

Shared by Self-Correction and TimeSPEC (:mod:`anachron.methods.supervised`), which differ in the
first request and the supervisor (docs/methods.md#supervised-methods; TimeSPEC paper §3).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from anachron.errors import ConfigError
from anachron.llm.client import LLMClient
from anachron.llm.types import ChatRequest
from anachron.methods.base import MethodResult, complete_and_parse
from anachron.methods.supervision.prompts import aggregator_request, append_to_user, avoid_list_block
from anachron.methods.supervision.supervisors import Judged, Supervisor, claim_key
from anachron.tasks.base import Task


@dataclass
class _State:
    row: pd.Series
    request: ChatRequest
    trace: list[dict[str, Any]] = field(default_factory=list)
    calls: int = 0
    verdicts: list[Judged] = field(default_factory=list)


def supervised_loop(
    task: Task,
    rows: list[pd.Series],
    requests: list[ChatRequest],
    client: LLMClient,
    supervisor: Supervisor,
    *,
    params: dict[str, Any],
    method: str,
    max_evidence: int = 10,
    max_regenerations: int = 1,
    max_facts: int = 20,
    traces: list[list[dict[str, Any]]] | None = None,
    calls_before: int = 0,
) -> list[MethodResult]:
    """Generate -> supervise -> regenerate (<= ``max_regenerations``) -> resupervise -> aggregate.

    Args:
        task: the task.
        rows: instance rows, in the order of ``requests``.
        requests: the first generation request per row (Temporal Hint's or RAG's).
        client: the generator's client (generation, regeneration, aggregation).
        supervisor: claim extraction and dating (:class:`~anachron.methods.supervision.supervisors.LLMOnlySupervisor`,
            :class:`~anachron.methods.supervision.supervisors.SearchSupervisor`).
        params: decoding parameters of the generator's calls.
        method: the method name (progress labels).
        max_evidence: ``maxItems`` of the evidence list.
        max_regenerations: 0 or 1 (the papers use one cycle).
        max_facts: at most this many validated facts reach the aggregator (first found first).
        traces, calls_before: steps and LLM calls each instance already made (TimeSPEC's queries).

    Returns:
        One :class:`MethodResult` per row: the aggregator's completion and its parse, with a trace
        of every step (each supervised claim with its verdict and how it was reached).
    """
    if max_regenerations not in (0, 1):
        raise ConfigError(f"{method}: max_regenerations must be 0 or 1, got {max_regenerations!r}")
    states = [
        _State(row=r, request=q, trace=(traces[i] if traces else []), calls=calls_before)
        for i, (r, q) in enumerate(zip(rows, requests))
    ]
    first = complete_and_parse(task, rows, requests, client, desc=f"{method}/{task.name} generate")
    outputs = []
    for s, c in zip(states, first):
        s.calls += c.n_calls
        outputs.append(c.parsed)
        s.trace.extend(c.steps("generate"))
    verdicts, steps = supervisor.supervise(task, rows, outputs)
    for s, v, st in zip(states, verdicts, steps):
        s.verdicts = list(v)
        s.trace.append({"step": "supervise", **st})

    regen = [i for i, v in enumerate(verdicts) if max_regenerations and any(j.flagged for j in v)]
    regen = [i for i in regen if avoid_list_block([j.claim.text for j in verdicts[i] if j.flagged])]
    if regen:
        reqs = []
        for i in regen:
            block = avoid_list_block([j.claim.text for j in verdicts[i] if j.flagged])
            base = states[i].request
            reqs.append(
                base.model_copy(
                    update={"messages": append_to_user(base.messages, block), "tag": {**base.tag, "step": "regenerate"}}
                )
            )
        second = complete_and_parse(task, [rows[i] for i in regen], reqs, client, desc=f"{method}/{task.name} regenerate")
        outs2 = []
        for i, c in zip(regen, second):
            states[i].calls += c.n_calls
            outs2.append(c.parsed)
            states[i].trace.extend(c.steps("regenerate", n_avoided=sum(j.flagged for j in verdicts[i])))
        cache = [{claim_key(j.claim.text): j for j in verdicts[i]} for i in regen]
        v2, steps2 = supervisor.supervise(task, [rows[i] for i in regen], outs2, cache=cache)
        for i, v, st in zip(regen, v2, steps2):
            states[i].verdicts.extend(v)
            states[i].trace.append({"step": "resupervise", **st})

    facts_per: list[list[str]] = []
    for s in states:
        flagged = {claim_key(j.claim.text) for j in s.verdicts if j.flagged}
        facts: list[str] = []
        seen: set[str] = set()
        for j in s.verdicts:
            key = claim_key(j.claim.text)
            if j.flagged or key in flagged or key in seen or not key:
                continue
            seen.add(key)
            facts.append(" ".join(j.claim.text.split())[:400])
        facts_per.append(facts[:max_facts])
    agg_reqs = [aggregator_request(task, s.row, f, params, max_evidence) for s, f in zip(states, facts_per)]
    final = complete_and_parse(task, rows, agg_reqs, client, desc=f"{method}/{task.name} aggregate")
    out: list[MethodResult] = []
    for s, f, c in zip(states, facts_per, final):
        s.calls += c.n_calls
        s.trace.extend(c.steps("aggregate", n_facts=len(f)))
        out.append(
            MethodResult(
                instance_id=s.row["instance_id"],
                completion=c.result.text,
                parsed=c.parsed,
                finish_reason=c.result.finish_reason,
                llm_error=c.result.error,
                n_llm_calls=s.calls,
                trace=s.trace,
            )
        )
    return out
