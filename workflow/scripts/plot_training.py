"""Glue for rule plot_training: performance-mode fraction and validation OLR over training steps."""

import pandas as pd

from anachron.logs import log_to
from anachron.report.training import plot_training

sm = snakemake  # noqa: F821 (injected by Snakemake)

with log_to(sm.log[0]) as log:
    logs = pd.concat([pd.read_parquet(p) for p in sm.input.logs], ignore_index=True) if sm.input.logs else pd.DataFrame()
    plot_training(logs, [sm.output.png, sm.output.pdf])
    log.info("plotted %d training runs", logs.groupby(["model", "task"]).ngroups if len(logs) else 0)
