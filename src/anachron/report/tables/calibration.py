"""Report table ``calibration``: the verifier's recall on planted leaks and its false-positive rate
on planted clean claims per task and layer set, with Wilson 95% intervals, against the bar of
:mod:`anachron.verify.calibration.evaluate` (docs/verification.md). The long report with every
wording style is :mod:`anachron.report.calibration`."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from anachron.frames import is_na
from anachron.report.render import TableData, as_count, fmt_ci
from anachron.report.tables.base import ReportTable, block_starts
from anachron.verify.calibration.evaluate import FP_MAX, RECALL_MIN

if TYPE_CHECKING:
    import duckdb

CALIBRATION_SQL = f"""
SELECT task, layers, kind, metric, rate, ci_low, ci_high, n_flagged, n, n_undated,
       CASE metric WHEN 'recall' THEN rate >= {RECALL_MIN!r} WHEN 'fp_rate' THEN rate <= {FP_MAX!r} END AS meets_bar
FROM calibration
WHERE style = 'all'
ORDER BY task, layers, metric DESC, kind
"""


def _format_calibration(rows: pd.DataFrame, con: duckdb.DuckDBPyConnection) -> TableData:
    out = []
    for r in rows.itertuples(index=False):
        bar = "–" if is_na(r.meets_bar) else ("meets" if bool(r.meets_bar) else "misses")
        out.append({"Task": r.task, "Layers": r.layers, "Kind": r.kind, "Metric": r.metric,
                    "Rate % [Wilson 95% CI]": fmt_ci(r.rate, r.ci_low, r.ci_high, pct=True),
                    "flagged / n": f"{as_count(r.n_flagged)} / {as_count(r.n)}",
                    "undated": as_count(r.n_undated), "bar": bar})
    bold = frozenset((i, "bar") for i, r in enumerate(rows.itertuples(index=False))
                     if not is_na(r.meets_bar) and not bool(r.meets_bar))
    return TableData(frame=pd.DataFrame(out), n_keys=4, bold=bold, blocks=block_starts(rows, ["task", "layers"]))


TABLE = ReportTable(
    name="calibration",
    title="Verifier calibration on planted claims",
    note=(
        "Claims of known truth planted per task: leaks (kinds `post_cutoff`: a fact dated after the cutoff, "
        "`outcome`: a statement of the outcome; `all_leaks`: both) and clean claims (`pre_cutoff`). Recall: share "
        "of the planted leaks the verifier flags as leaked; fp_rate: share of the clean claims it flags (false "
        "positives). Undated and ambiguous verdicts count as not flagged; undated: how many. Per layer set of "
        "the verifier, every wording style pooled, with the Wilson 95% interval. Bar: recall ≥ "
        f"{100 * RECALL_MIN:.0f}% and false positives ≤ {100 * FP_MAX:.0f}% (point estimates; bold where missed). "
        "calibration.md has the wording styles that miss the bar and the re-worded real claims."
    ),
    sql=CALIBRATION_SQL,
    requires={"calibration": ("task", "layers", "kind", "style", "metric", "rate", "ci_low", "ci_high", "n_flagged",
                              "n", "n_undated")},
    empty="no calibration results: rule calibrate_verifier did not run (or planted no claim)",
    format=_format_calibration,
)
