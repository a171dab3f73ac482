"""Supervised methods: Self-Correction and TimeSPEC (TimeSPEC paper §3 and Table 6; TEMPO App. F.3).

Both wrap a first generation in a verify -> regenerate -> aggregate loop (docs/methods.md#supervised-methods):

1. **generate** — Self-Correction: the Temporal Hint request; TimeSPEC: the RAG request
   (model-written queries, date-filtered retrieval; its search calls are the run's tool calls).
2. **supervise** — claims are extracted from the evidence and reasoning and categorised
   (A1-A5 / B1-B2, :mod:`anachron.verify.categorize`). A4 (outcome) and A5 (consequence) are
   always flagged, B1 / B2 never. A1-A3 claims get a date:

   * Self-Correction ("LLM-only", no search): the supervisor model's date-plausibility
     judgement (:mod:`anachron.verify.layers.llm`), falling back to the plausibility rules when
     its answer is unusable;
   * TimeSPEC ("LLM + search"): a search of the corpus **without** a date filter; the earliest
     document that supports the claim (the corpus layer's test,
     :mod:`anachron.verify.layers.corpus`) gives its earliest public date. Without a supporting
     document the plausibility rules date the claim.

   A claim dated after the cutoff is flagged.
3. **regenerate** (at most once, only when something was flagged) — the first request again,
   with a plain numbered list of facts to leave out appended to the user message. The list
   carries no dates, no temporal words and no reasons
   (:func:`~anachron.methods.supervision.prompts.avoid_list_block`).
4. **resupervise** — the regenerated output is supervised the same way; claims already judged
   reuse their cached verdicts.
5. **aggregate** (always) — a closed world: the task's system prompt plus one constraint, and a
   user message with the validated facts (every claim not flagged, from both rounds) as plain
   numbered text, without dates or labels, before the task's original user message. The output
   schema lists those facts as the only allowed evidence texts (``enum``), so a grammar-constrained
   model cannot add a fact. Its output is the method's answer.

Information surface: the generator sees only the task prompt, its own retrieved passages (TimeSPEC)
and the avoid-list; the aggregator sees only the task prompt and the validated facts. No
verdict, date, category or search result of the supervisor reaches either. The supervisor's
context is derived from the task input alone
(:func:`~anachron.methods.supervision.supervisors.supervisor_context`): it never sees the
instance's label, so the avoid-list cannot reveal which claim matches the true outcome.

The pieces live in :mod:`anachron.methods.supervision` (prompts, supervisors, the loop); this
module holds the two methods' runners and call patterns and registers them.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Mapping, Sequence

import pandas as pd

from anachron.llm.client import LLMClient
from anachron.methods.base import PARSE_RETRIES, MethodResult, generation_request
from anachron.methods.pattern import CallPattern, Render, Step, render_extraction, render_plausibility
from anachron.methods.registry import register_method
from anachron.methods.supervision.loop import supervised_loop
from anachron.methods.supervision.prompts import aggregator_request, append_to_user, avoid_list_block
from anachron.methods.supervision.supervisors import LLMOnlySupervisor, SearchSupervisor
from anachron.tasks.base import Task
from anachron.verify.layers.corpus import MIN_SUPPORT

if TYPE_CHECKING:  # pragma: no cover
    from anachron.retrieval.search import SearchBackend

log = logging.getLogger(__name__)


def _supervisor_client(client: LLMClient, supervisor_model: dict[str, Any] | None) -> tuple[LLMClient, dict[str, Any]]:
    """The supervisor's client and decoding params: a configured model, or the generator itself."""
    if not supervisor_model:
        return client, {}
    from anachron.llm.types import ModelSpec

    spec = ModelSpec(**supervisor_model)
    return LLMClient(spec, client.cache, client.call_log), dict(spec.params)


def run_self_correction(
    instances: pd.DataFrame,
    task: Task,
    client: LLMClient,
    *,
    params: dict[str, Any],
    max_evidence: int = 10,
    extractor: str = "llm",
    batch_size: int = 80,
    max_regenerations: int = 1,
    max_facts: int = 20,
    supervisor_model: dict[str, Any] | None = None,
) -> list[MethodResult]:
    """Self-Correction (TimeSPEC paper, Table 6): Temporal Hint, then LLM-only supervision.

    Args:
        instances, task, client, params, max_evidence: as for Temporal Hint.
        extractor: claim extractor of the supervisor (``llm`` or ``deterministic``).
        batch_size: claims per date-plausibility call (the paper: 80).
        max_regenerations: 0 or 1.
        max_facts: validated facts passed to the aggregator at most.
        supervisor_model: a resolved model config (``name``, ``model``, ...) for the supervisor;
            None = the generating model supervises itself.

    Returns:
        One :class:`MethodResult` per row; calls per instance: generate, extract, judge,
        [regenerate, extract, judge], aggregate.
    """
    sup_client, sup_params = _supervisor_client(client, supervisor_model)
    supervisor = LLMOnlySupervisor(sup_client, sup_params or params, extractor=extractor, batch_size=batch_size)
    rows = [r for _, r in instances.iterrows()]
    requests = [generation_request(task, r, params, max_evidence) for r in rows]
    return supervised_loop(
        task, rows, requests, client, supervisor, params=params, method="self_correction",
        max_evidence=max_evidence, max_regenerations=max_regenerations, max_facts=max_facts,
    )


def run_timespec(
    instances: pd.DataFrame,
    task: Task,
    client: LLMClient,
    *,
    params: dict[str, Any],
    search: "SearchBackend",
    entity_validity: Any = None,
    max_evidence: int = 10,
    extractor: str = "llm",
    verify_k: int = 10,
    min_support: float = MIN_SUPPORT,
    max_regenerations: int = 1,
    max_facts: int = 20,
    supervisor_model: dict[str, Any] | None = None,
    **rag_config: Any,
) -> tuple[list[MethodResult], pd.DataFrame]:
    """TimeSPEC (TimeSPEC paper §3; TEMPO App. F.3): RAG generation, search-verified supervision.

    Args:
        instances, task, client, params, max_evidence: as for RAG.
        search: the corpus; generation searches with the as-of filter (its calls are the
            returned tool calls, method ``timespec``), verification without it.
        entity_validity: point-in-time entity validity for the survivorship metric.
        extractor: the supervisor's claim extractor (``llm`` or ``deterministic``).
        verify_k, min_support: hits per verification search and the support threshold
            (:class:`SearchSupervisor`).
        max_regenerations, max_facts, supervisor_model: as for :func:`run_self_correction`.
        rag_config: retrieval settings of :func:`anachron.methods.rag.prepare_rag`
            (``queries_min``, ``token_budget``, ...).

    Returns:
        ``(results, tool_calls)`` as for RAG.
    """
    from anachron.methods.rag import prepare_rag

    plan = prepare_rag(
        instances, task, client, params=params, search=search, entity_validity=entity_validity, mode="enforced",
        max_evidence=max_evidence, method_name="timespec", **rag_config,
    )
    sup_client, sup_params = _supervisor_client(client, supervisor_model)
    supervisor = SearchSupervisor(
        sup_client, sup_params or params, search=search, extractor=extractor, k=verify_k, min_support=min_support
    )
    results = supervised_loop(
        task, plan.rows, plan.requests, client, supervisor, params=params, method="timespec",
        max_evidence=max_evidence, max_regenerations=max_regenerations, max_facts=max_facts,
        traces=plan.traces, calls_before=1,
    )
    return results, plan.tool_calls


# ---------------------------------------------------------------------------------------------
# Call patterns (anachron estimate; anachron.methods.pattern)
# ---------------------------------------------------------------------------------------------


def _loop_steps(settings: Mapping[str, Any], generation: Render, judge: bool) -> list[Step]:
    """The steps of :func:`supervised_loop` after the first generation: extract (llm extractor
    only) and, with ``judge``, the date judge's batched calls; the same for the regenerated answers
    of flagged instances (``max_regenerations`` 1); then the aggregator."""
    max_evidence, max_facts = int(settings.get("max_evidence", 10)), int(settings.get("max_facts", 20))
    batch = int(settings.get("batch_size", 80))
    supervise = []
    if settings.get("extractor", "llm") == "llm":
        supervise.append(Step("extract_claims", render_extraction, model="supervisor"))
    if judge:
        supervise.append(Step("plausibility", render_plausibility, model="supervisor", retries=1, batched=True,
                              batch_size=batch))

    def regenerate(task: Task, row: pd.Series, facts: Sequence[str]) -> list[dict[str, Any]]:
        return append_to_user(generation(task, row, facts), avoid_list_block(facts))

    def aggregate(task: Task, row: pd.Series, facts: Sequence[str]) -> list[dict[str, Any]]:
        return aggregator_request(task, row, list(facts)[:max_facts], {}, max_evidence).messages

    steps = list(supervise)
    if int(settings.get("max_regenerations", 1)):
        steps.append(Step("regenerate", regenerate, retries=PARSE_RETRIES, when="flagged"))
        steps += [Step(s.step, s.render, s.model, s.retries, "flagged", s.batched, s.batch_size) for s in supervise]
    steps.append(Step("aggregate", aggregate, retries=PARSE_RETRIES))
    return steps


def self_correction_pattern(settings: Mapping[str, Any]) -> CallPattern:
    """Self-Correction's calls per instance: the Temporal Hint request; the supervisor's claim
    extraction (``extractor: llm``) and date judgement (``batch_size`` claims per call, per cutoff
    date, over the run); for an instance with a flagged claim the regeneration and its supervision;
    the aggregator. Generation, regeneration and aggregation are asked again up to
    :data:`~anachron.methods.base.PARSE_RETRIES` times when unparsed, the judge once. No search."""
    max_evidence = int(settings.get("max_evidence", 10))

    def generation(task: Task, row: pd.Series, facts: Sequence[str]) -> list[dict[str, Any]]:
        return generation_request(task, row, {}, max_evidence).messages

    steps = [Step("generate", generation, retries=PARSE_RETRIES), *_loop_steps(settings, generation, judge=True)]
    return CallPattern(steps=tuple(steps))


def timespec_pattern(settings: Mapping[str, Any]) -> CallPattern:
    """TimeSPEC's calls per instance: RAG's query call, searches and generation
    (:func:`anachron.methods.rag.retrieval_steps`); the supervisor's claim extraction
    (``extractor: llm``) and one unfiltered search per A1-A3 claim (not logged as tool calls); for
    an instance with a flagged claim the regeneration and its supervision; the aggregator."""
    from anachron.methods.rag import retrieval_steps

    queries, generation, searches = retrieval_steps(settings)
    steps = [queries, Step("generate", generation, retries=PARSE_RETRIES), *_loop_steps(settings, generation, judge=False)]
    return CallPattern(steps=tuple(steps), searches=searches, claim_searches=1)


register_method("self_correction", runner=run_self_correction, call_pattern=self_correction_pattern, supervised=True)
register_method("timespec", runner=run_timespec, call_pattern=timespec_pattern, retrieves=True, supervised=True)
