"""Claim attributions of a run from model calls on claim coalitions (Shapley-DCLR; docs/metrics.md#shapley-dclr).

For an instance with claims ``c_1..c_n`` (evidence and reasoning claims of the run's final
output, :mod:`anachron.verify.pipeline`), the value of a coalition ``S`` is the task score
(Perf) of the model's prediction when it is given the task input and only the claims in ``S``,
in a closed world (:func:`anachron.methods.supervision.prompts.closed_world_messages`, prediction only).
Shapley values ``phi_i`` of that game (exact for small ``n``, Leverage SHAP beyond, within a
per-instance budget of model calls; the pure estimators of :mod:`anachron.metrics.shapley`) weight
each claim's leakage indicator: Shapley-DCLR = sum |phi_i| l_i / sum |phi_i|; Top-K = share of the K
largest-|phi| claims that leaked (TimeSPEC paper §4.2, Eq. 4 and Eq. 7).

Value calls ask for the prediction alone, and their schema is tightened where a grammar can do
it: a probability is chosen from a 0.05 grid (an enum every structured-output engine enforces),
and a ranking with a repeated or missing item is repaired (first occurrences kept, missing items
appended in the listed order) before it is scored. A coalition whose answer still does not give
a valid prediction gets the mean value of that instance's parsed coalitions (0 when none
parsed); their number is recorded (``n_failed``).
"""

from __future__ import annotations

import logging
from typing import Any, Callable

import numpy as np
import pandas as pd

from anachron.llm.client import LLMClient
from anachron.llm.decode import decode_json
from anachron.llm.types import ChatRequest
from anachron.methods.supervision.prompts import closed_world_messages
from anachron.metrics.shapley import TOP_K, exact_shapley, shapley_dclr, shapley_values, top_k_leak
from anachron.progress import track
from anachron.tables import PHI_COLUMNS, SHAPLEY_COLUMNS
from anachron.tasks.base import Task

log = logging.getLogger(__name__)


#: The probability grid of value calls (an enum, which every structured-output engine enforces).
PROBABILITY_GRID = [round(0.05 * k, 2) for k in range(21)]


def value_prediction_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The task's prediction schema for value calls: a [0, 1] number becomes :data:`PROBABILITY_GRID`."""
    if schema.get("type") == "number" and schema.get("minimum") == 0 and schema.get("maximum") == 1:
        return {"type": "number", "enum": PROBABILITY_GRID}
    return schema


def repair_ranking(prediction: Any, schema: dict[str, Any]) -> Any:
    """A ranking with repeats removed and missing items appended in the schema's order.

    Applies only to array predictions whose items are an ``enum`` (the stock ranking); anything
    else is returned unchanged.
    """
    items = (schema.get("items") or {}).get("enum") if schema.get("type") == "array" else None
    if not items or not isinstance(prediction, list):
        return prediction
    seen: list[Any] = []
    for x in prediction:
        if x in items and x not in seen:
            seen.append(x)
    return seen + [x for x in items if x not in seen]


def value_request(task: Task, row: pd.Series, facts: list[str], params: dict[str, Any], *, step: str = "shapley") -> ChatRequest:
    """The coalition-value request: closed world over ``facts``, prediction only (``step``: the call
    log's tag; not part of the cache key, so the same closed world asked by another step is a hit)."""
    return ChatRequest(
        messages=closed_world_messages(task, row, facts, prediction_only=True),
        params=params,
        response_schema={
            "type": "object",
            "properties": {"prediction": value_prediction_schema(task.prediction_schema(row))},
            "required": ["prediction"],
        },
        tag={"instance_id": row["instance_id"], "step": step},
    )


def value_score(task: Task, row: pd.Series, text: str) -> float:
    """Perf of the prediction in a value call's answer ``text``, a ranking repaired first
    (:func:`repair_ranking`); NaN when the answer has no prediction or it is invalid."""
    data = decode_json(text, dict).value
    if data is None or "prediction" not in data:
        return float("nan")
    pred = repair_ranking(data["prediction"], task.prediction_schema(row))
    try:
        return float(task.perf(row, task.validate_prediction(row, pred)))
    except (ValueError, TypeError, KeyError):
        return float("nan")


class ModelValue:
    """``v(S)`` for one instance, from cached, concurrent model calls (a batched ValueFn).

    Args:
        task, row: the task and the instance row.
        facts: claim texts, in claim order.
        client: the run's model client.
        params: decoding parameters of the value calls.
    """

    def __init__(self, task: Task, row: pd.Series, facts: list[str], client: LLMClient, params: dict[str, Any],
                 *, step: str = "shapley"):
        self.task, self.row, self.facts, self.client, self.params, self.step = task, row, facts, client, params, step
        self.n_failed = 0
        self.n_calls = 0

    def score(self, text: str) -> float:
        """Perf of the prediction in ``text`` (:func:`value_score`)."""
        return value_score(self.task, self.row, text)

    def __call__(self, masks: np.ndarray) -> np.ndarray:
        masks = np.atleast_2d(np.asarray(masks, dtype=bool))
        reqs = [value_request(self.task, self.row, [f for f, m in zip(self.facts, mask) if m], self.params, step=self.step)
                for mask in masks]
        results = self.client.complete_many(reqs, progress=False)  # counted by shapley_for_run's bar
        self.n_calls += len(reqs)
        vals = np.array([self.score(r.text) if r.ok else np.nan for r in results], dtype=float)
        self.n_failed += int(np.isnan(vals).sum())
        return vals


def impute_failed(value: ModelValue) -> Callable[[np.ndarray], np.ndarray]:
    """Wrap a ModelValue so unparsed coalitions get the mean of parsed ones seen so far (0 if none)."""
    seen: list[float] = []

    def fn(masks: np.ndarray) -> np.ndarray:
        vals = value(masks)
        ok = vals[~np.isnan(vals)]
        seen.extend(ok.tolist())
        fill = float(np.mean(seen)) if seen else 0.0
        return np.where(np.isnan(vals), fill, vals)

    return fn


def shapley_for_run(
    run: pd.DataFrame,
    claims: pd.DataFrame,
    instances: pd.DataFrame,
    task: Task,
    client: LLMClient,
    *,
    params: dict[str, Any],
    budget: int,
    seed: int,
    exact_max: int = 12,
    agreement_max_claims: int = 0,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Shapley values of every claim of every instance of ``run`` that has claims.

    Args:
        run: the run's completions (instances to attribute; filter before calling to sample).
        claims: the run's claims (:data:`anachron.tables.CLAIM_COLUMNS`).
        instances: the task's instance table (indexed or with ``instance_id``).
        task: the task.
        client: the run's model client (cached, concurrent).
        params: decoding parameters of the value calls.
        budget: model calls per instance at most (v(empty) and v(all) included).
        seed: Leverage SHAP sampling seed.
        exact_max: never enumerate exactly beyond this many claims.
        agreement_max_claims: for instances with ``2^n > budget`` and ``n <= agreement_max_claims``,
            also compute exact values and record the mean absolute error of the estimate
            (``exact_mae``); those extra calls are outside the budget and logged apart.

    Returns:
        ``(phi, per_instance)`` with :data:`~anachron.tables.PHI_COLUMNS` and
        :data:`~anachron.tables.SHAPLEY_COLUMNS`.
    """
    inst = instances.set_index("instance_id", drop=False) if "instance_id" in instances.columns else instances
    phi_rows: list[dict[str, Any]] = []
    inst_rows: list[dict[str, Any]] = []
    for r in track(run.itertuples(index=False), "shapley", total=len(run)):
        c = claims[claims["instance_id"] == r.instance_id]
        if not len(c):
            continue
        row = inst.loc[r.instance_id]
        facts = [str(f) for f in c["fact"]]
        leaked = c["leaked"].to_numpy(dtype=bool)
        n = len(facts)
        value = ModelValue(task, row, facts, client, params)
        res = shapley_values(n, impute_failed(value), budget=budget, seed=seed, exact_max=exact_max)
        mae = np.nan
        if res.method == "leverage" and n <= agreement_max_claims:
            exact = exact_shapley(n, impute_failed(ModelValue(task, row, facts, client, params)))
            mae = float(np.mean(np.abs(exact - res.phi)))
        order = np.argsort(-np.abs(res.phi), kind="stable")
        ranks = np.empty(n, dtype=int)
        ranks[order] = np.arange(1, n + 1)
        base = {"task": r.task, "method": r.method, "model": r.model, "split": r.split, "instance_id": r.instance_id}
        for k, cr in enumerate(c.itertuples(index=False)):
            phi_rows.append(
                {**base, "claim_id": cr.claim_id, "source": getattr(cr, "source", "evidence"), "fact": cr.fact,
                 "leaked": bool(leaked[k]), "phi": float(res.phi[k]), "abs_rank": int(ranks[k])}
            )
        inst_rows.append(
            {
                **base,
                "n_claims": n,
                "n_leaked": int(leaked.sum()),
                "estimator": res.method,
                "n_calls": int(res.n_calls),
                "budget": int(budget),
                "n_failed": int(value.n_failed),
                "v_empty": float(res.v_empty),
                "v_all": float(res.v_all),
                "dclr": shapley_dclr(res.phi, leaked),
                **{f"top{k}": top_k_leak(res.phi, leaked, k) for k in TOP_K},
                "exact_mae": mae,
            }
        )
        log.info("%s: n=%d %s calls=%d dclr=%s", r.instance_id, n, res.method, res.n_calls, inst_rows[-1]["dclr"])
    return pd.DataFrame(phi_rows, columns=PHI_COLUMNS), pd.DataFrame(inst_rows, columns=SHAPLEY_COLUMNS)

