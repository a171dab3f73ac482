"""Plain-text and Markdown renderings of paired comparisons (:mod:`anachron.metrics.paired`).

:func:`paired_text` is what ``anachron compare`` prints; :func:`enforcement_markdown` renders an
enforcement table computed in Python. ``results/tables/enforcement.md`` is the report table
``enforcement`` (:mod:`anachron.report.tables.enforcement`; Anachron v0 scorer; docs/metrics.md#paired-comparison).
"""

from __future__ import annotations

import math

import pandas as pd

from anachron.metrics.paired import PairedResult
from anachron.report.render import TableData, render_markdown


def paired_text(res: PairedResult, label_a: str = "A", label_b: str = "B", metric: str = "score") -> str:
    """A short plain-text report of ``res`` (one line per quantity)."""
    pct = int(round(res.confidence * 100))

    def f(v: float, sign: bool = False) -> str:
        return "–" if math.isnan(v) else format(v, "+.4f" if sign else ".4f")

    rows = [
        (f"{label_a} mean {metric}", f(res.mean_a)),
        (f"{label_b} mean {metric}", f(res.mean_b)),
        (f"mean difference ({label_b} - {label_a})", f(res.mean_diff, True)),
        (f"{pct}% paired bootstrap CI", f"[{f(res.ci_low, True)}, {f(res.ci_high, True)}]"),
        ("relative reduction", "–" if math.isnan(res.relative_reduction) else f"{res.relative_reduction:.1%}"),
        ("improved / worsened / tied", f"{res.improved} / {res.worsened} / {res.tied}"),
        ("exact sign-test p (two-sided)", format(res.p_value, ".4g")),
    ]
    width = max(len(k) for k, _ in rows)
    head = f"Paired comparison of {metric} (n={res.n}; {'lower' if res.lower_is_better else 'higher'} is better)"
    tail = [f"  ({res.n_undefined} instance(s) without a {metric} value in A or B were left out)"] if res.n_undefined else []
    return "\n".join([head] + [f"  {k.ljust(width)}  {v}" for k, v in rows] + tail) + "\n"


def enforcement_markdown(table: pd.DataFrame, *, confidence: float = 0.95, title: str = "Enforcement effect") -> str:
    """Markdown of an :func:`anachron.metrics.paired.enforcement_table` frame (heading, table, note;
    "No data" when it has no row). ``results/tables/enforcement.md`` is the report table
    ``enforcement`` (:mod:`anachron.report.tables.enforcement`), which computes the same statistics in SQL."""
    from anachron.report.tables.enforcement import TABLE as ENFORCEMENT, format_enforcement

    data = (TableData(frame=format_enforcement(table, confidence), n_keys=4) if len(table)
            else TableData.no_data(ENFORCEMENT.empty))
    return render_markdown(data, title, ENFORCEMENT.note)
