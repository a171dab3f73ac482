"""The report's figures, drawn from ``results/results.duckdb`` (docs/results.md; rule ``plot_figures``).

Each figure is a pure function of an open (read-only) database connection that returns a
:class:`matplotlib.figure.Figure` (Agg canvas, no pyplot state); :func:`save_figure` writes one
to PNG and PDF atomically. The figures, by the name of their file under ``results/figures/``
(:data:`FIGURES`):

* ``leakage_performance``: the leakage–performance plane (OLR against Perf, the two numbers the
  TEMPO paper reads together, §4.3), one panel per task: a point per eval run at (OLR %, Perf)
  with bootstrap CIs from ``metrics``, an arrow from Temporal Hint to every other method of the
  same model, a dotted arrow down (or up) from a run's Perf to its perf_clean (the Perf its leaked
  answers keep without their leaked evidence, docs/metrics.md#leakage-adjusted-perf), and the task's
  control-split OLR (the false-positive floor, docs/metrics.md#control-floor) as a dashed line. Upper
  left (low OLR, high Perf) is better.
* ``olr_distribution`` / ``coverage_distribution``: instance-level OLR and Cov (``instance_scores``,
  eval split) per method and task, a box per method with every instance as a jittered point.
* ``training``: the TEMPO curves of ``training_log`` (:func:`anachron.report.training.training_curves`):
  performance-mode fraction, rollout parse failures, validation OLR over steps.
* ``calibration``: verifier recall on planted leaks and false-positive rate on planted clean claims
  per task, claim kind and layer set (``calibration`` rows of style ``all``), Wilson 95% intervals,
  the acceptance bars :data:`~anachron.verify.calibration.evaluate.RECALL_MIN` and
  :data:`~anachron.verify.calibration.evaluate.FP_MAX` as lines.
* ``probes``: per task and probed method, Perf beside perf_clean (the run's answers), the neutered
  and the date-shifted Perf (the probes' answers) as bars with their CIs, the re-identification and
  change rates written above (docs/metrics.md#probes).

A missing table or column (a database from an older version), an empty table (training not run,
no control split) gives a figure that says ``no data: <reason>`` instead of failing, so the
report still builds (:func:`no_data_reasons` lists such messages). Gids on the drawn artists
(``point:``, ``arrow:``, ``clean:``, ``floor:``, ``values:``, ``probe:``, ``bar:``, ``mode:``, ``val_olr:``) name what
each shows, so tests can read the drawn numbers back.
"""

from __future__ import annotations

import math
import os
from typing import Callable, Sequence

import duckdb
import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import FancyArrowPatch, Patch
from matplotlib.text import Text

from anachron.io import atomic_path
from anachron.report import FIGURE_NAMES
from anachron.report.training import training_curves
from anachron.store import database_columns
from anachron.verify.calibration.evaluate import ALL_LEAKS, FP_MAX, RECALL_MIN

#: The method every arrow of the leakage–performance plane starts from (TEMPO paper §4.2).
HINT = "temporal_hint"
#: Markers per model, in model order (colours are per method).
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">")
#: Claim kinds of the calibration figure in reading order; others follow alphabetically.
KIND_ORDER = ("post_cutoff", "outcome", ALL_LEAKS, "pre_cutoff")
#: Resolution of the written PNG (dots per inch).
DPI = 150
_NO_DATA_HINT = "rerun `snakemake --cores 2` (rule load_results) to rebuild results.duckdb"


# ---------------------------------------------------------------------------
# reading


def table_columns(con: duckdb.DuckDBPyConnection, table: str) -> set[str]:
    """The column names of ``table`` (empty when the database has no such table or view)."""
    return database_columns(con).get(table, set())


def read_table(con: duckdb.DuckDBPyConnection, table: str, columns: Sequence[str],
               where: str = "") -> tuple[pd.DataFrame, str | None]:
    """``columns`` of ``table`` (rows matching the SQL condition ``where``, if given).

    Returns:
        ``(frame, None)``, or ``(empty frame, reason)`` when the table or one of the columns is
        missing (a database written by an older version) or no row matches; ``reason`` is the
        sentence the no-data figure shows.
    """
    have = table_columns(con, table)
    if not have:
        return pd.DataFrame(), f"table {table} is missing ({_NO_DATA_HINT})"
    lacking = [c for c in columns if c not in have]
    if lacking:
        return pd.DataFrame(), f"table {table} has no column {', '.join(lacking)} (older results.duckdb; {_NO_DATA_HINT})"
    cols = ", ".join(f'"{c}"' for c in columns)
    df = con.execute(f"SELECT {cols} FROM {table}" + (f" WHERE {where}" if where else "")).df()
    if df.empty:
        return df, f"table {table} has no rows" + (f" with {where}" if where else "")
    return df, None


def _method_order(methods: Sequence[str]) -> list[str]:
    """Temporal Hint first (the baseline), the rest alphabetically."""
    return sorted(set(methods), key=lambda m: (m != HINT, m))


def _styles(methods: Sequence[str], models: Sequence[str]) -> tuple[dict[str, object], dict[str, str]]:
    """Colour per method (tab10; tab20 beyond ten methods) and marker per model."""
    from matplotlib import colormaps

    cmap = colormaps["tab10" if len(methods) <= 10 else "tab20"]
    colours = {m: cmap(i % cmap.N) for i, m in enumerate(methods)}
    markers = {m: MARKERS[i % len(MARKERS)] for i, m in enumerate(sorted(set(models)))}
    return colours, markers


# ---------------------------------------------------------------------------
# figure scaffolding


def _figure(width: float, height: float) -> Figure:
    """A constrained-layout figure on the Agg canvas (no pyplot, nothing global)."""
    fig = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def no_data_figure(title: str, reason: str) -> Figure:
    """A small figure with ``title`` and a centred ``no data: <reason>`` (gid ``no-data``)."""
    fig = _figure(6.4, 2.4)
    fig.suptitle(title)
    fig.text(0.5, 0.45, f"no data: {reason}", ha="center", va="center", wrap=True, color="0.3", gid="no-data")
    return fig


def _no_data_axes(ax, reason: str) -> None:
    """Mark one panel as empty with a centred message (the other panels keep their data)."""
    ax.text(0.5, 0.5, f"no data:\n{reason}", ha="center", va="center", transform=ax.transAxes, color="0.35",
            fontsize=8, gid="no-data")
    ax.set(xticks=[], yticks=[])


def _grid(n: int, *, panel: tuple[float, float], max_cols: int = 3, legend_rows: int = 1):
    """A figure with ``n`` panels in rows of at most ``max_cols`` (room below for a legend of
    ``legend_rows`` rows); returns the figure and the ``n`` axes (unused grid cells removed)."""
    ncols = 2 if n == 4 and max_cols >= 2 else max(1, min(max_cols, n))
    nrows = max(1, math.ceil(n / ncols))
    fig = _figure(panel[0] * ncols + 0.6, panel[1] * nrows + 0.35 + 0.22 * legend_rows)
    axes = fig.subplots(nrows, ncols, squeeze=False).ravel()
    for ax in axes[n:]:
        fig.delaxes(ax)
    return fig, list(axes[:n])


def _legend_below(fig: Figure, handles: list, *, max_cols: int = 6) -> None:
    """One legend for the whole figure (the handles' labels), under the panels, where it covers no
    data (constrained layout makes room for it)."""
    if handles:
        fig.legend(handles=handles, loc="outside lower center", ncols=max(1, min(max_cols, len(handles))), fontsize=8,
                   frameon=False)


def save_figure(fig: Figure, paths: Sequence[str | os.PathLike[str]], *, dpi: int = DPI) -> None:
    """Write ``fig`` to every path, the format taken from the suffix (``.png``, ``.pdf``, ``.svg``),
    each atomically (:func:`anachron.io.atomic_path`)."""
    for p in paths:
        fmt = os.path.splitext(str(p))[1].lstrip(".").lower() or "png"
        with atomic_path(p) as tmp:
            fig.savefig(tmp, format=fmt, dpi=dpi)


# ---------------------------------------------------------------------------
# leakage–performance plane


def plane_data(con: duckdb.DuckDBPyConnection) -> tuple[pd.DataFrame, dict[str, float], str | None]:
    """The points and floors of the leakage–performance plane.

    Returns:
        ``(points, floors, reason)``: ``points`` has one row per eval run (task, method, model,
        ``olr``, ``perf``, ``perf_clean`` as fractions and their ``*_lo`` / ``*_hi`` CI bounds, NaN
        where ``metrics`` has no value or interval; probe runs left out); ``floors`` maps a task to its pooled control-split OLR (the
        mean instance OLR over every control instance of every method and model, a fraction);
        ``reason`` is set (and ``points`` empty) when there is nothing to draw.
    """
    cols = ["task", "method", "model", "split", "metric", "value"]
    have_ci = {"ci_low", "ci_high"} <= table_columns(con, "metrics")
    m, reason = read_table(con, "metrics", cols + (["ci_low", "ci_high"] if have_ci else []),
                           "split = 'eval' AND metric IN ('olr', 'perf', 'perf_clean') AND method NOT LIKE '%@%'")
    floors: dict[str, float] = {}
    ctrl, _ = read_table(con, "instance_scores", ["task", "split", "olr"], "split = 'control' AND olr IS NOT NULL")
    if not ctrl.empty:
        floors = {str(t): float(v) for t, v in ctrl.groupby("task")["olr"].mean().items()}
    if reason:
        return pd.DataFrame(), floors, reason
    if not have_ci:
        m = m.assign(ci_low=np.nan, ci_high=np.nan)
    m = m.groupby(["task", "method", "model", "metric"], as_index=False)[["value", "ci_low", "ci_high"]].first()
    wide = m.set_index(["task", "method", "model", "metric"]).unstack("metric")
    out = pd.DataFrame(index=wide.index)
    for metric in ("olr", "perf", "perf_clean"):
        for src, dst in (("value", metric), ("ci_low", f"{metric}_lo"), ("ci_high", f"{metric}_hi")):
            out[dst] = wide[(src, metric)].astype(float) if (src, metric) in wide.columns else np.nan
    return out.reset_index(), floors, None


def _err(v: pd.Series, lo: pd.Series, hi: pd.Series, scale: float) -> np.ndarray | None:
    """Asymmetric error-bar extents (2 x n, never negative), or None when no interval is known."""
    if lo.isna().all() or hi.isna().all():
        return None
    return np.vstack([(v - lo).clip(lower=0).fillna(0), (hi - v).clip(lower=0).fillna(0)]).astype(float) * scale


def leakage_performance_figure(con: duckdb.DuckDBPyConnection) -> Figure:
    """The leakage–performance plane, one panel per task: x = OLR (%) of the
    eval split, y = Perf; colour per method, marker per model, CI error bars; arrows from Temporal
    Hint to each other method of the same model; the task's control OLR floor as a dashed line.
    Runs without an OLR or a Perf (nothing parsed) are counted under the panel title."""
    title = "Leakage vs performance (eval split; upper left is better: low OLR, high Perf)"
    points, floors, reason = plane_data(con)
    if reason:
        return no_data_figure(title, reason)
    tasks = sorted(set(points["task"]) | set(floors))
    methods = _method_order(points["method"])
    models = sorted(points["model"].unique())
    colours, markers = _styles(methods, models)
    fig, axes = _grid(len(tasks), panel=(4.6, 3.2), legend_rows=2)  # wider than tall: fits the report view
    fig.suptitle(title)
    for ax, task in zip(axes, tasks):
        p = points[points["task"] == task]
        drawn = p[p["olr"].notna() & p["perf"].notna()]
        x_hi = 1.0
        for r in drawn.itertuples(index=False):
            one = drawn[(drawn["method"] == r.method) & (drawn["model"] == r.model)]
            xerr = _err(one["olr"], one["olr_lo"], one["olr_hi"], 100)
            yerr = _err(one["perf"], one["perf_lo"], one["perf_hi"], 1)
            k = methods.index(r.method)  # later methods smaller and on top: runs at one point show as rings
            cont = ax.errorbar([100 * r.olr], [r.perf], xerr=xerr, yerr=yerr, fmt=markers[r.model], color=colours[r.method],
                               ms=max(3.5, 10.0 - 1.6 * k), mec="black", mew=0.5, elinewidth=0.8, capsize=2, alpha=0.9,
                               zorder=3 + 0.01 * k)
            cont.lines[0].set_gid(f"point:{task}:{r.method}:{r.model}")
            x_hi = max(x_hi, 100 * r.olr + (xerr[1, 0] if xerr is not None else 0))
        hints = drawn[drawn["method"] == HINT].set_index("model")
        for r in drawn[drawn["method"] != HINT].itertuples(index=False):
            if r.model not in hints.index:
                continue
            h = hints.loc[r.model]
            arrow = FancyArrowPatch((100 * h["olr"], h["perf"]), (100 * r.olr, r.perf), arrowstyle="-|>", mutation_scale=10,
                                    color=colours[r.method], alpha=0.55, lw=1.1, shrinkA=5, shrinkB=5, zorder=2,
                                    gid=f"arrow:{task}:{r.method}:{r.model}")
            ax.add_patch(arrow)
        for r in drawn[drawn["perf_clean"].notna()].itertuples(index=False):
            if abs(r.perf_clean - r.perf) < 1e-9:
                continue
            ax.add_patch(FancyArrowPatch((100 * r.olr, r.perf), (100 * r.olr, r.perf_clean), arrowstyle="-|>", mutation_scale=8,
                                         color=colours[r.method], ls=":", lw=1.2, alpha=0.8, shrinkA=4, shrinkB=0, zorder=2,
                                         gid=f"clean:{task}:{r.method}:{r.model}"))
        floor = floors.get(task)
        if floor is not None:
            ax.axvline(100 * floor, ls="--", color="0.35", lw=1, zorder=1, gid=f"floor:{task}")
            floor_label = ax.text(100 * floor, 0.98, f" control floor {100 * floor:.1f}% ", rotation=90, va="top", fontsize=7,
                                  color="0.3", transform=ax.get_xaxis_transform())
            x_hi = max(x_hi, 100 * floor)
        undrawn = len(p) - len(drawn)
        notes = [f"{undrawn} run{'s' if undrawn != 1 else ''} without OLR or Perf not drawn"] if undrawn else []
        if floor is None:
            notes.append("no control split: no floor")
        ax.set_title(task + ("\n" + "; ".join(notes) if notes else ""), fontsize=10 if not notes else 9)
        ax.set_xlim(-0.06 * x_hi, 1.08 * x_hi)
        if floor is not None:  # the label on the side of the line with more room
            floor_label.set_ha("left" if 100 * floor < 0.6 * x_hi else "right")
        ax.set_ylim(-0.04, 1.04)
        ax.set_xlabel("OLR (%) ↓ better")
        ax.set_ylabel("Perf (0–1) ↑ better")
        ax.grid(alpha=0.3)
        if drawn.empty:
            ax.text(0.5, 0.5, f"no data: no {task} eval run\nwith both OLR and Perf", ha="center", va="center",
                    transform=ax.transAxes, fontsize=8, color="0.35", gid="no-data")
    handles = [Line2D([], [], ls="", marker="o", color=colours[m], mec="black", mew=0.5, label=m) for m in methods]
    handles += [Line2D([], [], ls="", marker=markers[mo], color="0.55", mec="black", mew=0.5, label=f"model {mo}") for mo in models]
    handles += [Line2D([], [], color="0.45", marker=">", markevery=[1], label=f"{HINT} → method (same model)"),
                Line2D([], [], color="0.45", ls=":", label="Perf → perf_clean (leaked evidence removed)"),
                Line2D([], [], color="0.35", ls="--", label="control floor (pooled control OLR)")]
    _legend_below(fig, handles, max_cols=min(6, max(3, len(methods))))
    return fig


# ---------------------------------------------------------------------------
# instance-level distributions


def _distribution_figure(con: duckdb.DuckDBPyConnection, column: str, *, title: str, xlabel: str,
                         refs: Sequence[float] = (), ref_label: str = "") -> Figure:
    """Per task panel, a row per method (Temporal Hint on top): a box of the eval instances'
    ``column`` (x 100) and every instance as a jittered point (colour per method, marker per model;
    gid ``values:{task}:{method}:{model}``, offsets (value %, row)). Rows rather than columns keep
    the method labels horizontal however many methods there are. Probe runs (``<method>@<probe>``)
    are left out: they are the probes figure's."""
    df, reason = read_table(con, "instance_scores", ["task", "method", "model", "split", "instance_id", column],
                            f"split = 'eval' AND {column} IS NOT NULL AND method NOT LIKE '%@%'")
    if reason:
        return no_data_figure(title, reason)
    tasks = sorted(df["task"].unique())
    methods_all = _method_order(df["method"])
    models = sorted(df["model"].unique())
    colours, markers = _styles(methods_all, models)
    rng = np.random.default_rng(0)
    most = int(df.groupby("task")["method"].nunique().max())
    fig, axes = _grid(len(tasks), panel=(4.6, 0.42 * most + 1.5), legend_rows=1)
    fig.suptitle(title)
    for ax, task in zip(axes, tasks):
        d = df[df["task"] == task]
        methods = [m for m in methods_all if m in set(d["method"])]
        values = [100 * d.loc[d["method"] == m, column].to_numpy(float) for m in methods]
        ax.boxplot(values, positions=range(len(methods)), widths=0.55, showfliers=False, orientation="horizontal",
                   patch_artist=True, boxprops={"facecolor": "none", "edgecolor": "0.3"}, medianprops={"color": "black"},
                   whiskerprops={"color": "0.3"}, capprops={"color": "0.3"})
        for k, m in enumerate(methods):
            for mo in models:
                v = 100 * d.loc[(d["method"] == m) & (d["model"] == mo), column].to_numpy(float)
                if len(v):
                    ax.scatter(v, k + rng.uniform(-0.2, 0.2, len(v)), s=14, color=colours[m], marker=markers[mo], alpha=0.6,
                               edgecolors="none", zorder=3, gid=f"values:{task}:{m}:{mo}")
        for x in refs:
            ax.axvline(x, ls=":", color="0.45", lw=1, zorder=1)
        ax.set_yticks(range(len(methods)), [f"{m} (n={len(v)})" for m, v in zip(methods, values)], fontsize=8)
        pad = max(0.0, (3 - len(methods)) / 2)  # a lone box stays box-shaped
        ax.set_ylim(len(methods) - 0.4 + pad, -0.6 - pad)  # first method on top
        ax.set_xlim(-4, 104)
        ax.set_title(task)
        ax.set_xlabel(xlabel)
        ax.set_ylabel("method (n = eval instances)")
        ax.grid(axis="x", alpha=0.3)
    handles = [Line2D([], [], ls="", marker=markers[mo], color="0.55", label=f"model {mo}") for mo in models]
    handles.append(Patch(facecolor="none", edgecolor="0.3", label="box: quartiles and median, whiskers 1.5 IQR"))
    if refs:
        handles.append(Line2D([], [], ls=":", color="0.45", label=ref_label))
    _legend_below(fig, handles)
    return fig


def olr_distribution_figure(con: duckdb.DuckDBPyConnection) -> Figure:
    """Instance-level OLR (%) per method and task, eval split (docs/metrics.md#olr)."""
    return _distribution_figure(con, "olr", title="Instance-level OLR per method (eval split)", xlabel="instance OLR (%) ↓ better")


def coverage_distribution_figure(con: duckdb.DuckDBPyConnection) -> Figure:
    """Instance-level Cov (%) per method and task, eval split, with the 80% and 90% lines the coverage
    table counts against (docs/metrics.md#cov)."""
    return _distribution_figure(con, "cov", title="Instance-level evidence coverage per method (eval split)",
                                xlabel="instance Cov (%) ↑ better", refs=(80.0, 90.0), ref_label="80% and 90% coverage")


# ---------------------------------------------------------------------------
# TEMPO training


TRAINING_TITLE = "TEMPO training"


def training_figure(log: pd.DataFrame) -> Figure:
    """The TEMPO training curves of a ``training_log`` frame (:func:`training_curves`), three panels:
    the fraction of GRPO groups in performance mode per step (TEMPO paper, Table 3 and Corollary 1:
    it should rise as leakage falls); the rollouts' parse failures (solid) and near misses (dotted);
    validation OLR (solid), strict OLR (dashed) and parse rate (dotted) at validation steps, step 0
    the base model (OLR is undefined, and not drawn, while no validation completion parses). One
    colour per (model, task). An empty log gives the no-data figure."""
    curves = training_curves(log) if len(log) else {}
    if not curves:
        return no_data_figure(TRAINING_TITLE, "training_log is empty (TEMPO not trained: method tempo is not in run.methods)")
    fig = _figure(13.0, 4.2)
    ax_mode, ax_fmt, ax_val = fig.subplots(1, 3)
    fig.suptitle(TRAINING_TITLE)
    last, runs = 1, []
    for k, ((model, task), c) in enumerate(curves.items()):
        colour = f"C{k % 10}"
        runs.append(Line2D([], [], color=colour, lw=3, label=f"{model} / {task}"))
        if len(c["mode"]):
            ax_mode.plot(c["mode"]["step"], c["mode"]["perf_mode_fraction"], marker=".", color=colour,
                         gid=f"mode:{model}:{task}")
        if len(c["rollouts"]):
            ax_fmt.plot(c["rollouts"]["step"], c["rollouts"]["parse_fail_rate"], marker=".", color=colour)
            ax_fmt.plot(c["rollouts"]["step"], c["rollouts"]["near_miss_rate"], ls=":", color=colour)
            last = max(last, int(c["rollouts"]["step"].max()))
        v = c["validation"]
        if len(v):
            ax_val.plot(v["step"], v["val_olr"], marker="o", color=colour, gid=f"val_olr:{model}:{task}")
            ax_val.plot(v["step"], v["val_olr_strict"], ls="--", marker="x", color=colour)
            ax_val.plot(v["step"], v["val_parse_rate"], ls=":", marker=".", color=colour)
            last = max(last, int(v["step"].max()))
            if v["val_olr"].isna().all():
                ax_val.text(0.5, 0.5, "no validation completion parsed:\nOLR undefined", transform=ax_val.transAxes,
                            ha="center", va="center", fontsize=8, color="0.4")
    ax_mode.set(title="Groups in performance mode", xlabel="training step", ylabel="fraction of GRPO groups")
    ax_fmt.set(title="Rollout output health", xlabel="training step", ylabel="fraction of completions")
    ax_val.set(title="Validation (greedy decoding)", xlabel="training step (0 = base model)", ylabel="OLR / parse rate (fraction)")
    for ax in (ax_mode, ax_fmt, ax_val):
        ax.set(ylim=(-0.03, 1.03), xlim=(-0.2, last + 0.2))
        ax.xaxis.get_major_locator().set_params(integer=True)
        ax.grid(alpha=0.3)
    grey = "0.4"
    keys = [Line2D([], [], color=grey, marker=".", label="parse failures (middle)"),
            Line2D([], [], color=grey, ls=":", label="near misses (middle)"),
            Line2D([], [], color=grey, marker="o", label="validation OLR"),
            Line2D([], [], color=grey, ls="--", marker="x", label="validation strict OLR"),
            Line2D([], [], color=grey, ls=":", marker=".", label="validation parse rate")]
    _legend_below(fig, runs + keys, max_cols=max(3, min(5, len(runs) + 2)))
    return fig


def training_plot_figure(con: duckdb.DuckDBPyConnection) -> Figure:
    """:func:`training_figure` of the database's ``training_log`` table."""
    cols = ["model", "task", "step", "n_groups", "perf_mode_fraction", "parse_fail_rate", "near_miss_rate", "val_n",
            "val_olr", "val_olr_strict", "val_perf", "val_cov", "val_parse_rate"]
    log, reason = read_table(con, "training_log", cols)
    if reason:
        return no_data_figure(TRAINING_TITLE, reason + " (TEMPO not trained: method tempo is not in run.methods)"
                              if "no rows" in reason else reason)
    return training_figure(log)


# ---------------------------------------------------------------------------
# verifier calibration


def _kind_order(kinds) -> list[str]:
    return sorted(set(kinds), key=lambda k: (KIND_ORDER.index(k) if k in KIND_ORDER else len(KIND_ORDER), k))


def _calibration_panel(ax, d: pd.DataFrame, task: str, layer_sets: Sequence[str], colours: dict[str, object], *,
                       bar: float, label_values: bool) -> None:
    """One calibration panel: per claim kind a bar per layer set (rate x 100, Wilson CI), ``bar`` as
    a dashed line; ``label_values`` writes each rate above its bar (false positives are often 0)."""
    kinds = _kind_order(d["kind"])
    width = 0.8 / len(layer_sets)
    top = 0.0
    for s_i, layers in enumerate(layer_sets):
        for k, kind in enumerate(kinds):
            r = d[(d["layers"] == layers) & (d["kind"] == kind)]
            if r.empty:
                continue
            r = r.iloc[0]
            x = k - 0.4 + width * (s_i + 0.5)
            rate, lo, hi = (100 * float(r[c]) for c in ("rate", "ci_low", "ci_high"))
            has_ci = not (math.isnan(lo) or math.isnan(hi))
            ax.bar([x], [rate], width=width * 0.92, color=colours[layers], gid=f"bar:{task}:{r['metric']}:{kind}:{layers}",
                   yerr=[[max(rate - lo, 0)], [max(hi - rate, 0)]] if has_ci else None, capsize=2, error_kw={"elinewidth": 0.8})
            top = max(top, hi if has_ci else rate)
            if label_values:
                ax.annotate(f"{rate:.1f}", (x, hi if has_ci else rate), xytext=(0, 3), textcoords="offset points",
                            ha="center", va="bottom", fontsize=7)
    ax.axhline(100 * bar, ls="--", color="0.2", lw=1, zorder=0)
    n = {kind: int(d.loc[d["kind"] == kind, "n"].max()) for kind in kinds}
    ax.set_xticks(range(len(kinds)), [f"{kind}\n(n={n[kind]})" for kind in kinds], fontsize=8)
    ax.set_xlim(-0.55, len(kinds) - 0.45)
    ax.set_ylim(0, 105 if not label_values else max(3 * 100 * bar, 1.3 * top))
    ax.set_xlabel("planted claim kind")
    ax.grid(axis="y", alpha=0.3)


def calibration_figure(con: duckdb.DuckDBPyConnection) -> Figure:
    """Verifier calibration on planted claims (docs/verification.md#calibration), a block per task
    (two tasks to a row): left, recall (%) on planted leaks per claim kind; right, the
    false-positive rate (%) on planted clean claims, its value written above each bar; a bar per
    layer set with its Wilson 95% interval (gid ``bar:{task}:{metric}:{kind}:{layers}``), the
    acceptance bars :data:`RECALL_MIN` and :data:`FP_MAX` as dashed lines. Rows of style ``all``
    only (the per-wording rows are in the calibration table); n is the planted claims per layer set."""
    title = "Verifier calibration on planted claims (Wilson 95% intervals)"
    df, reason = read_table(con, "calibration", ["task", "layers", "kind", "style", "metric", "n", "rate", "ci_low", "ci_high"],
                            "style = 'all'")
    if reason:
        return no_data_figure(title, reason + " (rule calibrate_verifier)")
    df = df.assign(row=np.where(df["metric"] == "recall", "recall", "fp"))
    tasks = sorted(df["task"].unique())
    layer_sets = sorted(df["layers"].unique(), key=lambda s: (s.count("+"), s))
    colours = {s: f"C{i % 10}" for i, s in enumerate(layer_sets)}
    n_kinds = {row: max(1, int(df[df["row"] == row].groupby("task")["kind"].nunique().max()) if (df["row"] == row).any() else 1)
               for row in ("recall", "fp")}
    per_kind = max(0.9, 0.32 * len(layer_sets))
    block_w = per_kind * (n_kinds["recall"] + n_kinds["fp"]) + 2.4
    ncols = 1 if len(tasks) == 1 else 2
    nrows = math.ceil(len(tasks) / ncols)
    fig = _figure(max(6.4, block_w * ncols), 3.5 * nrows + 0.8)
    fig.suptitle(title)
    subs = np.atleast_1d(fig.subfigures(nrows, ncols, squeeze=False)).ravel()
    for sub in subs[len(tasks):]:
        sub.set_visible(False)
    for sub, task in zip(subs, tasks):
        sub.suptitle(task, fontsize=11)
        ax_rec, ax_fp = sub.subplots(1, 2, width_ratios=[n_kinds["recall"] + 0.6, n_kinds["fp"] + 0.6])
        for ax, row, ylabel, bar in ((ax_rec, "recall", "recall on planted leaks (%) ↑", RECALL_MIN),
                                     (ax_fp, "fp", "false-positive rate (%) ↓", FP_MAX)):
            d = df[(df["task"] == task) & (df["row"] == row)]
            ax.set_title("recall" if row == "recall" else "false positives", fontsize=9)
            ax.set_ylabel(ylabel)
            if d.empty:
                _no_data_axes(ax, f"no {task} {'recall' if row == 'recall' else 'false-positive'} rows")
                continue
            _calibration_panel(ax, d, task, layer_sets, colours, bar=bar, label_values=row == "fp")
    handles = [Patch(color=colours[s], label=f"layers: {s}") for s in layer_sets]
    handles += [Line2D([], [], ls="--", color="0.2",
                       label=f"acceptance bar: recall ≥ {100 * RECALL_MIN:.0f}%, false positives ≤ {100 * FP_MAX:.0f}%")]
    _legend_below(fig, handles)
    return fig


#: Figure name (file stem under ``results/figures/``) -> drawing function.
#: The bars of the probes figure: label -> (value, low, high) columns of :func:`probe_data`.
PROBE_BARS = {
    "Perf": ("perf", "perf_lo", "perf_hi"),
    "perf_clean": ("perf_clean", "perf_clean_lo", "perf_clean_hi"),
    "neutered Perf": ("neutered_perf", "neutered_perf_lo", "neutered_perf_hi"),
    "shifted Perf": ("shift_perf", "shift_perf_lo", "shift_perf_hi"),
}


def probe_data(con: duckdb.DuckDBPyConnection) -> tuple[pd.DataFrame, str | None]:
    """The probes table's numbers (:data:`anachron.report.tables.probes.PROBES_SQL`) of the eval split
    (every split when a task has no eval rows); ``reason`` when there is nothing to draw."""
    from anachron.report.tables.probes import PROBES_SQL

    _, reason = read_table(con, "metrics", ["task", "method", "model", "split", "metric", "value", "ci_low", "ci_high", "n"])
    if reason:
        return pd.DataFrame(), reason
    d = con.execute(PROBES_SQL).df()
    if d.empty:
        return d, "no probe run (config key probes.methods)"
    d = pd.concat([g[g["split"] == "eval"] if (g["split"] == "eval").any() else g for _, g in d.groupby("task")])
    return d.reset_index(drop=True), None


def probes_figure(con: duckdb.DuckDBPyConnection) -> Figure:
    """Perf, perf_clean, neutered and date-shifted Perf per task and probed method (bars, 95% CIs),
    with the re-identification and prediction-change rates written above each group."""
    title = "Probes: perf_clean, neutered and date-shifted Perf"
    d, reason = probe_data(con)
    if reason:
        return no_data_figure(title, reason)
    tasks = sorted(d["task"].unique())
    colours = dict(zip(PROBE_BARS, ("0.35", "tab:green", "tab:purple", "tab:orange")))
    fig, axes = _grid(len(tasks), panel=(4.6, 3.0))
    fig.suptitle(title)
    width = 0.8 / len(PROBE_BARS)
    for ax, task in zip(axes, tasks):
        t = d[d["task"] == task].reset_index(drop=True)
        labels = [f"{r.method}\n{r.model} ({r.split})" for r in t.itertuples(index=False)]
        for k, (label, (v, lo, hi)) in enumerate(PROBE_BARS.items()):
            x = np.arange(len(t)) + (k - (len(PROBE_BARS) - 1) / 2) * width
            vals = t[v].astype(float)
            bars = ax.bar(x, vals.fillna(0), width, color=colours[label], yerr=_err(vals, t[lo].astype(float), t[hi].astype(float), 1),
                          capsize=2, error_kw={"elinewidth": 0.8})
            for b, r in zip(bars, t.itertuples(index=False)):
                b.set_gid(f"probe:{task}:{r.method}:{r.model}:{label}")
        for i, r in enumerate(t.itertuples(index=False)):
            notes = []
            if not pd.isna(r.reid_rate):
                notes.append(f"re-id {100 * r.reid_rate:.0f}%")
            if not pd.isna(r.shift_change_rate):
                notes.append(f"changed {100 * r.shift_change_rate:.0f}%")
            ax.text(i, 1.02, ", ".join(notes), ha="center", va="bottom", fontsize=7, color="0.3")
        ax.set_xticks(np.arange(len(t)), labels, fontsize=7)
        ax.set_ylim(0, 1.12)
        ax.set_ylabel("Perf (0–1)")
        ax.set_xlabel("probed method, model (split)")
        ax.set_title(task, fontsize=10)
        ax.grid(axis="y", alpha=0.3)
    _legend_below(fig, [Patch(color=c, label=lbl) for lbl, c in colours.items()], max_cols=4)
    return fig


FIGURES: dict[str, Callable[[duckdb.DuckDBPyConnection], Figure]] = {
    "leakage_performance": leakage_performance_figure,
    "olr_distribution": olr_distribution_figure,
    "coverage_distribution": coverage_distribution_figure,
    "training": training_plot_figure,
    "calibration": calibration_figure,
    "probes": probes_figure,
}
assert tuple(FIGURES) == FIGURE_NAMES, "anachron.report.FIGURE_NAMES and FIGURES list the same figures"


def no_data_reasons(fig: Figure) -> list[str]:
    """The "no data: ..." messages drawn on ``fig`` (whole figure or single panels), in drawing order."""
    return [t.get_text().replace("\n", " ") for t in fig.findobj(Text) if t.get_gid() == "no-data"]
