"""Report table ``cost``: LLM calls, searches, tokens, model seconds and USD per instance, per task x
method x model and by whom the calls were made (the run, the Shapley attribution, the verifier),
with a total row (docs/results.md#cost)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from anachron.frames import is_na
from anachron.report.render import TableData, as_count
from anachron.report.tables.base import ReportTable, block_starts, label
from anachron.store import database_columns

if TYPE_CHECKING:
    import duckdb

#: ``llm_calls.step`` values of the verifier's calls (claim extraction, plausibility layer) and of
#: the Shapley value calls; every other step is a run's own call.
VERIFIER_STEPS = ("extract_claims", "plausibility")
SHAPLEY_STEP = "shapley"

COST_SQL = f"""
WITH calls AS (
  -- cost_usd: NULL for every call of a database written before cost accounting (no such column)
  SELECT * FROM llm_calls UNION ALL BY NAME SELECT CAST(NULL AS DOUBLE) AS cost_usd WHERE false
),
c AS (
  SELECT task, method, model_key AS model,
         CASE WHEN step = '{SHAPLEY_STEP}' THEN 'shapley'
              WHEN step IN {VERIFIER_STEPS!r} THEN 'verifier' ELSE 'run' END AS calls_for,
         coalesce(cache_hit, false) AS cached, prompt_tokens, completion_tokens, latency_s, cost_usd
  FROM calls WHERE method IS NOT NULL
),
agg AS (
  SELECT task, method, model, calls_for, count(*) AS calls,
         count(*) FILTER (WHERE NOT cached) AS calls_made, count(*) FILTER (WHERE cached) AS calls_cached,
         sum(prompt_tokens) AS prompt_tokens, sum(completion_tokens) AS completion_tokens,
         sum(latency_s) AS seconds, sum(cost_usd) AS cost_usd,
         -- 0 (not NULL) when every priced call of the row was a cache hit
         coalesce(sum(cost_usd) FILTER (WHERE NOT cached), CASE WHEN count(cost_usd) > 0 THEN 0.0 END) AS cost_usd_made,
         count(*) FILTER (WHERE cost_usd IS NULL) AS calls_unpriced
  FROM c GROUP BY task, method, model, calls_for
),
run_n AS (SELECT task, method, model, count(*) AS instances FROM completions GROUP BY task, method, model),
verified_n AS (SELECT task, method, count(*) AS instances FROM completions GROUP BY task, method),
attributed_n AS (SELECT task, method, model, count(*) AS instances FROM shapley GROUP BY task, method, model),
searches AS (SELECT task, method, model, count(*) AS searches FROM tool_calls GROUP BY task, method, model),
keys AS (
  SELECT task, method, model, 'run' AS calls_for FROM run_n
  UNION SELECT task, method, model, calls_for FROM agg
),
per_row AS (
  SELECT k.task, k.method, k.model, k.calls_for,
         CASE k.calls_for WHEN 'run' THEN r.instances WHEN 'shapley' THEN a.instances ELSE v.instances END
           AS instances,
         coalesce(g.calls, 0) AS calls, coalesce(g.calls_made, 0) AS calls_made,
         coalesce(g.calls_cached, 0) AS calls_cached,
         CASE WHEN k.calls_for = 'run' THEN coalesce(s.searches, 0) END AS searches,
         g.prompt_tokens, g.completion_tokens, g.seconds, g.cost_usd, g.cost_usd_made,
         coalesce(g.calls_unpriced, 0) AS calls_unpriced
  FROM keys k
  LEFT JOIN agg g ON g.task = k.task AND g.method = k.method AND g.model = k.model AND g.calls_for = k.calls_for
  LEFT JOIN run_n r ON r.task = k.task AND r.method = k.method AND r.model = k.model
  LEFT JOIN attributed_n a ON a.task = k.task AND a.method = k.method AND a.model = k.model
  LEFT JOIN verified_n v ON v.task = k.task AND v.method = k.method
  LEFT JOIN searches s ON s.task = k.task AND s.method = k.method AND s.model = k.model
),
total AS (
  SELECT CAST(NULL AS VARCHAR) AS task, CAST(NULL AS VARCHAR) AS method, CAST(NULL AS VARCHAR) AS model,
         'total' AS calls_for, CAST(NULL AS BIGINT) AS instances,
         sum(calls) AS calls, sum(calls_made) AS calls_made, sum(calls_cached) AS calls_cached,
         sum(searches) AS searches, sum(prompt_tokens) AS prompt_tokens, sum(completion_tokens) AS completion_tokens,
         sum(seconds) AS seconds, sum(cost_usd) AS cost_usd, sum(cost_usd_made) AS cost_usd_made,
         sum(calls_unpriced) AS calls_unpriced
  FROM per_row HAVING count(*) > 0
)
SELECT *,
       calls / instances AS calls_per_instance,
       searches / instances AS searches_per_instance,
       prompt_tokens / instances AS prompt_tokens_per_instance,
       completion_tokens / instances AS completion_tokens_per_instance,
       seconds / instances AS seconds_per_instance,
       cost_usd / instances AS cost_usd_per_instance
FROM (SELECT * FROM per_row UNION ALL BY NAME SELECT * FROM total)
ORDER BY task IS NULL, task, method,
         CASE calls_for WHEN 'run' THEN 0 WHEN 'shapley' THEN 1 WHEN 'verifier' THEN 2 ELSE 3 END, model
"""

_NO_COST_COLUMN = ("Cost n/a: the database has no `cost_usd` column (built before cost accounting); "
                   "re-run load_results")


def _usd(v: object, unpriced: object, calls: object, digits: int) -> str:
    """A dollar amount; "n/a" when no call of the row has a price, "≥ x" when some have none."""
    if is_na(v) or as_count(unpriced) >= max(1, as_count(calls)):
        return "n/a"
    s = f"{float(v):,.{digits}f}"
    return f"≥ {s}" if as_count(unpriced) else s


def _num(v: object, digits: int = 0) -> str:
    return "–" if is_na(v) else f"{float(v):,.{digits}f}"


def _format_cost(rows: pd.DataFrame, con: duckdb.DuckDBPyConnection) -> TableData:
    has_cost = "cost_usd" in database_columns(con).get("llm_calls", set())
    out = []
    for r in rows.itertuples(index=False):
        total = r.calls_for == "total"
        tokens = (0 if is_na(r.prompt_tokens) else r.prompt_tokens) + (0 if is_na(r.completion_tokens) else r.completion_tokens)
        out.append({
            "Task": "Total" if total else r.task, "Method": label(r.method) if not total else "",
            "Model": label(r.model) if not total else "", "Calls for": "" if total else r.calls_for,
            "Instances": "" if total else as_count(r.instances),
            "LLM calls / inst.": _num(r.calls_per_instance, 2),
            "calls made / cached": f"{as_count(r.calls_made)} / {as_count(r.calls_cached)}",
            "searches / inst.": _num(r.searches_per_instance, 2),
            "prompt tok. / inst.": _num(r.prompt_tokens_per_instance),
            "completion tok. / inst.": _num(r.completion_tokens_per_instance),
            "LLM s / inst.": _num(r.seconds_per_instance, 2),
            "USD / inst.": _usd(r.cost_usd_per_instance, r.calls_unpriced, r.calls, 4) if has_cost else "n/a",
            "tokens (all calls)": _num(tokens),
            "USD (all calls)": _usd(r.cost_usd, r.calls_unpriced, r.calls, 2) if has_cost else "n/a",
            "USD spent (calls made)": _usd(r.cost_usd_made, r.calls_unpriced, r.calls, 2) if has_cost else "n/a",
        })
    notes = () if has_cost else (_NO_COST_COLUMN + ".",)
    return TableData(frame=pd.DataFrame(out), n_keys=4, blocks=block_starts(rows, ["task"]), notes=notes)


TABLE = ReportTable(
    name="cost",
    title="Inference cost per instance",
    note=(
        "Per task × method × model, the LLM calls in `llm_calls` by whom they were made: `run` (the method's own "
        "calls: answers, search queries, supervision), `shapley` (value calls of the attribution, per attributed "
        "instance) and `verifier` (claim extraction and the plausibility layer of the verifier model, per instance "
        "of every run of the task × method; the model is the verifier's). Per instance: calls, search calls "
        "(`tool_calls`), prompt and completion tokens as the provider reported them, seconds of model latency "
        "(a cache hit counts its lookup time only) and cost in USD at the configured price per million tokens, "
        "cache hits included at their price: what an instance costs without the cache; the row's tokens and USD "
        "over all its calls beside. Calls made / cached: calls sent to the provider vs answered from the cache; "
        "USD spent: the cost of the calls made (0 when every call was a cache hit). "
        "n/a: no price; ≥: some calls of the row have no price. The last row sums every row."
    ),
    sql=COST_SQL,
    requires={"llm_calls": ("task", "method", "model_key", "step", "cache_hit", "prompt_tokens", "completion_tokens",
                            "latency_s"),
              "completions": ("task", "method", "model"), "shapley": ("task", "method", "model"),
              "tool_calls": ("task", "method", "model")},
    empty="no run and no LLM call in the database",
    format=_format_cost,
)
