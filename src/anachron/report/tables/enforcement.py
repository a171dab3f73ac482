"""Report table ``enforcement``: the paired comparison of unrestricted and date-filtered retrieval
on TCLR, survivorship and restatement per task x model x split, with a paired bootstrap CI and an
exact sign test (docs/metrics.md#trace-metrics, docs/metrics.md#paired-comparison).

The means and counts come from the SQL; the bootstrap CI and the sign-test p are computed here from
the SQL's per-instance pairs (:func:`enforcement_frame`; a resampling has no SQL form), as
:func:`anachron.metrics.paired.enforcement_table` computes them in Python.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from anachron.frames import is_na
from anachron.report.render import TableData, as_count
from anachron.report.tables.base import ReportTable, block_starts

if TYPE_CHECKING:
    import duckdb

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
    return "–" if is_na(v) else format(v, spec)


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
                                   "– (no pair with a value)" if is_na(r.diff) else f"{_num3(r.diff, '+.3f')} {ci}"),
                "Relative reduction": _num3(getattr(r, "relative_reduction", float("nan")), ".1%"),
                "Sign test p": _num3(r.p_value, ".3g") if as_count(r.n) else "–",
                "Improved / worsened / tied": f"{r.improved} / {r.worsened} / {r.tied}",
            }
        )
    return pd.DataFrame(rows)


def _format_enforcement(rows: pd.DataFrame, con: duckdb.DuckDBPyConnection) -> TableData:
    return TableData(frame=format_enforcement(enforcement_frame(rows, con)), n_keys=4,
                     blocks=block_starts(rows, ["task", "model", "split"]))


TABLE = ReportTable(
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
