"""The TEMPO training curves: the two-phase curriculum, output health and validation leakage.

:func:`training_curves` splits a training log into the series that
:func:`anachron.report.figures.training_figure` draws (``results/figures/training.png``): the
fraction of GRPO groups in performance mode per step (TEMPO paper, Table 3 and Corollary 1: it
should rise as leakage falls), the rollouts' parse failures and near misses per step (the format
penalty's side of the reward), and validation OLR, strict OLR and parse rate at the validation
steps, step 0 being the base model."""

from __future__ import annotations

import pandas as pd



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
