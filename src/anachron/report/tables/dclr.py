"""Report table ``dclr``: Shapley-DCLR and Top-1/3/5 per task x method x model x split, with the
estimator's budget use and the OLR of the same instances (TimeSPEC paper, Eq. 4;
docs/metrics.md#shapley-dclr, docs/metrics.md#top-k)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from anachron.frames import is_na
from anachron.report.render import TableData, as_count, fmt_ci
from anachron.report.tables.base import ReportTable, block_starts

if TYPE_CHECKING:
    import duckdb

#: Shapley-DCLR metrics of the ``metrics`` table (docs/metrics.md#shapley-dclr).
DCLR_METRICS = ("dclr", "top1", "top3", "top5")
_DCLR_PIVOT = ",\n         ".join(
    f"max({col}) FILTER (WHERE metric = '{m}') AS {m}{suffix}"
    for m in DCLR_METRICS for col, suffix in (("value", ""), ("ci_low", "_ci_low"), ("ci_high", "_ci_high")))

DCLR_SQL = f"""
WITH m AS (
  SELECT task, method, model, split,
         {_DCLR_PIVOT}
  FROM metrics WHERE metric IN {DCLR_METRICS!r}
  GROUP BY task, method, model, split
),
s AS (
  SELECT s.task, s.method, s.model, s.split, count(*) AS n, sum(s.n_claims) AS claims,
         avg(s.n_calls) AS mean_calls, max(s.n_calls) AS max_calls, max(s.budget) AS budget,
         count(*) FILTER (WHERE s.estimator = 'exact') AS n_exact, avg(s.exact_mae) AS exact_mae,
         avg(sc.olr) AS olr
  FROM shapley s LEFT JOIN instance_scores sc
    ON s.task = sc.task AND s.method = sc.method AND s.model = sc.model AND s.instance_id = sc.instance_id
  GROUP BY s.task, s.method, s.model, s.split
)
SELECT s.*, m.* EXCLUDE (task, method, model, split)
FROM s LEFT JOIN m USING (task, method, model, split)
ORDER BY task, method, model, split
"""


def _format_dclr(rows: pd.DataFrame, con: duckdb.DuckDBPyConnection) -> TableData:
    out = []
    for r in rows.itertuples(index=False):
        out.append({
            "Task": r.task, "Method": r.method, "Model": r.model, "Split": r.split,
            "n": as_count(r.n), "claims": as_count(r.claims),
            "DCLR % [95% CI]": fmt_ci(r.dclr, r.dclr_ci_low, r.dclr_ci_high, pct=True),
            "Top-1 % [95% CI]": fmt_ci(r.top1, r.top1_ci_low, r.top1_ci_high, pct=True),
            "Top-3 % [95% CI]": fmt_ci(r.top3, r.top3_ci_low, r.top3_ci_high, pct=True),
            "Top-5 % [95% CI]": fmt_ci(r.top5, r.top5_ci_low, r.top5_ci_high, pct=True),
            "OLR % (same instances)": fmt_ci(r.olr, pct=True),
            "exact / n": f"{as_count(r.n_exact)}/{as_count(r.n)}",
            "calls mean (max) / budget": ("–" if is_na(r.mean_calls) else
                                          f"{r.mean_calls:.1f} ({as_count(r.max_calls)}) / {as_count(r.budget)}"),
            "MAE vs exact": "–" if is_na(r.exact_mae) else f"{r.exact_mae:.4f}",
        })
    return TableData(frame=pd.DataFrame(out), n_keys=4, blocks=block_starts(rows, ["task"]))


TABLE = ReportTable(
    name="dclr",
    title="Shapley-DCLR: leakage among the decision-critical claims",
    note=(
        "Shapley-DCLR: Σ|φ|·leaked / Σ|φ| over an instance's claims, φ the claim's Shapley value on the task "
        "score of the model's closed-world prediction given only a coalition of claims (TimeSPEC paper, Eq. 4); "
        "Top-K: share of the K claims with the largest |φ| that leaked; both averaged over the attributed "
        "instances (n), 95% bootstrap CI. Estimator: exact enumeration when 2^n fits the per-instance budget of "
        "model calls (exact / n), Leverage SHAP otherwise; MAE vs exact: the sampled values' mean absolute error "
        "where both were computed. OLR on the same instances for comparison."
    ),
    sql=DCLR_SQL,
    requires={"shapley": ("task", "method", "model", "split", "instance_id", "n_claims", "estimator", "n_calls",
                          "budget", "exact_mae"),
              "metrics": ("task", "method", "model", "split", "metric", "value", "ci_low", "ci_high"),
              "instance_scores": ("task", "method", "model", "instance_id", "olr")},
    empty="no Shapley attributions: no run in `shapley.tasks` / `shapley.methods` had claims",
    format=_format_dclr,
)
