"""After a run: the estimate (:mod:`anachron.estimate.counting`) beside what ``results.duckdb`` recorded.

:func:`actual_usage` reads the recorded calls, tokens, cost and searches per task x stage x method x
model; :func:`compare` sets them beside an estimate's summary (docs/running.md#estimate).
"""

from __future__ import annotations

from typing import Any, Mapping

import pandas as pd

from anachron.plan import planned_runs
from anachron.store import database_columns
from anachron.cost import call_cost, model_prices


def actual_usage(con: Any, config: Mapping[str, Any]) -> tuple[pd.DataFrame, list[str]]:
    """What a run recorded, per task x stage x method x model: LLM calls, cache hits, tokens, cost
    (``cost_all``: every call; ``cost_spent``: calls that were not cache hits) and search calls.

    A call's stage: ``shapley`` for step ``shapley``; ``verify`` for a call under the verifier's key
    (``verify.model``) in a task x method whose runs do not use that key as their model; else ``run``.
    A database without ``cost_usd`` (an older version) is priced here with the config's prices.

    Returns:
        ``(frame, notes)``.
    """
    notes: list[str] = []
    keys = ["task", "stage", "method", "model_key"]
    tables = database_columns(con)
    empty = pd.DataFrame(columns=["task", "stage", "method", "model", "calls", "cache_hits", "prompt_tokens",
                                  "completion_tokens", "cost_all", "cost_spent", "searches"])
    if "llm_calls" not in tables:
        notes.append("the database has no llm_calls table: no recorded calls to compare with (rebuild it: snakemake --cores 2)")
        return empty, notes
    cols = tables["llm_calls"]
    calls = con.execute(
        "SELECT task, method, model_key, model_name, step, cache_hit, prompt_tokens, completion_tokens"
        + (", cost_usd" if "cost_usd" in cols else "") + " FROM llm_calls").df()
    if "cost_usd" not in cols:
        prices = model_prices(config)
        calls["cost_usd"] = [call_cost(p, c, prices.get(m)) for p, c, m in
                             zip(calls["prompt_tokens"], calls["completion_tokens"], calls["model_name"])]
        notes.append("the database has no llm_calls.cost_usd (an older version): actual cost priced with the config's prices")
    runs = set(planned_runs(config))
    verifier = config["verify"]["model"]

    def stage(r: Any) -> str:
        if r.step == "shapley":
            return "shapley"
        if verifier and r.model_key == verifier and (r.task, r.method, r.model_key) not in runs:
            return "verify"
        return "run"

    calls["stage"] = [stage(r) for r in calls.itertuples(index=False)]
    calls["cost_usd"] = pd.to_numeric(calls["cost_usd"], errors="coerce")
    calls["cost_spent"] = calls["cost_usd"].where(~calls["cache_hit"].astype(bool), 0.0)
    g = calls.groupby(keys, dropna=False)
    out = pd.DataFrame({
        "calls": g.size(),
        "cache_hits": g["cache_hit"].sum(),
        "prompt_tokens": g["prompt_tokens"].sum(min_count=1),
        "completion_tokens": g["completion_tokens"].sum(min_count=1),
        "cost_all": g["cost_usd"].sum(min_count=1),
        "cost_spent": g["cost_spent"].sum(min_count=1),
    }).reset_index().rename(columns={"model_key": "model"})
    if "tool_calls" in tables:
        tools = con.execute("SELECT task, method, model, count(*) AS searches FROM tool_calls GROUP BY ALL").df()
        tools["stage"] = "run"
        out = out.merge(tools, on=["task", "stage", "method", "model"], how="outer")
        out["searches"] = out["searches"].fillna(0)  # recorded calls without a search
    else:
        out["searches"] = float("nan")
        notes.append("the database has no tool_calls table: no recorded searches")
    return out, notes


def compare(summary: pd.DataFrame, actual: pd.DataFrame) -> pd.DataFrame:
    """The estimate beside the actual usage, per task x stage x method x model (``_est`` and
    ``_actual`` columns; ``cost_spent_usd`` and ``cost_all_usd`` for the actual cost)."""
    keys = ["task", "stage", "method", "model"]
    est = summary[keys + ["instances", "calls", "searches", "prompt_tokens", "completion_tokens", "cost_usd"]]
    df = est.merge(actual, on=keys, how="outer", suffixes=("_est", "_actual"))
    df = df.rename(columns={"cost_usd": "cost_usd_est", "cost_all": "cost_all_usd", "cost_spent": "cost_spent_usd"})
    cols = keys + ["instances", "calls_est", "calls_actual", "cache_hits", "searches_est", "searches_actual",
                   "prompt_tokens_est", "prompt_tokens_actual", "completion_tokens_est", "completion_tokens_actual",
                   "cost_usd_est", "cost_spent_usd", "cost_all_usd"]
    for c in cols:
        if c not in df:
            df[c] = float("nan")
    # the estimate's order; recorded rows the config does not plan come last
    rank = {tuple(k): i for i, k in enumerate(summary[keys].itertuples(index=False))}
    df["_o"] = [rank.get(tuple(k), len(rank)) for k in df[keys].itertuples(index=False)]
    return df.sort_values(["_o", *keys], kind="stable").drop(columns="_o")[cols].reset_index(drop=True)
