"""Score generated completions with the evaluation pipeline, for the TEMPO reward.

Training must be rewarded by what evaluation measures, or the policy learns to please a
different judge. :func:`score_completions` therefore runs the same steps as a method run and
the workflow's ``verify_claims`` and ``score_run`` rules, calling their code, not a copy:

1. parse each text with the task's validator (:func:`anachron.methods.base.parse_result`) and
   flatten it to a run row (:meth:`anachron.methods.base.MethodResult.to_row`);
2. verify every claim (:func:`anachron.verify.pipeline.verify_run`, the deterministic extractor)
   against each instance's :meth:`~anachron.tasks.base.Task.grounding_context`;
3. score per completion (:func:`anachron.metrics.core.instance_scores` with ``task.perf``).

Several completions of one instance (a GRPO group) are scored separately: each gets its own row
key ``"<instance_id>#<position>"`` in the run table, so their claims never mix.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import pandas as pd

from anachron.llm.decode import complete_objects
from anachron.llm.types import ChatResult
from anachron.methods.base import MethodResult, parse_result
from anachron.metrics.core import instance_scores
from anachron.tables import EVIDENCE_USABLE, RUN_COLUMNS
from anachron.tasks.base import Task
from anachron.training.rewards import CompletionScore
from anachron.verify.layers.corpus import CorpusLayer
from anachron.verify.layers.grounded import Grounding
from anachron.verify.pipeline import LAYERS, verify_run

#: Separator of the per-completion row key ``"<instance_id>#<position>"``.
KEY_SEP = "#"


def completion_key(instance_id: str, position: int) -> str:
    """The run-table key of the completion at ``position`` of the batch."""
    return f"{instance_id}{KEY_SEP}{position}"


def score_completions(
    task: Task,
    instances: pd.DataFrame,
    instance_ids: Sequence[str],
    texts: Sequence[str | None],
    finish_reasons: Sequence[str | None] | None = None,
    *,
    grounding: Grounding | None = None,
    layers: tuple[str, ...] = LAYERS,
    corpus: CorpusLayer | None = None,
    leak_on_same_day: bool = False,
    method: str = "tempo",
    model: str = "policy",
) -> tuple[list[CompletionScore], pd.DataFrame]:
    """Score completions exactly as evaluation does (parse, verify, score); never raises on model text.

    Args:
        task: the task (:func:`anachron.tasks.registry.get_task`).
        instances: the task's instance table (``INSTANCE_COLUMNS``) indexed by ``instance_id``.
        instance_ids: the instance each completion answers, aligned with ``texts``; an instance
            may appear any number of times.
        texts: the completions' raw text (None reads as empty).
        finish_reasons: the generation's finish reasons, aligned; ``"length"`` marks a
            completion cut off at the token limit (``overlong``). None: unknown for all.
        grounding: the task's grounded checks (:func:`anachron.verify.pipeline.make_grounding`
            with the task's data files); None builds ``task.make_grounding({})``, the checks
            that need no data file (e.g. legal's decision check, stock's window outcome).
        layers: verifier layers, as the workflow's ``verify.layers`` (``grounded``, ``corpus``,
            ``rules``; ``llm`` needs a client this function does not take).
        corpus: the corpus layer (:func:`anachron.verify.layers.corpus.open_corpus_layer`);
            required when ``layers`` has ``corpus``.
        leak_on_same_day: a claim dated on the cutoff day leaks too (config ``verify.leak_on_same_day``).
        method, model: the run-table's ``method`` and ``model`` columns.

    Returns:
        ``(scores, frame)``: one :class:`~anachron.training.rewards.CompletionScore` per
        completion in input order, and the per-completion
        :data:`~anachron.tables.SCORE_COLUMNS` frame of
        :func:`~anachron.metrics.core.instance_scores` (``instance_id`` the original id) with
        ``completion_index`` (the position in the input), ``leak_count``, ``n_reasoning_words``,
        ``overlong`` and ``finish_reason`` appended: averaged per instance it gives the
        validation OLR / Perf / Cov.

    Raises:
        ValueError: the aligned sequences differ in length, an instance id is not in
            ``instances``, or ``corpus`` is in ``layers`` without a corpus layer (a caller's
            error, not the model's).
    """
    n = len(texts)
    reasons: list[str | None] = list(finish_reasons) if finish_reasons is not None else [None] * n
    if len(instance_ids) != n or len(reasons) != n:
        raise ValueError(f"{len(instance_ids)} instance ids, {n} texts and {len(reasons)} finish reasons: not aligned")
    missing = sorted({str(i) for i in instance_ids} - set(map(str, instances.index)))
    if missing:
        raise ValueError(f"{len(missing)} instance id(s) not in the task's instances, e.g. {missing[:3]}")
    if grounding is None and "grounded" in layers:
        grounding = task.make_grounding({})
    rows: list[dict[str, Any]] = []
    contexts: dict[str, dict[str, Any]] = {}
    instance_contexts: dict[str, dict[str, Any]] = {}
    for pos, (iid, text, reason) in enumerate(zip(instance_ids, texts, reasons)):
        iid = str(iid)
        inst = instances.loc[iid]
        key = completion_key(iid, pos)
        if iid not in instance_contexts:
            instance_contexts[iid] = task.grounding_context(inst)
        contexts[key] = instance_contexts[iid]
        text = text if isinstance(text, str) else ""
        parsed = parse_result(task, inst, ChatResult(text=text, finish_reason=reason))
        result = MethodResult(instance_id=key, completion=text, parsed=parsed, finish_reason=reason)
        rows.append(result.to_row(inst, task=task.name, method=method, model=model))
    run = pd.DataFrame(rows, columns=RUN_COLUMNS)
    claims = verify_run(
        run, contexts, grounding=grounding, layers=tuple(layers), leak_on_same_day=leak_on_same_day, task=task,
        corpus=corpus,
    )
    key_to_iid = {completion_key(str(i), p): str(i) for p, i in enumerate(instance_ids)}
    frame = instance_scores(run, claims, lambda key, prediction: task.perf(instances.loc[key_to_iid[key]], prediction))
    usable = frame["parse_status"].isin(EVIDENCE_USABLE)
    frame["completion_index"] = range(n)
    frame["instance_id"] = [str(i) for i in instance_ids]
    frame["leak_count"] = (frame["n_leaked"] + frame["n_undated"] + frame["n_ambiguous"]).astype(int)
    frame["n_reasoning_words"] = [len((r or "").split()) if u else 0 for r, u in zip(run["reasoning"], usable)]
    frame["overlong"] = [r == "length" for r in reasons]
    frame["finish_reason"] = reasons
    frame["n_recovered"] = [0 if u else len(complete_objects(t, ("fact", "source_date"))) for t, u in zip(run["completion"], usable)]
    scores = [
        CompletionScore(
            instance_id=r.instance_id,
            parse_status=r.parse_status,
            leak_count=int(r.leak_count),
            n_evidence=int(r.n_evidence),
            coverage=0.0 if r.cov is None or math.isnan(r.cov) else float(r.cov),
            reasoning_words=int(r.n_reasoning_words),
            perf=float(r.perf),
            overlong=bool(r.overlong),
            reasoning_leaks=int(r.n_reasoning_leaked),
            n_recovered=int(r.n_recovered),
        )
        for r in frame.itertuples(index=False)
    ]
    return scores, frame
