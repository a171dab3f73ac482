"""Render the main results table (Markdown and LaTeX) from ``results.duckdb``.

The main table has one row per task x method x model x split with OLR (%),
Perf, Cov (%) and parse rate (%), each with n and the bootstrap CI where it
has one, as in the TEMPO paper's Table 2 (plus the parse rate, which a small
local model needs beside OLR to be read correctly).
"""

from __future__ import annotations

import math

import duckdb
import pandas as pd


def main_table(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """The ``main_table`` view as a DataFrame (empty frame if no metrics)."""
    has_view = con.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_name = 'main_table'"
    ).fetchone()[0]
    if not has_view:
        return pd.DataFrame()
    return con.execute("SELECT * FROM main_table").df()


def _isnan(v: float | None) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def _fmt(v: float | None, lo: float | None = None, hi: float | None = None, *, pct: bool = False) -> str:
    """A value (as a percentage with one decimal, or with three decimals) and its CI."""
    if _isnan(v):
        return "–"
    scale, spec = (100.0, ".1f") if pct else (1.0, ".3f")
    s = format(scale * v, spec)
    if not (_isnan(lo) or _isnan(hi)):
        s += f" [{format(scale * lo, spec)}, {format(scale * hi, spec)}]"
    return s


def format_main(df: pd.DataFrame) -> pd.DataFrame:
    """Human-readable main table: percentages with 95% CIs, Perf with CI, n per metric."""
    rows = []
    for r in df.itertuples(index=False):
        rows.append(
            {
                "Task": r.task,
                "Method": r.method,
                "Model": r.model,
                "Split": r.split,
                "n": int(r.n),
                "OLR % [95% CI]": _fmt(r.olr, r.olr_ci_low, r.olr_ci_high, pct=True),
                "n (OLR)": int(r.olr_n),
                "Perf [95% CI]": _fmt(r.perf, r.perf_ci_low, r.perf_ci_high),
                "n (Perf)": int(r.perf_n),
                "Cov %": _fmt(r.cov, pct=True),
                "Parse %": _fmt(r.parse_rate, pct=True),
            }
        )
    return pd.DataFrame(rows)


def to_markdown(df: pd.DataFrame, title: str, note: str) -> str:
    """A Markdown document: heading, table, note."""
    body = df.to_markdown(index=False) if len(df) else "_no results yet_"
    return f"# {title}\n\n{body}\n\n{note}\n"


def to_latex(df: pd.DataFrame, caption: str, label: str) -> str:
    """A LaTeX ``table`` environment (booktabs) for the same frame."""
    if not len(df):
        return f"% {caption}: no results yet\n"
    esc = df.map(lambda v: str(v).replace("%", r"\%").replace("_", r"\_").replace("–", "--"))
    esc.columns = [str(c).replace("%", r"\%").replace("_", r"\_") for c in df.columns]
    cols = "l" * 4 + "r" * (len(df.columns) - 4)
    lines = [r"\begin{table}[t]", r"\centering", r"\small", rf"\begin{{tabular}}{{{cols}}}", r"\toprule"]
    lines.append(" & ".join(esc.columns) + r" \\")
    lines.append(r"\midrule")
    for row in esc.itertuples(index=False):
        lines.append(" & ".join(row) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", rf"\caption{{{caption}}}", rf"\label{{{label}}}", r"\end{table}"]
    return "\n".join(lines) + "\n"


MAIN_NOTE = (
    "OLR: mean share of evidence claims whose verified effective date is after the instance's cutoff "
    "(instances with at least one parsed claim). Perf: task score in [0, 1] (stock: (Spearman + 1) / 2). "
    "Cov: share of evidence items cited in the reasoning. Parse: share of completions with a valid JSON "
    "answer and prediction. Brackets: 95% percentile bootstrap CI over instances."
)


def enforcement_report(trace_scores: pd.DataFrame) -> str:
    """Markdown "enforcement effect": rag_unrestricted vs rag (date filter on) per task and model.

    TCLR, survivorship and restatement leakage with paired bootstrap CIs and the exact
    sign test (Anachron v0 scorer; DESIGN §6). Without retrieval runs, says so.
    """
    from anachron.metrics.paired import enforcement_markdown, enforcement_table

    if not len(trace_scores) or not {"rag", "rag_unrestricted"} <= set(trace_scores["method"]):
        return (
            "# Enforcement effect\n\nNo paired retrieval runs: add both `rag` and `rag_unrestricted` "
            "to `run.methods` to measure what the date filter removes.\n"
        )
    return enforcement_markdown(enforcement_table(trace_scores))
