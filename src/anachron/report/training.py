"""The TEMPO training figure: the two-phase curriculum and validation leakage over steps.

Left panel: the fraction of GRPO groups in performance mode per step (TEMPO paper, Table 3 and
Corollary 1: it should rise as leakage falls). Right panel: validation OLR (solid) and strict OLR
(dashed) at the validation steps, step 0 being the base model. One line per (model, task).
"""

from __future__ import annotations

import os
from typing import Sequence

import pandas as pd

from anachron.io import atomic_path


def training_curves(log: pd.DataFrame) -> dict[tuple[str, str], dict[str, pd.DataFrame]]:
    """Per (model, task): ``mode`` (step, perf_mode_fraction over training steps with groups)
    and ``validation`` (step, val_olr, val_olr_strict, val_perf, val_cov at validation steps).

    ``log`` has :data:`anachron.training.trainer.TRAINING_LOG_COLUMNS`; rows without a value are skipped.
    """
    out: dict[tuple[str, str], dict[str, pd.DataFrame]] = {}
    if log.empty:
        return out
    for (model, task), g in log.sort_values("step").groupby(["model", "task"], sort=True):
        mode = g.loc[g["perf_mode_fraction"].notna(), ["step", "perf_mode_fraction"]]
        val = g.loc[g["val_n"].notna() & (g["val_n"] > 0), ["step", "val_olr", "val_olr_strict", "val_perf", "val_cov"]]
        out[(str(model), str(task))] = {"mode": mode.reset_index(drop=True), "validation": val.reset_index(drop=True)}
    return out


def plot_training(log: pd.DataFrame, paths: Sequence[str | os.PathLike[str]]) -> None:
    """Draw the training figure from a training log and write it to every path (format by suffix,
    atomically). An empty log gives a figure that says so."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    curves = training_curves(log)
    fig, (ax_mode, ax_olr) = plt.subplots(1, 2, figsize=(10, 3.8))
    for (model, task), c in curves.items():
        label = f"{model} / {task}"
        if len(c["mode"]):
            ax_mode.plot(c["mode"]["step"], c["mode"]["perf_mode_fraction"], marker=".", label=label)
        if len(c["validation"]):
            line, = ax_olr.plot(c["validation"]["step"], c["validation"]["val_olr"], marker="o", label=f"{label} OLR")
            ax_olr.plot(c["validation"]["step"], c["validation"]["val_olr_strict"], linestyle="--", color=line.get_color(),
                        label=f"{label} strict OLR")
    ax_mode.set(title="Groups in performance mode", xlabel="step", ylabel="fraction of groups", ylim=(-0.02, 1.02))
    ax_olr.set(title="Validation leakage (greedy)", xlabel="step (0 = base model)", ylabel="OLR", ylim=(-0.02, 1.02))
    for ax in (ax_mode, ax_olr):
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
