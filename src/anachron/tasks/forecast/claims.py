"""Forecast: the claim rules for the instance's own outcome (category A4).

A claim states the outcome (A4) when it says the question resolved ("turned out to be yes",
"resolved No", "the answer to ... was no"), or restates the question (at least three and half
of the content words of its first sentence) with a time reference after the cutoff, unhedged,
or when the grounded resolution check finds it states the resolution in other words
(:class:`~anachron.tasks.forecast.grounding.ResolutionGrounding`).
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from anachron.tasks.forecast.grounding import ResolutionGrounding
from anachron.verify.features import context_cutoff, periods_after
from anachron.words import HEDGE_SPECULATIVE, STOP_WORDS

#: Nouns naming a forecast outcome ("following the resolution").
OUTCOME_NOUNS = r"resolution|outcome"

_RESOLUTION = re.compile(
    r"\bturned out (?:to be |as )?[\"']?(yes|no|true|false)\b|\b(?:answer|outcome|result) (?:to|of|for) .{0,300}?"
    r"\b(?:was|is|came out|turned out to be) [\"']?(yes|no)\b|"
    r"\bresolved?\s+(?:as\s+|to\s+)?[\"']?(yes|no|true|false)\b|\bquestion (?:was |has been |had been )?resolved\b"
    r"|\bresolution (?:was|is|came) [\"']?(yes|no)\b|\bresolved (?:positively|negatively)\b",
    re.I,
)


_RESOLUTION_CHECK = ResolutionGrounding()


def _content_tokens(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in STOP_WORDS and len(w) > 2}


def outcome_rule(text: str, context: Mapping[str, Any]) -> str | None:
    """``A4:forecast:resolution-stated`` / ``A4:forecast:question-after-cutoff`` /
    ``A4:forecast:outcome-restated`` (the grounded check
    :class:`~anachron.tasks.forecast.grounding.ResolutionGrounding` finds the resolution, in
    other words or as a negation), or None."""
    if _RESOLUTION.search(text):
        return "A4:forecast:resolution-stated"
    question = str(context.get("question") or "")
    if not question or HEDGE_SPECULATIVE.search(text):
        return None
    first = re.split(r"\?|\n", question.strip(), maxsplit=1)[0]
    q = _content_tokens(first)
    shared = q & _content_tokens(text)
    if q and len(shared) >= 3 and len(shared) / len(q) >= 0.5 and periods_after(text, context_cutoff(context)):
        return "A4:forecast:question-after-cutoff"
    if context.get("resolution_date") and _RESOLUTION_CHECK.check(text, dict(context)) is not None:
        return "A4:forecast:outcome-restated"
    return None
