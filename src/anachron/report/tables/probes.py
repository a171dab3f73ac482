"""Report table ``probes``: leakage-adjusted Perf and the counterfactual probes per task x method x
model x split (docs/metrics.md#leakage-adjusted-perf, docs/metrics.md#probes).

Every number is an aggregate of ``metrics`` (the CIs are the bootstrap intervals and the p-values
the exact sign tests stored there at load time, :mod:`anachron.metrics.probes`); the SQL sets them
side by side, one row per probed run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from anachron.frames import is_na
from anachron.report.render import TableData, as_count, fmt_ci
from anachron.report.tables.base import ReportTable, block_starts

if TYPE_CHECKING:
    import duckdb

#: Metrics the table shows (value, CI and n of each).
_METRICS = ("perf", "perf_clean", "olr", "neutered_perf", "neutered_gap", "neutered_gap_p", "reid_rate", "neutered_skipped",
            "shift_change_rate", "shift_perf", "shift_perf_change", "shift_perf_change_p", "shift_olr", "shift_skipped")

_COLUMNS = ",\n       ".join(
    f"max(value) FILTER (WHERE metric = '{m}') AS {m}, max(ci_low) FILTER (WHERE metric = '{m}') AS {m}_lo, "
    f"max(ci_high) FILTER (WHERE metric = '{m}') AS {m}_hi, max(n) FILTER (WHERE metric = '{m}') AS {m}_n"
    for m in _METRICS
)

PROBES_SQL = f"""
WITH probed AS (
  SELECT DISTINCT task, method, model, split FROM metrics
  WHERE metric IN ('neutered_gap', 'shift_change_rate', 'neutered_skipped', 'shift_skipped')
)
SELECT m.task, m.method, m.model, m.split,
       {_COLUMNS}
FROM metrics AS m JOIN probed USING (task, method, model, split)
GROUP BY m.task, m.method, m.model, m.split
ORDER BY m.task, m.split, m.method, m.model
"""


def _p(v: object) -> str:
    return "–" if is_na(v) else f"{float(v):.3f}"


def _with_n(value: object, lo: object, hi: object, n: object = None, p: object = None, *, pct: bool = False) -> str:
    """A value, its n and p, then its CI ("0.300 (12; p 0.039) [0.100, 0.500]"): the CI last, so the
    HTML puts it on a line of its own; "–" for a missing value."""
    cell = fmt_ci(value, pct=pct)
    if cell == "–":
        return cell
    parts = ([] if n is None or is_na(n) else [str(as_count(n))]) + ([] if p is None or is_na(p) else [f"p {_p(p)}"])
    if parts:
        cell += f" ({'; '.join(parts)})"
    ci = fmt_ci(value, lo, hi, pct=pct)
    return cell + ci[len(fmt_ci(value, pct=pct)):]


def _skipped(skipped: object, n: object) -> str:
    return "–" if is_na(skipped) else f"{as_count(skipped)}/{as_count(n)}"


def _format(rows: pd.DataFrame, con: duckdb.DuckDBPyConnection) -> TableData:
    out = []
    for r in rows.itertuples(index=False):
        out.append({
            "Task": r.task, "Method": r.method, "Model": r.model, "Split": r.split,
            "Perf (n)": _with_n(r.perf, r.perf_lo, r.perf_hi, r.perf_n),
            "perf_clean (n)": _with_n(r.perf_clean, r.perf_clean_lo, r.perf_clean_hi, r.perf_clean_n),
            "neutered Perf": _with_n(r.neutered_perf, r.neutered_perf_lo, r.neutered_perf_hi),
            "gap Perf − neutered (n; p)": _with_n(r.neutered_gap, r.neutered_gap_lo, r.neutered_gap_hi, r.neutered_gap_n,
                                                 r.neutered_gap_p),
            "re-identified %": _with_n(r.reid_rate, r.reid_rate_lo, r.reid_rate_hi, pct=True),
            "shift: changed % (n)": _with_n(r.shift_change_rate, r.shift_change_rate_lo, r.shift_change_rate_hi,
                                            r.shift_change_rate_n, pct=True),
            "shift: ΔPerf (p)": _with_n(r.shift_perf_change, r.shift_perf_change_lo, r.shift_perf_change_hi, None,
                                        r.shift_perf_change_p),
            "OLR % → shifted": f"{fmt_ci(r.olr, pct=True)} → {fmt_ci(r.shift_olr, pct=True)}",
            "skipped (neutered, shift)": f"{_skipped(r.neutered_skipped, r.neutered_skipped_n)}, "
                                         f"{_skipped(r.shift_skipped, r.shift_skipped_n)}",
        })
    return TableData(frame=pd.DataFrame(out), n_keys=4, blocks=block_starts(rows, ["task", "split"]))


TABLE = ReportTable(
    name="probes",
    title="Probes: leakage-adjusted Perf, entity neutering, date shift",
    note=(
        "One row per probed task × method × model × split (config key `probes`). Perf: the method's own answers "
        "(all of the run's, n (Perf)); perf_clean: their Perf with each leaked answer asked again without its leaked "
        "evidence (main table; the perf_clean sample). The probe columns are over the probe's own, smaller sample: "
        "the gap pairs each instance's two answers. "
        "Neutered Perf: the same method on the same instances with the entities anonymised by the task "
        "(\"Company A\", \"the player\", \"Petitioner\"); gap = Perf − neutered Perf over the instances both "
        "answered, a paired bootstrap 95% CI and an exact sign-test p: an upper bound on what knowing the entity "
        "is worth, look-ahead included (Glasserman & Lin, arXiv 2309.17322). Re-identified: share of neutered "
        "answers that still name a real entity (the task's own name forms), where masking failed. Shift: the "
        "same instances with today's date and the cutoff moved earlier (probes.shift_days), everything else "
        "byte-identical; changed = share of predictions that differ, ΔPerf = shifted − raw Perf (paired); OLR of "
        "the shifted answers is verified against the shifted cutoff. Skipped: sampled instances the probe could "
        "not be built for, of those sampled, with a reason per instance in `probe_scores` (docs/metrics.md#probes)."
    ),
    sql=PROBES_SQL,
    requires={"metrics": ("task", "method", "model", "split", "metric", "value", "ci_low", "ci_high", "n")},
    empty="no probe run: config key `probes.methods` is empty, or no probe run has finished",
    format=_format,
)
