"""Render the main results table (Markdown and LaTeX) from ``results.duckdb``, and the Shapley-DCLR table.

The main table has one row per task x method x model x split with OLR (%),
Perf, Cov (%) and parse rate (%), each with n and the bootstrap CI where it
has one, as in the TEMPO paper's Table 2 (plus the parse rate, which a small
local model needs beside OLR to be read correctly); beside OLR, the strict OLR
(undated and ambiguous claims counted as leaked, an upper bound) and the share of
claims dated by the model's declared date alone. The other reports:
:mod:`anachron.report.calibration`, :mod:`anachron.report.paired`,
:mod:`anachron.report.datasets`.
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


def missing(v: float | None) -> bool:
    """True for None and NaN (a value a rendered cell shows as a dash or "n/a")."""
    return v is None or (isinstance(v, float) and math.isnan(v))


def _fmt(v: float | None, lo: float | None = None, hi: float | None = None, *, pct: bool = False) -> str:
    """A value (as a percentage with one decimal, or with three decimals) and its CI."""
    if missing(v):
        return "–"
    scale, spec = (100.0, ".1f") if pct else (1.0, ".3f")
    s = format(scale * v, spec)
    if not (missing(lo) or missing(hi)):
        s += f" [{format(scale * lo, spec)}, {format(scale * hi, spec)}]"
    return s


def _count(v: object) -> int:
    """A count column's value as an int; 0 where the view has none (a run with trace metrics only)."""
    return 0 if v is None or pd.isna(v) else int(v)


def format_main(df: pd.DataFrame) -> pd.DataFrame:
    """Human-readable main table: percentages with 95% CIs, Perf with CI, n per metric (0 where a
    metric is missing)."""
    rows = []
    for r in df.itertuples(index=False):
        rows.append(
            {
                "Task": r.task,
                "Method": r.method,
                "Model": r.model,
                "Split": r.split,
                "n": _count(r.n),
                "OLR % [95% CI]": _fmt(r.olr, r.olr_ci_low, r.olr_ci_high, pct=True),
                "n (OLR)": _count(r.olr_n),
                "strict OLR % [95% CI]": _fmt(r.olr_strict, r.olr_strict_ci_low, r.olr_strict_ci_high, pct=True),
                "declared-only % [95% CI]": _fmt(
                    r.declared_only_rate, r.declared_only_rate_ci_low, r.declared_only_rate_ci_high, pct=True
                ),
                "Perf [95% CI]": _fmt(r.perf, r.perf_ci_low, r.perf_ci_high),
                "n (Perf)": _count(r.perf_n),
                "Cov %": _fmt(r.cov, pct=True),
                "Parse %": _fmt(r.parse_rate, pct=True),
            }
        )
    return pd.DataFrame(rows)


def frame_text(df: pd.DataFrame, fmt: str) -> str:
    """A query result as the ``anachron`` command prints it: ``csv``, ``json`` (records) or a Markdown table."""
    if fmt == "csv":
        return df.to_csv(index=False)
    if fmt == "json":
        return df.to_json(orient="records", date_format="iso", indent=2) + "\n"
    return (df.to_markdown(index=False) if len(df) else "(no rows)") + "\n"


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
    "(instances with at least one parsed claim); undated and ambiguous claims count as not leaked. "
    "Strict OLR: the same with undated claims and claims whose date straddles the cutoff (ambiguous) "
    "counted as leaked, an upper bound. Declared-only: share of evidence claims whose date rests on the "
    "model's declared source_date alone (no date in the text, no grounded or corpus evidence), pooled over "
    "the run's claims: how much of a clean score is unverified. Perf: task score in [0, 1] (stock: (Spearman + 1) / 2). "
    "Cov: share of evidence items cited in the reasoning. Parse: share of completions with a valid JSON "
    "answer and prediction. Brackets: 95% percentile bootstrap CI over instances."
)


DCLR_NOTE = (
    "Shapley-DCLR: Σ|φ|·leaked / Σ|φ| over an instance's claims, φ the claim's Shapley value on the task "
    "score of the model's closed-world prediction given only a coalition of claims (TimeSPEC paper, Eq. 4); "
    "Top-K: share of the K claims with the largest |φ| that leaked; both averaged over instances, 95% "
    "bootstrap CI. Estimator: exact enumeration when 2^n fits the per-instance budget of model calls, "
    "Leverage SHAP otherwise. OLR on the same instances is shown for comparison."
)


def dclr_table(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """Shapley-DCLR and Top-1/3/5 per task x method x model x split, with estimator and call counts."""
    n = con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = 'shapley'").fetchone()[0]
    if not n:
        return pd.DataFrame()
    metrics = con.execute(
        "SELECT task, method, model, split, metric, value, ci_low, ci_high, n FROM metrics "
        "WHERE metric IN ('dclr', 'top1', 'top3', 'top5')"
    ).df()
    calls = con.execute(
        """SELECT s.task, s.method, s.model, s.split, count(*) AS instances, sum(s.n_claims) AS claims,
                  avg(s.n_calls) AS mean_calls, max(s.n_calls) AS max_calls, max(s.budget) AS budget,
                  sum(CASE WHEN s.estimator = 'exact' THEN 1 ELSE 0 END) AS n_exact,
                  avg(s.exact_mae) AS exact_mae, avg(sc.olr) AS olr
           FROM shapley s LEFT JOIN instance_scores sc
             ON s.task = sc.task AND s.method = sc.method AND s.model = sc.model AND s.instance_id = sc.instance_id
           GROUP BY ALL ORDER BY ALL"""
    ).df()
    rows = []
    for r in calls.itertuples(index=False):
        m = metrics[(metrics.task == r.task) & (metrics.method == r.method) & (metrics.model == r.model) & (metrics.split == r.split)]
        get = {x.metric: x for x in m.itertuples(index=False)}

        def cell(k: str) -> str:
            x = get.get(k)
            return _fmt(x.value, x.ci_low, x.ci_high, pct=True) if x is not None else "–"

        rows.append(
            {
                "Task": r.task, "Method": r.method, "Model": r.model, "Split": r.split,
                "n": int(r.instances), "claims": int(r.claims),
                "DCLR % [95% CI]": cell("dclr"), "Top-1 %": cell("top1"), "Top-3 %": cell("top3"), "Top-5 %": cell("top5"),
                "OLR %": _fmt(r.olr, pct=True),
                "exact / n": f"{int(r.n_exact)}/{int(r.instances)}",
                "calls mean (max) / budget": f"{r.mean_calls:.1f} ({int(r.max_calls)}) / {int(r.budget)}",
                "MAE vs exact": "–" if missing(r.exact_mae) else f"{r.exact_mae:.4f}",
            }
        )
    return pd.DataFrame(rows)


def dclr_report(con: duckdb.DuckDBPyConnection) -> str:
    """``results/tables/dclr.md``: the Shapley-DCLR table, or a note when nothing was attributed."""
    table = dclr_table(con)
    if not len(table):
        return "# Shapley-DCLR\n\nNo Shapley attributions: no run in `shapley.tasks` / `shapley.methods` had claims.\n"
    return to_markdown(table, "Shapley-DCLR: leakage among the decision-critical claims", DCLR_NOTE)
