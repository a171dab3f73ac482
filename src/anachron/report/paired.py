"""Plain-text and Markdown renderings of paired comparisons (:mod:`anachron.metrics.paired`).

:func:`paired_text` is what ``anachron compare`` prints; :func:`enforcement_report` is
``results/tables/enforcement.md``, the enforcement effect of the date filter on retrieval
(Anachron v0 scorer; docs/metrics.md#paired-comparison).
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from anachron.metrics.paired import PairedResult, enforcement_table
from anachron.report.tables import missing, to_markdown


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


ENFORCEMENT_NOTE = (
    "Per task and model, the same instances run with retrieval unrestricted (`rag_unrestricted`) and with "
    "a hard date filter at the cutoff (`rag`). TCLR: share of an instance's search calls that returned or "
    "consumed a document published after the cutoff (an instance without a search call counts 0). "
    "Survivorship: share of the calls returning an entity-bearing document that returned an entity not "
    "point-in-time valid at the cutoff (not yet listed or already delisted); a date filter does not remove "
    "it. Restatement: share of calls returning a post-cutoff revision of an earlier record (consumed or cut "
    "from the prompt by the token budget). Δ = enforced − "
    "unrestricted (negative: the filter removed leakage), mean over paired instances with a paired "
    "percentile bootstrap CI; p: exact two-sided sign test over non-tied instances; "
    "improved / worsened / tied: instances whose rate fell / rose / stayed under enforcement; relative "
    "reduction: (unrestricted − enforced) / unrestricted. Survivorship pairs only instances with an "
    "entity-bearing call in both modes."
)


def _num(v: Any, spec: str = ".3f") -> str:
    return "–" if missing(v) else format(v, spec)


def format_enforcement(table: pd.DataFrame, confidence: float = 0.95) -> pd.DataFrame:
    """Human-readable enforcement table: one row per task x model x split x metric."""
    pct = int(round(confidence * 100))
    rows = []
    for r in table.itertuples(index=False):
        ci = f"[{_num(r.ci_low, '+.3f')}, {_num(r.ci_high, '+.3f')}]"
        status = getattr(r, "status", "ok")
        rows.append(
            {
                "Task": r.task,
                "Model": r.model,
                "Split": r.split,
                "Metric": r.metric,
                "n": int(r.n),
                "Unrestricted": _num(r.unrestricted),
                "Enforced": _num(r.enforced),
                f"Δ [{pct}% CI]": f"{_num(r.diff, '+.3f')} {ci}" if status == "ok" else f"not compared: {status}",
                "Relative reduction": _num(getattr(r, "relative_reduction", float("nan")), ".1%"),
                "Sign test p": _num(r.p_value, ".3g"),
                "Improved / worsened / tied": f"{r.improved} / {r.worsened} / {r.tied}",
            }
        )
    return pd.DataFrame(rows)


def enforcement_markdown(table: pd.DataFrame, *, confidence: float = 0.95, title: str = "Enforcement effect") -> str:
    """The Markdown document for ``results/tables/enforcement.md`` (heading, table, note)."""
    return to_markdown(format_enforcement(table, confidence), title, ENFORCEMENT_NOTE)


def enforcement_report(trace_scores: pd.DataFrame) -> str:
    """Markdown "enforcement effect": rag_unrestricted vs rag (date filter on) per task and model.

    TCLR, survivorship and restatement leakage with paired bootstrap CIs and the exact
    sign test (Anachron v0 scorer; docs/metrics.md#paired-comparison). Without retrieval runs, says so.
    """
    if not len(trace_scores) or not {"rag", "rag_unrestricted"} <= set(trace_scores["method"]):
        return (
            "# Enforcement effect\n\nNo paired retrieval runs: add both `rag` and `rag_unrestricted` "
            "to `run.methods` to measure what the date filter removes.\n"
        )
    return enforcement_markdown(enforcement_table(trace_scores))
