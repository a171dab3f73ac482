"""Report table ``olr_bins``: per run, the instances binned by their own OLR (0, up to 5%, up to
10%, above 10%), which a mean OLR hides (docs/metrics.md#olr)."""

from __future__ import annotations

from anachron.report.tables.base import instance_shares

TABLE = instance_shares(
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
