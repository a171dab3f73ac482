"""Report table ``control``: OLR and strict OLR on the control split per run, and each task's
pooled floor, against the control OLR the TEMPO paper reports (App. G.5;
docs/metrics.md#control-floor)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from anachron.report.render import TableData, as_count, fmt_ci
from anachron.report.tables.base import ReportTable, block_starts, label
from anachron.tables import MAIN_TABLE_SELECT
from anachron.verify.calibration.evaluate import PAPER_CONTROL_OLR

if TYPE_CHECKING:
    import duckdb

_PAPER_LO, _PAPER_HI = PAPER_CONTROL_OLR

CONTROL_SQL = f"""
WITH m AS ({MAIN_TABLE_SELECT}),
runs AS (
  SELECT task, method, model, 'run' AS scope, olr_n AS n, olr, olr_ci_low, olr_ci_high,
         olr_strict, olr_strict_ci_low, olr_strict_ci_high
  FROM m WHERE split = 'control'
),
pooled AS (
  SELECT task, CAST(NULL AS VARCHAR) AS method, CAST(NULL AS VARCHAR) AS model, 'pooled' AS scope,
         count(olr) AS n, avg(olr) AS olr, avg(olr_strict) AS olr_strict,
         count(DISTINCT (method, model)) AS n_runs
  FROM instance_scores WHERE split = 'control' AND olr IS NOT NULL
  GROUP BY task
)
SELECT *,
       CASE WHEN olr IS NULL THEN NULL WHEN olr > {_PAPER_HI!r} THEN 'above'
            WHEN olr < {_PAPER_LO!r} THEN 'below' ELSE 'within' END AS vs_paper
FROM (SELECT * FROM runs UNION ALL BY NAME SELECT * FROM pooled)
ORDER BY task, scope = 'pooled', method, model
"""


def _format_control(rows: pd.DataFrame, con: duckdb.DuckDBPyConnection) -> TableData:
    out = []
    for r in rows.itertuples(index=False):
        pooled = r.scope == "pooled"
        out.append({
            "Task": r.task,
            "Method": f"all ({as_count(r.n_runs)} run{'s' if as_count(r.n_runs) != 1 else ''})" if pooled else r.method,
            "Model": "pooled" if pooled else r.model,
            "n (OLR)": as_count(r.n),
            "control OLR % [95% CI]": fmt_ci(r.olr, r.olr_ci_low, r.olr_ci_high, pct=True),
            "strict OLR % [95% CI]": fmt_ci(r.olr_strict, r.olr_strict_ci_low, r.olr_strict_ci_high, pct=True),
            f"vs paper {100 * _PAPER_LO:.1f}–{100 * _PAPER_HI:.1f}%": label(r.vs_paper),
        })
    bold = frozenset((i, "control OLR % [95% CI]") for i, s in enumerate(rows["scope"]) if s == "pooled")
    return TableData(frame=pd.DataFrame(out), n_keys=3, bold=bold, blocks=block_starts(rows, ["task"]))


TABLE = ReportTable(
    name="control",
    title="Control-group OLR: the verifier's false-positive floor",
    note=(
        "Control instances are dated after every configured model's knowledge cutoff, so no model can know "
        "their outcome and every evidence claim the verifier calls leaked there is a false positive (or a "
        "model mis-dating an older fact): the control OLR is the floor the evaluation OLR is read against. "
        "Per task × method × model: OLR and strict OLR (undated and straddling claims counted as leaked) on "
        "the control split, 95% percentile bootstrap CI over instances, n the instances with a parsed claim. "
        "The bold row per task pools every run's control instances (mean over run × instance; no CI). "
        f"The TEMPO paper reports a control OLR of {100 * _PAPER_LO:.1f}–{100 * _PAPER_HI:.1f}% (App. G.5); "
        "the last column places each value within, above or below that range."
    ),
    sql=CONTROL_SQL,
    requires={"metrics": ("task", "method", "model", "split", "metric", "value", "ci_low", "ci_high", "n"),
              "instance_scores": ("task", "method", "model", "split", "olr", "olr_strict")},
    empty="no scored control instance: add `control` to `run.splits` (the control split is the false-positive floor)",
    format=_format_control,
)
