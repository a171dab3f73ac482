"""Forecast: answers found in other questions' text at the same freeze date (docs/tasks.md#input-audit).

A question set is frozen on one day, and every question's text is public with it. If another
question's background, resolution criteria or title states how this question resolved, the
answer was in the prompt set on the freeze day (a problem reported of a comparable question set,
where a quarter of the answers appeared verbatim in other questions' titles).

Market questions are checked (a dataset question's answer is a value of its series published
after the freeze, which no text frozen with it can hold). Each declarative sentence of every other
question frozen on the same day (another question id; a question asserts nothing) is read by
the task's own resolution check (:class:`~anachron.tasks.forecast.grounding.ResolutionGrounding`:
the question's names and event, realised, with the recorded polarity or an explicit resolution)
as if it were a claim about this instance. Sentences are first narrowed to those that share at
least half of the question's names (an index of their tokens), so the cost grows with the
matches, not with the square of the set.
"""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any, Callable

import pandas as pd

from anachron.tasks.forecast.grounding import ResolutionGrounding
from anachron.tasks.forecast.wording import content, read_question
from anachron.verify.citations import split_sentences

#: Finding kind (:data:`anachron.tasks.audit.AUDIT_COLUMNS` rows).
KIND_OTHER_QUESTION = "answer_in_other_question"
#: The text fields of a question that may state another one's answer.
TEXT_FIELDS = ("question", "background", "resolution_criteria", "market_resolution_criteria")


def answers_in_other_questions(
    instances: pd.DataFrame, context: Callable[[pd.Series], dict[str, Any]]
) -> list[dict[str, Any]]:
    """Findings (one dict per sentence, keys of :data:`anachron.tasks.audit.AUDIT_COLUMNS`) where
    another question of the same freeze date states the instance's resolution.

    Args:
        instances: forecast instances (``inputs`` JSON with ``freeze_date`` and the text fields;
            ``provenance`` JSON with ``question_id`` and ``source``).
        context: the task's grounding context of a row (question, resolution date and value, cutoff).
    """
    check = ResolutionGrounding()
    out: list[dict[str, Any]] = []
    inputs = instances["inputs"].map(json.loads)
    prov = instances["provenance"].map(json.loads)
    qid = [f"{p.get('source')}:{p.get('question_id')}" for p in prov]
    freeze = [str(i.get("freeze_date") or "") for i in inputs]
    groups: dict[str, list[int]] = defaultdict(list)
    for k, day in enumerate(freeze):
        groups[day].append(k)
    for day, members in groups.items():
        sentences: list[tuple[str, str, str]] = []  # (question id, field, sentence)
        seen: set[str] = set()
        for k in members:
            if qid[k] in seen:
                continue
            seen.add(qid[k])
            for field in TEXT_FIELDS:
                text = inputs.iloc[k].get(field)
                if isinstance(text, str) and text.strip() and text != "None":
                    # a question asserts nothing
                    sentences += [(qid[k], field, s) for s in split_sentences(text) if not s.rstrip().endswith("?")]
        index: dict[str, set[int]] = defaultdict(set)
        for j, (_, _, s) in enumerate(sentences):
            for tok in content(s):
                index[tok].add(j)
        for k in members:
            if inputs.iloc[k].get("question_type") != "market":
                continue  # a dataset question's answer is a value published after the freeze
            row = instances.iloc[k]
            ctx = context(row)
            names = read_question(str(ctx.get("question") or "")).names
            if not names:
                continue
            hits: dict[int, int] = defaultdict(int)
            for n in names:
                for j in index.get(n, ()):
                    hits[j] += 1
            need = max(1, (len(names) + 1) // 2)
            for j, count in sorted(hits.items()):
                other, field, sentence = sentences[j]
                if count < need or other == qid[k]:
                    continue
                v = check.check(sentence, ctx)
                if v is None:
                    continue
                out.append(
                    {
                        "instance_id": row["instance_id"],
                        "field": f"{field} of {other}",
                        "sentence": sentence,
                        "kind": KIND_OTHER_QUESTION,
                        "verdict": "leaked",
                        "layer": "grounded",
                        "reason": f"{v.reason}; in question {other}, frozen with it on {day}",
                        "effective_date": v.effective_date.isoformat(),
                    }
                )
    return out
