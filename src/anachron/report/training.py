"""The TEMPO training figure: the two-phase curriculum, output health and validation leakage.

Left: the fraction of GRPO groups in performance mode per step (TEMPO paper, Table 3 and
Corollary 1: it should rise as leakage falls). Middle: the rollouts' parse failures (solid) and
near misses (dotted) per step, the format penalty's side of the reward. Right: validation OLR
(solid) and strict OLR (dashed) at the validation steps, step 0 being the base model, and the
validation parse rate (dotted); OLR is undefined, and not drawn, while no validation completion
parses. One colour per (model, task).
"""

from __future__ import annotations

import os
from typing import Sequence

import pandas as pd

from anachron.io import atomic_path


def training_curves(log: pd.DataFrame) -> dict[tuple[str, str], dict[str, pd.DataFrame]]:
    """Per (model, task): ``mode`` (step, perf_mode_fraction over training steps with groups that
    are not all parse failures), ``rollouts`` (step, parse_fail_rate, near_miss_rate per training
    step) and ``validation`` (step, val_olr, val_olr_strict, val_perf, val_cov, val_parse_rate at
    validation steps).

    ``log`` has :data:`anachron.training.trainer.TRAINING_LOG_COLUMNS`; rows without a value are skipped.
    """
    out: dict[tuple[str, str], dict[str, pd.DataFrame]] = {}
    if log.empty:
        return out
    for (model, task), g in log.sort_values("step").groupby(["model", "task"], sort=True):
        mode = g.loc[g["perf_mode_fraction"].notna(), ["step", "perf_mode_fraction"]]
        rollouts = g.loc[g["n_groups"].notna() & (g["n_groups"] > 0), ["step", "parse_fail_rate", "near_miss_rate"]]
        val = g.loc[g["val_n"].notna() & (g["val_n"] > 0),
                    ["step", "val_olr", "val_olr_strict", "val_perf", "val_cov", "val_parse_rate"]]
        out[(str(model), str(task))] = {"mode": mode.reset_index(drop=True), "rollouts": rollouts.reset_index(drop=True),
                                        "validation": val.reset_index(drop=True)}
    return out


def plot_training(log: pd.DataFrame, paths: Sequence[str | os.PathLike[str]]) -> None:
    """Draw the training figure from a training log and write it to every path (format by suffix,
    atomically). An empty log gives a figure that says so."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    curves = training_curves(log)
    fig, (ax_mode, ax_fmt, ax_olr) = plt.subplots(1, 3, figsize=(14, 3.9))
    last = 1
    for k, ((model, task), c) in enumerate(curves.items()):
        label, color = f"{model} / {task}", f"C{k}"
        if len(c["mode"]):
            ax_mode.plot(c["mode"]["step"], c["mode"]["perf_mode_fraction"], marker=".", color=color, label=label)
        if len(c["rollouts"]):
            ax_fmt.plot(c["rollouts"]["step"], c["rollouts"]["parse_fail_rate"], marker=".", color=color, label=f"{label} parse failures")
            ax_fmt.plot(c["rollouts"]["step"], c["rollouts"]["near_miss_rate"], linestyle=":", color=color, label=f"{label} near misses")
            last = max(last, int(c["rollouts"]["step"].max()))
        v = c["validation"]
        if len(v):
            ax_olr.plot(v["step"], v["val_olr"], marker="o", color=color, label=f"{label} OLR")
            ax_olr.plot(v["step"], v["val_olr_strict"], linestyle="--", marker="x", color=color, label=f"{label} strict OLR")
            ax_olr.plot(v["step"], v["val_parse_rate"], linestyle=":", marker=".", color=color, label=f"{label} parse rate")
            last = max(last, int(v["step"].max()))
            if v["val_olr"].isna().all():
                ax_olr.text(0.5, 0.5, "no validation completion parsed:\nOLR undefined", transform=ax_olr.transAxes,
                            ha="center", va="center", fontsize=8, color="0.4")
    ax_mode.set(title="Groups in performance mode", xlabel="step", ylabel="fraction of groups")
    ax_fmt.set(title="Rollouts: parse failures, near misses", xlabel="step", ylabel="fraction of completions")
    ax_olr.set(title="Validation (greedy)", xlabel="step (0 = base model)", ylabel="OLR / parse rate")
    for ax in (ax_mode, ax_fmt, ax_olr):
        ax.set(ylim=(-0.02, 1.02), xlim=(-0.2, last + 0.2))
        ax.xaxis.get_major_locator().set_params(integer=True)
        ax.grid(alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7)
    if not curves:
        fig.text(0.5, 0.5, "no training runs", ha="center", va="center")
    fig.tight_layout()
    for p in paths:
        suffix = os.path.splitext(str(p))[1].lstrip(".") or "png"
        with atomic_path(p) as tmp:
            fig.savefig(tmp, format=suffix, dpi=150)
    plt.close(fig)
