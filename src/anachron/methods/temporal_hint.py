"""Temporal Hint: the task prompt alone, one greedy call (TEMPO paper, §4.2 and App. F.1).

The model gets the shared three-step prompt with the cutoff date and nothing
else: no retrieval, no verification, no parameter update. It is the baseline
every other method builds on.
"""

from __future__ import annotations

from typing import Any, Mapping

import pandas as pd

from anachron.llm.client import LLMClient
from anachron.methods.base import PARSE_RETRIES, MethodResult, generate_and_parse, generation_request
from anachron.methods.pattern import CallPattern, Step
from anachron.methods.registry import register_method
from anachron.tasks.base import Task


def run_temporal_hint(
    instances: pd.DataFrame, task: Task, client: LLMClient, *, params: dict[str, Any], max_evidence: int = 10
) -> list[MethodResult]:
    """Run Temporal Hint on every row of ``instances`` (concurrently, cached).

    Args:
        instances: rows with the instance columns of :data:`anachron.tasks.base.INSTANCE_COLUMNS`.
        task: the task implementation.
        client: LLM client (cache + call log + bounded concurrency).
        params: decoding parameters; greedy decoding means ``temperature`` 0.
        max_evidence: the ``maxItems`` bound on the evidence list in the output schema.

    Returns:
        One :class:`MethodResult` per row, in row order. Model or parse failures are
        recorded in the result, never raised.
    """
    rows = [r for _, r in instances.iterrows()]
    requests = [generation_request(task, r, params, max_evidence) for r in rows]
    return generate_and_parse(task, rows, requests, client, desc=f"temporal_hint/{task.name} generate")


def call_pattern(settings: Mapping[str, Any]) -> CallPattern:
    """Temporal Hint's calls per instance (:mod:`anachron.methods.pattern`): one generation request,
    asked again up to :data:`~anachron.methods.base.PARSE_RETRIES` times when its answer does not
    parse; no search.

    Args:
        settings: the method's config block (``max_evidence``).
    """
    max_evidence = int(settings.get("max_evidence", 10))
    return CallPattern(steps=(
        Step("generate", lambda task, row, facts: generation_request(task, row, {}, max_evidence).messages,
             retries=PARSE_RETRIES),
    ))


register_method("temporal_hint", runner=run_temporal_hint, call_pattern=call_pattern)
