"""The input audit: an instance's own input text checked as if it were evidence (docs/tasks.md#input-audit).

An instance is point-in-time only if the prompt itself holds nothing the model could not have
known at the cutoff. The text a task's inputs carry that others wrote (Oyez's facts of the case
and question, ForecastBench's backgrounds and resolution criteria: the task's
:attr:`~anachron.tasks.base.Task.audit_fields`) is split into sentences and each sentence runs
through the claim verifier (:func:`anachron.verify.pipeline.verify_claim`, the ``grounded`` and
``rules`` layers; the dated corpus is built after the datasets) with the instance's cutoff and
no declared date. The text's own date is unknown, so relative time ("later", "two days later")
and dates without a year name no date (they follow the narrative, not the cutoff), and the
grounding context leaves the audited fields out (a sentence of the facts would otherwise share
the case's subject with itself). A question asserts nothing and is skipped; HTML is read as its
text (a date in an attribute is not text).

Findings, one row per sentence the verifier dates after the cutoff or finds stating a ruling
on the instance (:data:`AUDIT_COLUMNS`): such a ruling states the outcome only when the text
dates it after the cutoff (the input narrates the case's history up to the question, so a ruling
it recounts is an earlier proceeding: a prior round, a stay, a precedent), and is recorded as an
``earlier_event`` otherwise. Flagging findings are summarised on the instance in the
``input_audit`` column (a JSON list, ``[]`` when clean); an instance whose input states its own
outcome is excluded (reason ``input_states_outcome``). A task may add checks across instances
(:meth:`~anachron.tasks.base.Task.audit_across`: the forecast task's answers found in other
questions of the same question set).
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any, Iterable

import pandas as pd

from anachron.sources.html_text import html_to_text
from anachron.tables import AUDIT_COLUMN
from anachron.tasks.base import Task, instance_inputs
from anachron.verify.citations import split_sentences
from anachron.verify.layers.grounded import Grounding
from anachron.verify.pipeline import verify_claim

#: One row per finding.
AUDIT_COLUMNS = ["instance_id", "field", "sentence", "kind", "verdict", "layer", "reason", "effective_date"]
#: Finding kinds: a sentence dated after the cutoff; one stating the instance's own outcome;
#: a cross-instance finding (:meth:`~anachron.tasks.base.Task.audit_across`).
KIND_LATER = "later_content"
KIND_OUTCOME = "states_outcome"
#: The instance's own kind of event (a ruling of its court, its question's event) that the text
#: narrates without dating it after the cutoff: an earlier occurrence (a prior round, a stay, a
#: precedent), recorded and counted but not flagged.
KIND_EARLIER = "earlier_event"
#: Kinds that do not flag an instance (every other kind does: its ``input_audit`` column).
INFO_KINDS = frozenset({KIND_EARLIER})
#: Exclusion reason of an instance whose input states its outcome.
REASON_STATES_OUTCOME = "input_states_outcome"
#: Layers the audit runs (the corpus is built after the datasets).
AUDIT_LAYERS = ("grounded", "rules")
#: Longest sentence audited (characters): longer "sentences" are tables or lists, cut here.
MAX_SENTENCE_CHARS = 2000


def _text(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        return ""
    return html_to_text(value) if "<" in value and ">" in value else value


def input_sentences(task: Task, row: pd.Series | dict[str, Any]) -> Iterable[tuple[str, str]]:
    """``(field, sentence)`` for each declarative sentence of the instance's audited input fields."""
    inputs = instance_inputs(row)
    for field in task.audit_fields:
        for sentence in split_sentences(_text(inputs.get(field))):
            sentence = sentence.strip()
            if sentence.endswith("?") or len(sentence.split()) < 3:
                continue
            yield field, sentence[:MAX_SENTENCE_CHARS]


def audit_instances(
    task: Task, instances: pd.DataFrame, grounding: Grounding | None, *, leak_on_same_day: bool = False
) -> pd.DataFrame:
    """Findings of the input audit over ``instances`` (:data:`AUDIT_COLUMNS`, one row per finding).

    Args:
        task: the instances' task (its :attr:`~anachron.tasks.base.Task.audit_fields` and
            :meth:`~anachron.tasks.base.Task.grounding_context`).
        instances: the task's instance table (``instance_id``, ``cutoff_date``, ``inputs``, ...).
        grounding: the task's grounded checks, or None (rules alone).
        leak_on_same_day: a sentence dated on the cutoff day counts as later too.

    Returns:
        One row per sentence dated after the cutoff (kind ``later_content``) or stating the
        instance's outcome (``states_outcome``), then the task's cross-instance findings.
    """
    rows: list[dict[str, Any]] = []
    layers = AUDIT_LAYERS if grounding is not None else ("rules",)
    for _, row in instances.iterrows():
        cutoff = dt.date.fromisoformat(str(row["cutoff_date"])[:10])
        # the audited text is not evidence of its own subject: the context leaves it out
        context = {k: v for k, v in task.grounding_context(row).items() if k not in task.audit_fields}
        for field, sentence in input_sentences(task, row):
            own = grounding.check(sentence, {**context, "declared_date": None}) if grounding is not None else None
            if own is not None and own.outcome:
                # a ruling the text narrates is an earlier proceeding (a prior round, a stay, a
                # precedent) unless the text itself dates it after the cutoff
                out = verify_claim(sentence, None, cutoff, layers=("rules",), leak_on_same_day=leak_on_same_day, as_of_cutoff=False)
                kind = KIND_OUTCOME if out["verdict"] == "leaked" else KIND_EARLIER
                out = {**out, "reason": f"{own.reason}; {out['reason']}"}
            else:
                out = verify_claim(
                    sentence,
                    None,
                    cutoff,
                    instance=context,
                    grounding=grounding,
                    layers=layers,
                    leak_on_same_day=leak_on_same_day,
                    as_of_cutoff=False,
                )
                if out["verdict"] != "leaked":
                    continue
                kind = KIND_LATER
            rows.append(
                {
                    "instance_id": row["instance_id"],
                    "field": field,
                    "sentence": sentence,
                    "kind": kind,
                    "verdict": out["verdict"],
                    "layer": out["layer"],
                    "reason": out["reason"],
                    "effective_date": out["effective_date"],
                }
            )
    across = task.audit_across(instances)
    frame = pd.DataFrame(rows + list(across), columns=AUDIT_COLUMNS)
    return frame.astype({c: "object" for c in AUDIT_COLUMNS})


def apply_audit(
    instances: pd.DataFrame, exclusions: pd.DataFrame, findings: pd.DataFrame
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The instance table with its ``input_audit`` column, and the exclusions with the instances
    whose input states their outcome (reason ``input_states_outcome``) appended.

    ``input_audit`` is a JSON list of ``{field, kind, sentence, reason}`` per finding (sentences
    cut to 300 characters), ``[]`` for a clean instance.
    """
    by_id: dict[str, list[dict[str, Any]]] = {}
    for f in findings.to_dict("records"):
        if f["kind"] in INFO_KINDS:
            continue
        by_id.setdefault(str(f["instance_id"]), []).append(
            {"field": f["field"], "kind": f["kind"], "sentence": str(f["sentence"])[:300], "reason": f["reason"]}
        )
    out = instances.copy()
    out[AUDIT_COLUMN] = [json.dumps(by_id.get(str(i), []), ensure_ascii=False) for i in out["instance_id"]]
    states = {i for i, fs in by_id.items() if any(f["kind"] == KIND_OUTCOME for f in fs)}
    if not states:
        return out.reset_index(drop=True), exclusions
    dropped = out[out["instance_id"].astype(str).isin(states)]
    extra = pd.DataFrame(
        {
            "instance_id": dropped["instance_id"].tolist(),
            "reason": REASON_STATES_OUTCOME,
            "detail": [
                "input states the outcome: "
                + next(f["sentence"] for f in by_id[str(i)] if f["kind"] == KIND_OUTCOME)[:200]
                for i in dropped["instance_id"]
            ],
        }
    )
    excl = pd.concat([exclusions, extra], ignore_index=True) if len(exclusions) else extra
    return out[~out["instance_id"].astype(str).isin(states)].reset_index(drop=True), excl
