"""What a method asks of the models and the search backend per instance: its call pattern.

Every method module states its own pattern next to its code, as a function of the method's
config block (``call_pattern`` in :mod:`~anachron.methods.temporal_hint`, :mod:`~anachron.methods.rag`,
:mod:`~anachron.methods.tempo`; ``self_correction_pattern`` and ``timespec_pattern`` in
:mod:`~anachron.methods.supervised`), and :func:`anachron.methods.registry.get_call_pattern` finds it.
``anachron estimate`` (:mod:`anachron.estimate`) reads the patterns to count calls, searches and
tokens before anything runs; ``tests/test_estimate.py`` checks them against real runs with the
mock provider.

A pattern is a list of :class:`Step`: the LLM calls an instance goes through, each rendered with
the method's own request builder, so the prompt sizes the estimate measures are those of the
requests the method sends. What the model will write is not known beforehand: steps whose prompt
carries earlier answers (the claim extractor, the avoid-list, the aggregator's facts, the date
judge's items) are rendered with :func:`placeholder_facts`, a stated number of claims of a stated
length.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Sequence

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from anachron.tasks.base import Task

#: ``(task, instance row, facts) -> chat messages`` of one call of a step.
Render = Callable[["Task", "pd.Series", Sequence[str]], list[dict[str, Any]]]

#: Characters of one placeholder claim (an estimate: a one-sentence fact with a figure and a date).
FACT_CHARS = 120


@dataclass(frozen=True)
class Step:
    """One kind of LLM call a method makes.

    Attributes:
        step: the call's ``step`` tag, as in ``llm_calls.step`` (``generate``, ``queries``,
            ``regenerate``, ``aggregate``, ``extract_claims``, ``plausibility``).
        render: the messages of one call for an instance (the method's own request builder);
            ``facts`` stand for the claims the model wrote earlier (:func:`placeholder_facts`).
        model: ``"generator"`` (the run's model) or ``"supervisor"`` (``methods.<m>.supervisor_model``,
            else the generator itself).
        retries: how often an answer that did not parse is asked again at most
            (:data:`anachron.methods.base.PARSE_RETRIES` for answers in the output schema; 1 for the
            date judge; 0 where an unusable answer falls back to rules: query and claim lists).
        when: ``"always"``, or ``"flagged"``: only instances whose first answer had a flagged claim
            (the regeneration round of the supervised methods).
        batched: one call per batch of at most ``batch_size`` claims that share a cutoff date, over
            all instances of the run (the date judge), instead of one call per instance.
        batch_size: claims per batched call.
    """

    step: str
    render: Render
    model: str = "generator"
    retries: int = 0
    when: str = "always"
    batched: bool = False
    batch_size: int | None = None


@dataclass(frozen=True)
class CallPattern:
    """A method's calls per instance.

    Attributes:
        steps: the LLM calls, in the order the method makes them.
        searches: ``task -> (fewest, most)`` search calls per instance that the run logs
            (``tool_calls``); None for a method that does not search.
        claim_searches: searches per A1-A3 claim per supervision round that are not logged as
            tool calls (TimeSPEC's supervisor dates each claim by one unfiltered search).
    """

    steps: tuple[Step, ...]
    searches: Callable[["Task"], tuple[int, int]] | None = None
    claim_searches: int = 0


def placeholder_facts(n: int, chars: int = FACT_CHARS) -> list[str]:
    """``n`` distinct claim texts of ``chars`` characters each, standing for what a model wrote.

    Plain words (no dates, no temporal words), so that the avoid-list scrubber keeps them whole.
    """
    out = []
    for i in range(n):
        head = f"Placeholder fact {i + 1}:"
        out.append((head + " lorem" * chars)[:chars])
    return out


def placeholder_evidence(facts: Sequence[str]) -> tuple[list[dict[str, Any]], str]:
    """``(evidence items, reasoning)`` of an answer made of ``facts``: one item per fact, and a
    reasoning that restates every fact once (an estimate of its length)."""
    evidence = [{"id": i + 1, "fact": f, "source_date": "2000-01-01"} for i, f in enumerate(facts)]
    return evidence, " ".join(f"{f} [{i + 1}]." for i, f in enumerate(facts))


def render_extraction(task: "Task", row: "pd.Series", facts: Sequence[str]) -> list[dict[str, Any]]:
    """The LLM claim extractor's request for an answer made of ``facts``
    (:func:`anachron.verify.extract.llm.extraction_request`; the supervisors and rule verify_claims)."""
    from anachron.verify.extract.llm import extraction_request

    evidence, reasoning = placeholder_evidence(facts)
    return extraction_request(task, row, evidence, reasoning, {}).messages


def render_plausibility(task: "Task", row: "pd.Series", facts: Sequence[str]) -> list[dict[str, Any]]:
    """The date judge's request for a batch of ``facts`` declared on the instance's cutoff
    (:func:`anachron.verify.layers.llm.plausibility_requests`; Self-Correction's supervisor and the
    verifier's llm layer)."""
    from anachron.verify.layers.llm import plausibility_requests

    cutoff = str(row["cutoff_date"])
    return plausibility_requests(cutoff, [{"fact": f, "declared_date": cutoff} for f in facts]).messages
