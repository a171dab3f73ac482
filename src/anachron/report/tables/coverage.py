"""Report table ``coverage``: per run, the mean Cov and the shares of instances whose Cov is above
90%, above 80% and 0 (TEMPO paper §4.3; docs/metrics.md#cov)."""

from __future__ import annotations

from anachron.report.tables.base import instance_shares

TABLE = instance_shares(
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
