"""Report table ``training``: per model x task trained with TEMPO, the performance-mode fraction of
the GRPO groups and the validation OLR, strict OLR and Perf at the first and last step and at the
checkpoint kept as best (TEMPO paper §5 and Table 3; docs/results.md#training_log)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from anachron.frames import is_na
from anachron.report.render import TableData, fmt_ci
from anachron.report.tables.base import ReportTable, pct

if TYPE_CHECKING:
    import duckdb

_VAL_POINT = "{'step': step, 'olr': val_olr, 'olr_strict': val_olr_strict, 'perf': val_perf}"

TRAINING_SQL = f"""
WITH g AS (
  SELECT model, task,
         min(step) FILTER (WHERE perf_mode_fraction IS NOT NULL) AS first_step,
         max(step) FILTER (WHERE perf_mode_fraction IS NOT NULL) AS last_step,
         arg_min(perf_mode_fraction, step) FILTER (WHERE perf_mode_fraction IS NOT NULL) AS mode_first,
         arg_max(perf_mode_fraction, step) FILTER (WHERE perf_mode_fraction IS NOT NULL) AS mode_last,
         arg_min({_VAL_POINT}, step) FILTER (WHERE val_n > 0) AS v_first,
         arg_max({_VAL_POINT}, step) FILTER (WHERE val_n > 0) AS v_last,
         arg_max({_VAL_POINT}, step) FILTER (WHERE val_n > 0 AND checkpoint = 'best') AS v_best
  FROM training_log
  GROUP BY model, task
)
SELECT model, task, first_step, last_step, mode_first, mode_last,
       v_first.step AS val_first_step, v_first.olr AS val_olr_first, v_first.olr_strict AS val_olr_strict_first,
       v_first.perf AS val_perf_first,
       v_last.step AS val_last_step, v_last.olr AS val_olr_last, v_last.olr_strict AS val_olr_strict_last,
       v_last.perf AS val_perf_last,
       coalesce(v_best, v_last).step AS best_step, coalesce(v_best, v_last).olr AS val_olr_best,
       coalesce(v_best, v_last).olr_strict AS val_olr_strict_best, coalesce(v_best, v_last).perf AS val_perf_best
FROM g
ORDER BY model, task
"""


def _arrow(a: str, b: str) -> str:
    return f"{a} → {b}"


def _step(v: object) -> str:
    return "–" if is_na(v) else str(int(v))


def _format_training(rows: pd.DataFrame, con: duckdb.DuckDBPyConnection) -> TableData:
    out = []
    for r in rows.itertuples(index=False):
        out.append({
            "Model": r.model, "Task": r.task,
            "train steps": _arrow(_step(r.first_step), _step(r.last_step)),
            "perf-mode fraction": _arrow(fmt_ci(r.mode_first, digits=2), fmt_ci(r.mode_last, digits=2)),
            "val. steps": _arrow(_step(r.val_first_step), _step(r.val_last_step)),
            "val. OLR %": _arrow(pct(r.val_olr_first), pct(r.val_olr_last)),
            "val. strict OLR %": _arrow(pct(r.val_olr_strict_first), pct(r.val_olr_strict_last)),
            "val. Perf": _arrow(fmt_ci(r.val_perf_first), fmt_ci(r.val_perf_last)),
            "best step": _step(r.best_step),
            "best OLR %": pct(r.val_olr_best),
            "best strict OLR %": pct(r.val_olr_strict_best),
            "best Perf": fmt_ci(r.val_perf_best),
        })
    return TableData(frame=pd.DataFrame(out), n_keys=2)


TABLE = ReportTable(
    name="training",
    title="TEMPO training summary",
    note=(
        "Per model × task trained with TEMPO (GRPO; TEMPO paper §5): the fraction of GRPO groups in performance "
        "mode at the first and the last training step (it should rise as leakage falls: TEMPO paper, Table 3), "
        "and the greedy validation OLR, strict OLR and Perf at the first validation (step 0: the base model) and "
        "the last, and at the checkpoint kept as best (lowest validation OLR; the last validation when none had "
        "an OLR). Arrows: first → last."
    ),
    sql=TRAINING_SQL,
    requires={"training_log": ("model", "task", "step", "perf_mode_fraction", "val_n", "val_olr", "val_olr_strict",
                               "val_perf", "checkpoint")},
    empty="TEMPO training did not run (`snakemake tempo`)",
    format=_format_training,
)
