"""The report tables of ``results/tables`` (issue 14): one registry entry per table.

Each :class:`ReportTable` has a name (the file stem of ``results/tables/{name}.md|tex|html`` and
of the DuckDB view ``report_{name}``), a title, a note that defines what its columns mean
(docs/metrics.md), the SELECT that computes its numbers, the tables and columns that SELECT reads,
and a formatter that turns the numbers into the cells of a :class:`~anachron.report.render.TableData`.

One home per number: the SQL computes every number a table shows (means, shares, counts, the best of
a block, per-instance costs) from the database's tables; Python only formats them. The same SELECT
is the view ``report_{name}`` that ``load_results`` creates in ``results.duckdb``
(:func:`report_view_statements`), so ``anachron query "SELECT * FROM report_main"`` shows what the
table shows. The renderer runs the SELECT itself rather than reading the view, so a database built
before the views existed renders the same; a database without a table or column the SELECT needs
renders "No data" with the reason instead (:meth:`ReportTable.build` never raises for bad input).

Exceptions to "all in SQL": the 95% CIs of the main, control and DCLR tables are the bootstrap
intervals stored in ``metrics`` at load time; the enforcement table's paired bootstrap CI and sign
test are computed here from the SQL's per-instance pairs (a resampling has no SQL form).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Mapping, Sequence

import pandas as pd

from anachron.report import TABLE_FORMATS, TABLE_NAMES
from anachron.report.render import (
    TableData,
    as_count,
    fmt_ci,
    format_main,
    missing,
    render_html,
    render_latex,
    render_markdown,
)
from anachron.store import database_columns
from anachron.store.schema import MAIN_TABLE_SELECT
from anachron.verify.calibration.evaluate import FP_MAX, PAPER_CONTROL_OLR, RECALL_MIN

if TYPE_CHECKING:
    import duckdb

log = logging.getLogger(__name__)

#: What to do about a database that lacks a table or column the SQL needs.
REBUILD_HINT = "re-run load_results (`snakemake --cores 2 --forcerun load_results`)"


@dataclass(frozen=True)
class ReportTable:
    """One report table.

    Attributes:
        name: file stem and view suffix (``report_{name}``).
        title: heading / caption start.
        note: what the columns mean, in words (Markdown code spans allowed).
        sql: the SELECT of the view: every number the table shows, one row per table row.
        requires: table -> columns the SELECT reads (checked before it runs, for the no-data reason).
        empty: the reason shown when the SELECT returns no row.
        format: (numbers, connection) -> the cells; the connection is for what SQL cannot compute.
    """

    name: str
    title: str
    note: str
    sql: str
    requires: Mapping[str, tuple[str, ...]]
    empty: str
    format: Callable[[pd.DataFrame, duckdb.DuckDBPyConnection], TableData]

    @property
    def view(self) -> str:
        """The view's name, ``report_{name}``."""
        return f"report_{self.name}"

    def create_view_sql(self) -> str:
        """``CREATE OR REPLACE VIEW report_{name} AS <sql>``."""
        return f"CREATE OR REPLACE VIEW {self.view} AS {self.sql}"

    def missing_input(self, con: duckdb.DuckDBPyConnection) -> str | None:
        """Why the SELECT cannot run on ``con`` (a table or column it reads is absent), or None."""
        have = database_columns(con)
        for table, columns in self.requires.items():
            if table not in have:
                return f"the database has no table `{table}` (built by an older anachron?); {REBUILD_HINT}"
            absent = [c for c in columns if c not in have[table]]
            if absent:
                return (f"table `{table}` has no column {', '.join(f'`{c}`' for c in absent)} "
                        f"(built by an older anachron?); {REBUILD_HINT}")
        return None

    def numbers(self, con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
        """The rows of the SELECT on ``con`` (what the view ``report_{name}`` holds).

        Raises:
            LookupError: a table or column the SELECT needs is absent (the message says which).
            duckdb.Error: the SELECT fails otherwise.
        """
        why = self.missing_input(con)
        if why:
            raise LookupError(why)
        return con.execute(self.sql).df()

    def build(self, con: duckdb.DuckDBPyConnection) -> TableData:
        """The table's cells, or :meth:`TableData.no_data` with the reason; never raises for a
        database that lacks tables, columns or rows."""
        import duckdb

        try:
            rows = self.numbers(con)
        except LookupError as exc:
            return TableData.no_data(str(exc))
        except duckdb.Error as exc:
            return TableData.no_data(f"the query failed on this database ({type(exc).__name__}: "
                                     f"{str(exc).splitlines()[0]}); {REBUILD_HINT}")
        if not len(rows):
            return TableData.no_data(self.empty)
        return self.format(rows, con)


def _blocks(df: pd.DataFrame, keys: list[str]) -> tuple[int, ...]:
    """Row positions where the value of ``keys`` changes (a new block starts)."""
    if not len(df):
        return ()
    k = [tuple(map(str, row)) for row in df[keys].itertuples(index=False)]
    return tuple(i for i in range(1, len(k)) if k[i] != k[i - 1])


def _pct(v: object, digits: int = 1) -> str:
    return "–" if missing(v) else f"{100 * float(v):.{digits}f}"


def _share_count(share: object, n: object) -> str:
    """``"25.0 (1)"``: a share as a percentage and its count."""
    return "–" if missing(share) else f"{_pct(share)} ({as_count(n)})"


def _label(v: object) -> str:
    return "–" if missing(v) else str(v)


# ----------------------------------------------------------------------------- main

MAIN_SQL = f"""
WITH m AS ({MAIN_TABLE_SELECT})
SELECT task, split, method, model, n,
       olr, olr_ci_low, olr_ci_high, olr_n, olr_strict, olr_strict_ci_low, olr_strict_ci_high,
       declared_only_rate, declared_only_rate_ci_low, declared_only_rate_ci_high,
       perf, perf_ci_low, perf_ci_high, perf_n, cov, parse_rate,
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
    return TableData(frame=frame, n_keys=4, bold=bold, blocks=_blocks(rows, ["task", "split"]))


MAIN = ReportTable(
    name="main",
    title="Main results: leakage, performance, coverage",
    note=(
        "One row per task × method × model on the evaluation split (and any other split except `control`, "
        "whose rows are the control table). OLR ↓: mean over instances of the share of evidence claims whose "
        "verified effective date is after the instance's cutoff (instances with at least one parsed claim; "
        "n (OLR) of them); undated and ambiguous claims count as not leaked. Strict OLR: the same with undated "
        "claims and claims whose date straddles the cutoff counted as leaked, an upper bound. Declared-only: "
        "share of evidence claims dated by the model's declared source date alone, pooled over the run's claims. "
        "Perf ↑: task score in [0, 1] of the usable predictions (stock: (Spearman + 1) / 2; n (Perf) of them). "
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

# ----------------------------------------------------------------------------- control

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
            f"vs paper {100 * _PAPER_LO:.1f}–{100 * _PAPER_HI:.1f}%": _label(r.vs_paper),
        })
    bold = frozenset((i, "control OLR % [95% CI]") for i, s in enumerate(rows["scope"]) if s == "pooled")
    return TableData(frame=pd.DataFrame(out), n_keys=3, bold=bold, blocks=_blocks(rows, ["task"]))


CONTROL = ReportTable(
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

# ----------------------------------------------------------------------------- dclr

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
            "calls mean (max) / budget": ("–" if missing(r.mean_calls) else
                                          f"{r.mean_calls:.1f} ({as_count(r.max_calls)}) / {as_count(r.budget)}"),
            "MAE vs exact": "–" if missing(r.exact_mae) else f"{r.exact_mae:.4f}",
        })
    return TableData(frame=pd.DataFrame(out), n_keys=4, blocks=_blocks(rows, ["task"]))


DCLR = ReportTable(
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

# ----------------------------------------------------------------------------- coverage, olr_bins

#: One bin of an instance-share table: (name of its view columns n_<name> / share_<name>, SQL
#: condition on the instance's value, column header).
Bin = tuple[str, str, str]


def _instance_shares(name: str, title: str, note: str, column: str, bins: Sequence[Bin], empty: str,
                     mean_header: str | None = None) -> ReportTable:
    """A table of instance shares from ``instance_scores``: per task x method x model x split, ``n``
    the instances whose ``column`` is not NULL, ``mean_{column}`` (shown when ``mean_header`` is
    given), and per bin the count ``n_<name>`` and the share ``share_<name>`` of those n."""
    mean = f", avg({column}) AS mean_{column}" if mean_header else ""
    counts = "".join(f",\n         count(*) FILTER (WHERE {cond}) AS n_{b}" for b, cond, _ in bins)
    shares = "".join(f",\n       n_{b}, n_{b} / n AS share_{b}" for b, _, _ in bins)
    sql = f"""
SELECT task, method, model, split, n{f", mean_{column}" if mean_header else ""}{shares}
FROM (
  SELECT task, method, model, split, count({column}) AS n{mean}{counts}
  FROM instance_scores WHERE {column} IS NOT NULL
  GROUP BY task, method, model, split
)
ORDER BY task, method, model, split
"""

    def fmt(rows: pd.DataFrame, con: duckdb.DuckDBPyConnection) -> TableData:
        out = []
        for r in rows.to_dict("records"):
            row = {"Task": r["task"], "Method": r["method"], "Model": r["model"], "Split": r["split"], "n": as_count(r["n"])}
            if mean_header:
                row[mean_header] = _pct(r[f"mean_{column}"])
            row.update({header: _share_count(r[f"share_{b}"], r[f"n_{b}"]) for b, _, header in bins})
            out.append(row)
        return TableData(frame=pd.DataFrame(out), n_keys=4, blocks=_blocks(rows, ["task"]))

    return ReportTable(name=name, title=title, note=note, sql=sql, empty=empty, format=fmt,
                       requires={"instance_scores": ("task", "method", "model", "split", column)})


COVERAGE = _instance_shares(
    "coverage", "Coverage distribution per run",
    "Cov of an instance: the share of its evidence items that the reasoning cites as [k] at least once "
    "(TEMPO paper §4.3). Per task × method × model × split, over the n instances with at least one evidence "
    "claim: the mean Cov, and the share (and number) of instances whose Cov is above 90%, above 80%, and 0 "
    "(reasoning that cites nothing).",
    "cov",
    [("above_90", "cov > 0.9", "Cov > 90%: % (count)"), ("above_80", "cov > 0.8", "Cov > 80%: % (count)"),
     ("zero", "cov = 0", "Cov = 0: % (count)")],
    "no instance has a coverage value: no completion with evidence claims was scored",
    mean_header="mean Cov %",
)

OLR_BINS = _instance_shares(
    "olr_bins", "Instance-level OLR: how leakage is spread over instances",
    "Per task × method × model × split, the n instances that have an OLR (a parsed completion with at least "
    "one evidence claim) binned by their own OLR (share of their evidence claims that leaked): exactly 0, "
    "above 0 up to 5%, above 5% up to 10%, above 10%. Cells: % of the n instances (count). A mean OLR can hide "
    "a few instances that leak heavily; this table shows them.",
    "olr",
    [("zero", "olr = 0", "OLR = 0"), ("upto_5", "olr > 0 AND olr <= 0.05", "OLR in (0, 5%]"),
     ("upto_10", "olr > 0.05 AND olr <= 0.1", "OLR in (5, 10%]"), ("above_10", "olr > 0.1", "OLR > 10%")],
    "no instance has an OLR: no completion with evidence claims was scored",
)

# ----------------------------------------------------------------------------- cost

#: ``llm_calls.step`` values of the verifier's calls (claim extraction, plausibility layer) and of
#: the Shapley value calls; every other step is a run's own call.
VERIFIER_STEPS = ("extract_claims", "plausibility")
SHAPLEY_STEP = "shapley"

COST_SQL = f"""
WITH calls AS (
  -- cost_usd: NULL for every call of a database written before cost accounting (no such column)
  SELECT * FROM llm_calls UNION ALL BY NAME SELECT CAST(NULL AS DOUBLE) AS cost_usd WHERE false
),
c AS (
  SELECT task, method, model_key AS model,
         CASE WHEN step = '{SHAPLEY_STEP}' THEN 'shapley'
              WHEN step IN {VERIFIER_STEPS!r} THEN 'verifier' ELSE 'run' END AS calls_for,
         coalesce(cache_hit, false) AS cached, prompt_tokens, completion_tokens, latency_s, cost_usd
  FROM calls WHERE method IS NOT NULL
),
agg AS (
  SELECT task, method, model, calls_for, count(*) AS calls,
         count(*) FILTER (WHERE NOT cached) AS calls_made, count(*) FILTER (WHERE cached) AS calls_cached,
         sum(prompt_tokens) AS prompt_tokens, sum(completion_tokens) AS completion_tokens,
         sum(latency_s) AS seconds, sum(cost_usd) AS cost_usd,
         -- 0 (not NULL) when every priced call of the row was a cache hit
         coalesce(sum(cost_usd) FILTER (WHERE NOT cached), CASE WHEN count(cost_usd) > 0 THEN 0.0 END) AS cost_usd_made,
         count(*) FILTER (WHERE cost_usd IS NULL) AS calls_unpriced
  FROM c GROUP BY task, method, model, calls_for
),
run_n AS (SELECT task, method, model, count(*) AS instances FROM completions GROUP BY task, method, model),
verified_n AS (SELECT task, method, count(*) AS instances FROM completions GROUP BY task, method),
attributed_n AS (SELECT task, method, model, count(*) AS instances FROM shapley GROUP BY task, method, model),
searches AS (SELECT task, method, model, count(*) AS searches FROM tool_calls GROUP BY task, method, model),
keys AS (
  SELECT task, method, model, 'run' AS calls_for FROM run_n
  UNION SELECT task, method, model, calls_for FROM agg
),
per_row AS (
  SELECT k.task, k.method, k.model, k.calls_for,
         CASE k.calls_for WHEN 'run' THEN r.instances WHEN 'shapley' THEN a.instances ELSE v.instances END
           AS instances,
         coalesce(g.calls, 0) AS calls, coalesce(g.calls_made, 0) AS calls_made,
         coalesce(g.calls_cached, 0) AS calls_cached,
         CASE WHEN k.calls_for = 'run' THEN coalesce(s.searches, 0) END AS searches,
         g.prompt_tokens, g.completion_tokens, g.seconds, g.cost_usd, g.cost_usd_made,
         coalesce(g.calls_unpriced, 0) AS calls_unpriced
  FROM keys k
  LEFT JOIN agg g ON g.task = k.task AND g.method = k.method AND g.model = k.model AND g.calls_for = k.calls_for
  LEFT JOIN run_n r ON r.task = k.task AND r.method = k.method AND r.model = k.model
  LEFT JOIN attributed_n a ON a.task = k.task AND a.method = k.method AND a.model = k.model
  LEFT JOIN verified_n v ON v.task = k.task AND v.method = k.method
  LEFT JOIN searches s ON s.task = k.task AND s.method = k.method AND s.model = k.model
),
total AS (
  SELECT CAST(NULL AS VARCHAR) AS task, CAST(NULL AS VARCHAR) AS method, CAST(NULL AS VARCHAR) AS model,
         'total' AS calls_for, CAST(NULL AS BIGINT) AS instances,
         sum(calls) AS calls, sum(calls_made) AS calls_made, sum(calls_cached) AS calls_cached,
         sum(searches) AS searches, sum(prompt_tokens) AS prompt_tokens, sum(completion_tokens) AS completion_tokens,
         sum(seconds) AS seconds, sum(cost_usd) AS cost_usd, sum(cost_usd_made) AS cost_usd_made,
         sum(calls_unpriced) AS calls_unpriced
  FROM per_row HAVING count(*) > 0
)
SELECT *,
       calls / instances AS calls_per_instance,
       searches / instances AS searches_per_instance,
       prompt_tokens / instances AS prompt_tokens_per_instance,
       completion_tokens / instances AS completion_tokens_per_instance,
       seconds / instances AS seconds_per_instance,
       cost_usd / instances AS cost_usd_per_instance
FROM (SELECT * FROM per_row UNION ALL BY NAME SELECT * FROM total)
ORDER BY task IS NULL, task, method,
         CASE calls_for WHEN 'run' THEN 0 WHEN 'shapley' THEN 1 WHEN 'verifier' THEN 2 ELSE 3 END, model
"""

_NO_COST_COLUMN = ("Cost n/a: the database has no `cost_usd` column (built before cost accounting); "
                   "re-run load_results")


def _usd(v: object, unpriced: object, calls: object, digits: int) -> str:
    """A dollar amount; "n/a" when no call of the row has a price, "≥ x" when some have none."""
    if missing(v) or as_count(unpriced) >= max(1, as_count(calls)):
        return "n/a"
    s = f"{float(v):,.{digits}f}"
    return f"≥ {s}" if as_count(unpriced) else s


def _num(v: object, digits: int = 0) -> str:
    return "–" if missing(v) else f"{float(v):,.{digits}f}"


def _format_cost(rows: pd.DataFrame, con: duckdb.DuckDBPyConnection) -> TableData:
    has_cost = "cost_usd" in database_columns(con).get("llm_calls", set())
    out = []
    for r in rows.itertuples(index=False):
        total = r.calls_for == "total"
        tokens = (0 if missing(r.prompt_tokens) else r.prompt_tokens) + (0 if missing(r.completion_tokens) else r.completion_tokens)
        out.append({
            "Task": "Total" if total else r.task, "Method": _label(r.method) if not total else "",
            "Model": _label(r.model) if not total else "", "Calls for": "" if total else r.calls_for,
            "Instances": "" if total else as_count(r.instances),
            "LLM calls / inst.": _num(r.calls_per_instance, 2),
            "calls made / cached": f"{as_count(r.calls_made)} / {as_count(r.calls_cached)}",
            "searches / inst.": _num(r.searches_per_instance, 2),
            "prompt tok. / inst.": _num(r.prompt_tokens_per_instance),
            "completion tok. / inst.": _num(r.completion_tokens_per_instance),
            "LLM s / inst.": _num(r.seconds_per_instance, 2),
            "USD / inst.": _usd(r.cost_usd_per_instance, r.calls_unpriced, r.calls, 4) if has_cost else "n/a",
            "tokens (all calls)": _num(tokens),
            "USD (all calls)": _usd(r.cost_usd, r.calls_unpriced, r.calls, 2) if has_cost else "n/a",
            "USD spent (calls made)": _usd(r.cost_usd_made, r.calls_unpriced, r.calls, 2) if has_cost else "n/a",
        })
    notes = () if has_cost else (_NO_COST_COLUMN + ".",)
    return TableData(frame=pd.DataFrame(out), n_keys=4, blocks=_blocks(rows, ["task"]), notes=notes)


COST = ReportTable(
    name="cost",
    title="Inference cost per instance",
    note=(
        "Per task × method × model, the LLM calls in `llm_calls` by whom they were made: `run` (the method's own "
        "calls: answers, search queries, supervision), `shapley` (value calls of the attribution, per attributed "
        "instance) and `verifier` (claim extraction and the plausibility layer of the verifier model, per instance "
        "of every run of the task × method; the model is the verifier's). Per instance: calls, search calls "
        "(`tool_calls`), prompt and completion tokens as the provider reported them, seconds of model latency "
        "(a cache hit counts its lookup time only) and cost in USD at the configured price per million tokens, "
        "cache hits included at their price: what an instance costs without the cache; the row's tokens and USD "
        "over all its calls beside. Calls made / cached: calls sent to the provider vs answered from the cache; "
        "USD spent: the cost of the calls made (0 when every call was a cache hit). "
        "n/a: no price; ≥: some calls of the row have no price. The last row sums every row."
    ),
    sql=COST_SQL,
    requires={"llm_calls": ("task", "method", "model_key", "step", "cache_hit", "prompt_tokens", "completion_tokens",
                            "latency_s"),
              "completions": ("task", "method", "model"), "shapley": ("task", "method", "model"),
              "tool_calls": ("task", "method", "model")},
    empty="no run and no LLM call in the database",
    format=_format_cost,
)

# ----------------------------------------------------------------------------- enforcement

#: The two retrieval modes the enforcement table compares, and the per-instance rates it compares.
UNRESTRICTED, ENFORCED = "rag_unrestricted", "rag"
ENFORCEMENT_METRICS = ("tclr", "survivorship", "restatement")

_UNPIVOT = "\n  UNION ALL ".join(
    f"SELECT task, model, split, instance_id, in_u, in_e, '{m}' AS metric, u_{m} AS unrestricted, e_{m} AS enforced "
    f"FROM j" for m in ENFORCEMENT_METRICS)

#: Per-instance pairs: (task, model, split, instance_id, in_u, in_e, metric, unrestricted, enforced).
ENFORCEMENT_PAIRS_SQL = f"""
WITH u AS (SELECT * FROM trace_scores WHERE method = '{UNRESTRICTED}'),
e AS (SELECT * FROM trace_scores WHERE method = '{ENFORCED}'),
j AS (
  SELECT coalesce(u.task, e.task) AS task, coalesce(u.model, e.model) AS model,
         coalesce(u.split, e.split) AS split, coalesce(u.instance_id, e.instance_id) AS instance_id,
         u.instance_id IS NOT NULL AS in_u, e.instance_id IS NOT NULL AS in_e,
         {", ".join(f"u.{m} AS u_{m}, e.{m} AS e_{m}" for m in ENFORCEMENT_METRICS)}
  FROM u FULL JOIN e
    ON u.task = e.task AND u.model = e.model AND u.split = e.split AND u.instance_id = e.instance_id
)
  {_UNPIVOT}
"""

#: Differences at most this large in absolute value are ties (as in :mod:`anachron.metrics.paired`).
_TIE = 1e-12

ENFORCEMENT_SQL = f"""
WITH pairs AS ({ENFORCEMENT_PAIRS_SQL}),
d AS (SELECT *, in_u AND in_e AND unrestricted IS NOT NULL AND enforced IS NOT NULL AS defined,
             enforced - unrestricted AS diff FROM pairs)
SELECT task, model, split, metric,
       count(*) FILTER (WHERE defined) AS n,
       avg(unrestricted) FILTER (WHERE defined) AS unrestricted,
       avg(enforced) FILTER (WHERE defined) AS enforced,
       avg(diff) FILTER (WHERE defined) AS diff,
       count(*) FILTER (WHERE defined AND diff < -{_TIE}) AS improved,
       count(*) FILTER (WHERE defined AND diff > {_TIE}) AS worsened,
       count(*) FILTER (WHERE defined AND abs(diff) <= {_TIE}) AS tied,
       (avg(unrestricted) FILTER (WHERE defined) - avg(enforced) FILTER (WHERE defined))
         / nullif(avg(unrestricted) FILTER (WHERE defined), 0) AS relative_reduction,
       count(*) FILTER (WHERE in_u AND NOT in_e) AS n_only_unrestricted,
       count(*) FILTER (WHERE in_e AND NOT in_u) AS n_only_enforced,
       array_to_string(list_slice(list(instance_id ORDER BY instance_id) FILTER (WHERE in_u <> in_e), 1, 5), ', ')
         AS unpaired_ids
FROM d
GROUP BY task, model, split, metric
HAVING bool_or(in_u) AND bool_or(in_e)
ORDER BY task, model, split, list_position({list(ENFORCEMENT_METRICS)!r}, metric)
"""

#: Resamples and seed of the paired bootstrap CI (those of :func:`anachron.metrics.paired.enforcement_table`).
ENFORCEMENT_BOOTSTRAP = {"n_resamples": 10000, "confidence": 0.95, "seed": 0}


def enforcement_frame(rows: pd.DataFrame, con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """The view's rows with the paired bootstrap CI of ``diff``, the exact sign-test p and a
    ``status`` ("ok", or why the pair of runs is not compared): the columns of
    :data:`anachron.metrics.paired.ENFORCEMENT_COLUMNS`."""
    from anachron.metrics.core import bootstrap_ci
    from anachron.metrics.paired import ENFORCEMENT_COLUMNS, sign_test_p

    pairs = con.execute(
        f"SELECT task, model, split, metric, enforced - unrestricted AS diff FROM ({ENFORCEMENT_PAIRS_SQL}) "
        "WHERE in_u AND in_e AND unrestricted IS NOT NULL AND enforced IS NOT NULL ORDER BY instance_id"
    ).df()
    groups = {k: g["diff"].to_numpy() for k, g in pairs.groupby(["task", "model", "split", "metric"])}
    out = []
    nan = float("nan")
    for r in rows.to_dict("records"):
        unpaired = as_count(r["n_only_unrestricted"]) + as_count(r["n_only_enforced"])
        if unpaired:
            status = (f"unpaired instance ids: {as_count(r['n_only_unrestricted'])} only unrestricted, "
                      f"{as_count(r['n_only_enforced'])} only enforced ({r['unpaired_ids']}"
                      f"{', ...' if unpaired > 5 else ''})")
            lo = hi = p = nan
        else:
            status = "ok"
            d = groups.get((r["task"], r["model"], r["split"], r["metric"]))
            boot = ENFORCEMENT_BOOTSTRAP
            lo, hi = bootstrap_ci(d, **boot) if d is not None else (nan, nan)
            p = sign_test_p(as_count(r["improved"]), as_count(r["worsened"]))
        out.append({**r, "ci_low": lo, "ci_high": hi, "p_value": p, "status": status})
    return pd.DataFrame(out).reindex(columns=ENFORCEMENT_COLUMNS)


def _num3(v: object, spec: str = ".3f") -> str:
    return "–" if missing(v) else format(v, spec)


def format_enforcement(table: pd.DataFrame, confidence: float = 0.95) -> pd.DataFrame:
    """Cells of an enforcement table (columns of :data:`anachron.metrics.paired.ENFORCEMENT_COLUMNS`):
    one row per task x model x split x metric; Δ with its CI, or why the runs are not compared."""
    pct = int(round(confidence * 100))
    rows = []
    for r in table.itertuples(index=False):
        ci = f"[{_num3(r.ci_low, '+.3f')}, {_num3(r.ci_high, '+.3f')}]"
        status = getattr(r, "status", "ok")
        rows.append(
            {
                "Task": r.task,
                "Model": r.model,
                "Split": r.split,
                "Metric": r.metric,
                "n": as_count(r.n),
                "Unrestricted": _num3(r.unrestricted),
                "Enforced": _num3(r.enforced),
                f"Δ [{pct}% CI]": (f"not compared: {status}" if status != "ok" else
                                   "– (no pair with a value)" if missing(r.diff) else f"{_num3(r.diff, '+.3f')} {ci}"),
                "Relative reduction": _num3(getattr(r, "relative_reduction", float("nan")), ".1%"),
                "Sign test p": _num3(r.p_value, ".3g") if as_count(r.n) else "–",
                "Improved / worsened / tied": f"{r.improved} / {r.worsened} / {r.tied}",
            }
        )
    return pd.DataFrame(rows)


def _format_enforcement(rows: pd.DataFrame, con: duckdb.DuckDBPyConnection) -> TableData:
    return TableData(frame=format_enforcement(enforcement_frame(rows, con)), n_keys=4,
                     blocks=_blocks(rows, ["task", "model", "split"]))


ENFORCEMENT = ReportTable(
    name="enforcement",
    title="Enforcement effect: unrestricted vs date-filtered retrieval",
    note=(
        f"Per task and model, the same instances run with retrieval unrestricted (`{UNRESTRICTED}`) and with "
        f"a hard date filter at the cutoff (`{ENFORCED}`). TCLR: share of an instance's search calls that returned "
        "or consumed a document published after the cutoff (an instance without a search call counts 0). "
        "Survivorship: share of the calls returning an entity-bearing document that returned an entity not "
        "point-in-time valid at the cutoff (not yet listed or already delisted); a date filter does not remove "
        "it. Restatement: share of calls returning a post-cutoff revision of an earlier record (consumed or cut "
        "from the prompt by the token budget). Unrestricted, enforced: means over the n paired instances; "
        "Δ = enforced − unrestricted (negative: the filter removed leakage) with a paired percentile bootstrap "
        "CI; p: exact two-sided sign test over non-tied instances; improved / worsened / tied: instances whose "
        "rate fell / rose / stayed under enforcement; relative reduction: (unrestricted − enforced) / "
        "unrestricted. Survivorship pairs only instances with an entity-bearing call in both modes. Runs whose "
        "instance ids differ are not compared (the ids are named)."
    ),
    sql=ENFORCEMENT_SQL,
    requires={"trace_scores": ("task", "method", "model", "split", "instance_id", *ENFORCEMENT_METRICS)},
    empty=(f"no paired retrieval runs: add both `{ENFORCED}` and `{UNRESTRICTED}` to `run.methods` "
           "(same tasks) to measure what the date filter removes"),
    format=_format_enforcement,
)

# ----------------------------------------------------------------------------- calibration

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
        bar = "–" if missing(r.meets_bar) else ("meets" if bool(r.meets_bar) else "misses")
        out.append({"Task": r.task, "Layers": r.layers, "Kind": r.kind, "Metric": r.metric,
                    "Rate % [Wilson 95% CI]": fmt_ci(r.rate, r.ci_low, r.ci_high, pct=True),
                    "flagged / n": f"{as_count(r.n_flagged)} / {as_count(r.n)}",
                    "undated": as_count(r.n_undated), "bar": bar})
    bold = frozenset((i, "bar") for i, r in enumerate(rows.itertuples(index=False))
                     if not missing(r.meets_bar) and not bool(r.meets_bar))
    return TableData(frame=pd.DataFrame(out), n_keys=4, bold=bold, blocks=_blocks(rows, ["task", "layers"]))


CALIBRATION = ReportTable(
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

# ----------------------------------------------------------------------------- training

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
    return "–" if missing(v) else str(int(v))


def _format_training(rows: pd.DataFrame, con: duckdb.DuckDBPyConnection) -> TableData:
    out = []
    for r in rows.itertuples(index=False):
        out.append({
            "Model": r.model, "Task": r.task,
            "train steps": _arrow(_step(r.first_step), _step(r.last_step)),
            "perf-mode fraction": _arrow(fmt_ci(r.mode_first, digits=2), fmt_ci(r.mode_last, digits=2)),
            "val. steps": _arrow(_step(r.val_first_step), _step(r.val_last_step)),
            "val. OLR %": _arrow(_pct(r.val_olr_first), _pct(r.val_olr_last)),
            "val. strict OLR %": _arrow(_pct(r.val_olr_strict_first), _pct(r.val_olr_strict_last)),
            "val. Perf": _arrow(fmt_ci(r.val_perf_first), fmt_ci(r.val_perf_last)),
            "best step": _step(r.best_step),
            "best OLR %": _pct(r.val_olr_best),
            "best strict OLR %": _pct(r.val_olr_strict_best),
            "best Perf": fmt_ci(r.val_perf_best),
        })
    return TableData(frame=pd.DataFrame(out), n_keys=2)


TRAINING = ReportTable(
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

# ----------------------------------------------------------------------------- registry

#: Every report table, by name, in the order of the report.
REPORT_TABLES: dict[str, ReportTable] = {
    t.name: t for t in (MAIN, CONTROL, DCLR, COVERAGE, OLR_BINS, COST, ENFORCEMENT, CALIBRATION, TRAINING)
}
#: The formats every table is written in (:data:`anachron.report.TABLE_FORMATS`).
FORMATS = TABLE_FORMATS
if tuple(REPORT_TABLES) != TABLE_NAMES:  # pragma: no cover (the workflow reads the light list)
    raise RuntimeError(f"anachron.report.TABLE_NAMES {TABLE_NAMES} != the registry's {tuple(REPORT_TABLES)}")


def report_view_statements() -> list[str]:
    """The ``CREATE VIEW report_{name}`` statements of every table (for
    :func:`anachron.store.load.write_database`'s ``views``)."""
    return [t.create_view_sql() for t in REPORT_TABLES.values()]


def render_table(name: str, con: duckdb.DuckDBPyConnection) -> dict[str, str]:
    """The files of table ``name`` from ``con``: ``{"md": ..., "tex": ..., "html": ...}``.

    A database that lacks what the table needs gives the no-data documents with the reason; so does
    an error while the table is built (logged with its traceback), so one broken table never stops
    the others from rendering.

    Raises:
        KeyError: ``name`` is not in :data:`REPORT_TABLES`.
    """
    table = REPORT_TABLES[name]
    try:
        data = table.build(con)
    except Exception as exc:  # noqa: BLE001 (a report must render; the log keeps the traceback)
        log.exception("table %s could not be built", name)
        data = TableData.no_data(f"the table could not be built ({type(exc).__name__}: {exc}); see the rule's log")
    return {"md": render_markdown(data, table.title, table.note),
            "tex": render_latex(data, table.title, table.note, f"tab:{name}"),
            "html": render_html(data, table.title, table.note)}
