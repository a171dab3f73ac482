"""Report table ``main``: OLR, strict OLR, declared-only share, Perf, Cov and parse rate per task x
method x model on every split but ``control``, with 95% CIs and n, the best value of each task x
split block in bold (the TEMPO paper's Table 2 plus the parse rate; definitions: docs/metrics.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from anachron.report.render import TableData, format_main
from anachron.report.tables.base import ReportTable, block_starts
from anachron.tables import MAIN_TABLE_SELECT

if TYPE_CHECKING:
    import duckdb

MAIN_SQL = f"""
WITH m AS ({MAIN_TABLE_SELECT})
SELECT task, split, method, model, n,
       olr, olr_ci_low, olr_ci_high, olr_n, olr_strict, olr_strict_ci_low, olr_strict_ci_high,
       declared_only_rate, declared_only_rate_ci_low, declared_only_rate_ci_high,
       perf, perf_ci_low, perf_ci_high, perf_n, perf_clean, perf_clean_ci_low, perf_clean_ci_high,
       perf_leak_share, perf_leak_share_ci_low, perf_leak_share_ci_high, cov, parse_rate,
       coalesce(olr = min(olr) OVER blk AND min(olr) OVER blk < max(olr) OVER blk, false) AS best_olr,
       coalesce(perf = max(perf) OVER blk AND min(perf) OVER blk < max(perf) OVER blk, false) AS best_perf,
       coalesce(cov = max(cov) OVER blk AND min(cov) OVER blk < max(cov) OVER blk, false) AS best_cov
FROM m
WHERE split <> 'control'
WINDOW blk AS (PARTITION BY task, split)
ORDER BY task, split, method, model
"""

#: Column of the rendered main table -> its "best of the block" flag in the view.
_MAIN_BEST = {"OLR % ↓ [95% CI]": "best_olr", "Perf ↑ [95% CI]": "best_perf", "Cov % ↑": "best_cov"}


def _format_main(rows: pd.DataFrame, con: duckdb.DuckDBPyConnection) -> TableData:
    frame = format_main(rows).rename(columns={"OLR % [95% CI]": "OLR % ↓ [95% CI]", "Perf [95% CI]": "Perf ↑ [95% CI]",
                                              "Cov %": "Cov % ↑"})
    bold = frozenset((i, col) for col, flag in _MAIN_BEST.items() for i in range(len(rows)) if bool(rows[flag].iloc[i]))
    return TableData(frame=frame, n_keys=4, bold=bold, blocks=block_starts(rows, ["task", "split"]))


TABLE = ReportTable(
    name="main",
    title="Main results: leakage, performance, coverage",
    note=(
        "One row per task × method × model on the evaluation split (and any other split except `control`, "
        "whose rows are the control table); probe runs (`<method>@<probe>`) are the probes table's. OLR ↓: mean over instances of the share of evidence claims whose "
        "verified effective date is after the instance's cutoff (instances with at least one parsed claim; "
        "n (OLR) of them); undated and ambiguous claims count as not leaked. Strict OLR: the same with undated "
        "claims and claims whose date straddles the cutoff counted as leaked, an upper bound. Declared-only: "
        "share of evidence claims dated by the model's declared source date alone, pooled over the run's claims. "
        "Perf ↑: task score in [0, 1] of the usable predictions (stock: (Spearman + 1) / 2; n (Perf) of them). "
        "perf_clean: the same answers' Perf when each answer with a leaked evidence claim is asked again for its "
        "prediction in the closed world of its claims that did not leak (answers without one keep their Perf; "
        "on the perf_clean sample); leak share: (Perf - perf_clean) / Perf over those answers, the share of the "
        "score the leaked evidence bought (docs/metrics.md#leakage-adjusted-perf); \u2013 where not computed. "
        "Cov ↑: mean share of evidence items the reasoning cites. Parse: share of the n instances with a valid "
        "answer and prediction. Brackets: 95% percentile bootstrap CI over instances. Bold: the best value of its "
        "block (same task and split): lowest OLR, highest Perf, highest Cov; nothing is bold where the block's "
        "values are all equal. A rule separates the blocks."
    ),
    sql=MAIN_SQL,
    requires={"metrics": ("task", "method", "model", "split", "metric", "value", "ci_low", "ci_high", "n")},
    empty="no scored run on a non-control split: the `metrics` table has no such rows (has any run finished?)",
    format=_format_main,
)
