"""The supervised methods' prompts: the avoid-list of a regeneration and the closed-world aggregator.

The generator sees only the task prompt and the avoid-list (:func:`avoid_list_block`: facts to
leave out, without dates, temporal words or reasons); the aggregator sees only the task prompt and
the validated facts (:func:`closed_world_messages`, :func:`aggregator_request`)
(docs/methods.md#supervised-methods; TimeSPEC paper §3). Shapley-DCLR's value calls reuse the
closed-world prompt (:mod:`anachron.attribution.shapley`).
"""

from __future__ import annotations

import re
from typing import Any, Sequence

import pandas as pd

from anachron.llm.structured import output_schema
from anachron.llm.types import ChatRequest
from anachron.tasks.base import Task
from anachron.verify.dates import find_periods
from anachron.words import MONTH_WORDS, WEEKDAY_NAMES


#: Words that speak about time or about the verification; never shown to the generator.
TEMPORAL_WORDS = re.compile(
    r"\b(?:cut-?offs?|leak\w*|future|temporal\w*|anachron\w*|dates?|dated|dating|timeline\w*|later|earlier|"
    r"before|after|afterwards?|until|till|since|upcoming|subsequent\w*|recent\w*|previous\w*|prior|ago|yet|"
    r"already|today|tomorrow|yesterday|tonight|now|currently|post-?\w*|pre-?cutoff|as of|deadline\w*|"
    + "|".join(MONTH_WORDS + WEEKDAY_NAMES) + "|"
    r"q[1-4]|h[12]|fy\s?\d{2,4}|quarter(?:ly)?|annual(?:ly)?|year(?:s|ly)?|month(?:s|ly)?|week(?:s|ly)?|"
    r"days?|daily|season(?:s|al)?|term)\b",
    re.I,
)
_DANGLING = re.compile(r"\b(?:on|in|of|by|during|from|to|at|for|through|the|and|as)\s*(?=[,.;:)]|$)", re.I)


def scrub_temporal(text: str) -> str:
    """``text`` without its time references and temporal words (for the avoid-list).

    Removes every span :func:`anachron.verify.dates.find_periods` finds (days, months,
    quarters, fiscal years, years), any remaining number that looks like a year or a
    day of month next to a removed span, and the words in :data:`TEMPORAL_WORDS`; then tidies
    punctuation and dangling prepositions. The result may read tersely; it only has to
    identify the fact.
    """
    out = text
    for p in sorted(find_periods(text), key=lambda p: -len(p.text)):
        out = re.sub(rf"(?:\b(?:on|in|during|as of|by|since|from|for|at|through|of)\s+)?{re.escape(p.text)}", " ", out, flags=re.I)
    out = re.sub(r"\b\d{1,2}/\d{1,2}(?:/\d{2,4})?\b", " ", out)
    out = re.sub(r"(?<![\d$.,])(?:19|20)\d{2}(?![\d%])", " ", out)
    out = TEMPORAL_WORDS.sub(" ", out)
    out = re.sub(r"\s+", " ", out)
    out = re.sub(r"\s+([,.;:)])", r"\1", out)
    out = re.sub(r"\(\s*\)", "", out)
    for _ in range(3):
        out = _DANGLING.sub("", out).strip()
        out = re.sub(r"^[,.;:\s]+|[,;:\s]+$", "", out)
        out = re.sub(r",\s*,", ",", out)
    return re.sub(r"\s+", " ", out).strip()


AVOID_HEADER = "Leave the following facts out of your analysis:"
AVOID_FOOTER = "Write your answer again without them."


def avoid_list_block(facts: Sequence[str]) -> str:
    """The regeneration constraint: a plain numbered list of facts to leave out.

    Each fact is :func:`scrub_temporal`-ed; duplicates and facts that scrub to nothing are
    dropped. No dates, no temporal words, no corrected values, no reasons (TimeSPEC paper,
    App. on regeneration; docs/methods.md#avoid-list). Returns "" when nothing is left to avoid.
    """
    lines: list[str] = []
    seen: set[str] = set()
    for f in facts:
        s = scrub_temporal(f)
        key = s.lower()
        if len(re.findall(r"[^\W\d_]{2,}", s)) < 2 or key in seen:
            continue
        seen.add(key)
        lines.append(f"{len(lines) + 1}. {s}")
    if not lines:
        return ""
    return "\n".join([AVOID_HEADER, *lines, AVOID_FOOTER])


def append_to_user(messages: list[dict[str, Any]], block: str) -> list[dict[str, Any]]:
    """A copy of ``messages`` with ``block`` appended to the last user message."""
    out = [dict(m) for m in messages]
    if block:
        for m in reversed(out):
            if m.get("role") == "user":
                m["content"] = f"{m['content']}\n\n{block}"
                break
    return out


CLOSED_WORLD_RULE = (
    "CLOSED LIST OF FACTS: the user message starts with a numbered list of facts. In step 1, every "
    "evidence item must be one of those facts, copied as written. Do not bring in any other fact, "
    "figure, event or name. Give each item the source_date you judge right from its text."
)
CLOSED_WORLD_EMPTY = (
    "CLOSED LIST OF FACTS: no facts are available for this case. Leave the evidence list empty and base "
    "your prediction on the task description alone, without bringing in any fact, figure, event or name."
)
FACTS_HEADER = "Facts you may use:"
PREDICTION_ONLY = "For this request skip steps 1 and 2: answer with {\"prediction\": ...} only."


def closed_world_messages(
    task: Task, row: pd.Series | dict[str, Any], facts: Sequence[str], *, prediction_only: bool = False
) -> list[dict[str, str]]:
    """The closed-world prompt: task system prompt + one constraint; facts, then the task's user message.

    Facts are plain numbered text: no dates, categories or other metadata (TimeSPEC paper, the
    aggregator; docs/methods.md#aggregator). With ``prediction_only`` (Shapley coalition values, docs/metrics.md#shapley-dclr) the
    model is asked for the prediction alone.
    """
    msgs = [dict(m) for m in task.messages(row)]
    rule = CLOSED_WORLD_RULE if facts else CLOSED_WORLD_EMPTY
    if prediction_only:
        rule += " " + PREDICTION_ONLY
    msgs[0]["content"] = f"{msgs[0]['content']}\n\n{rule}"
    if facts:
        listing = "\n".join(f"{k}. {f}" for k, f in enumerate(facts, start=1))
        for m in reversed(msgs):
            if m["role"] == "user":
                m["content"] = f"{FACTS_HEADER}\n{listing}\n\n{m['content']}"
                break
    return msgs


def aggregator_schema(task: Task, row: pd.Series | dict[str, Any], facts: Sequence[str], max_evidence: int) -> dict[str, Any]:
    """The shared output schema with evidence facts restricted to ``facts`` (empty list when none)."""
    schema = output_schema(task.prediction_schema(row), max_evidence=max_evidence)
    ev = schema["properties"]["evidence"]
    if facts:
        ev["items"]["properties"]["fact"] = {"type": "string", "enum": list(facts)}
        ev["maxItems"] = min(max_evidence, len(facts))
    else:
        ev["minItems"], ev["maxItems"] = 0, 0
    return schema


def aggregator_request(
    task: Task, row: pd.Series | dict[str, Any], facts: Sequence[str], params: dict[str, Any], max_evidence: int
) -> ChatRequest:
    """The aggregator's request (closed world over ``facts``)."""
    return ChatRequest(
        messages=closed_world_messages(task, row, facts),
        params=params,
        response_schema=aggregator_schema(task, row, facts, max_evidence),
        tag={"instance_id": row["instance_id"], "step": "aggregate"},
    )

