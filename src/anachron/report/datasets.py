"""The dataset report (``results/datasets/report.md``): instances per task and split, exclusions,
sources and the integrity checks of :func:`anachron.tasks.checks.check_instances`."""

from __future__ import annotations

from typing import Mapping

import pandas as pd


def dataset_report(frames: Mapping[str, pd.DataFrame], problems: list[str], manifests: Mapping[str, dict]) -> str:
    """Markdown report: counts per task and split, exclusions by reason, and any violations."""
    lines = ["# Dataset report", ""]
    rows = []
    for task, df in frames.items():
        for split, g in df.groupby("split"):
            rows.append({"task": task, "split": split, "instances": len(g),
                         "first cutoff": g["cutoff_date"].min(), "last cutoff": g["cutoff_date"].max()})
    lines.append(pd.DataFrame(rows).to_markdown(index=False) if rows else "_no instances_")
    for task, man in manifests.items():
        excl = man.get("exclusions_by_reason") or {}
        if excl:
            lines += ["", f"## {task}: exclusions", ""]
            lines += [f"- {reason}: {n}" for reason, n in sorted(excl.items(), key=lambda kv: -kv[1])]
        for source, skipped in (man.get("source_skipped_by_reason") or {}).items():
            lines += ["", f"## {task}: rows skipped while reading {source}", ""]
            lines += [f"- {reason}: {n}" for reason, n in sorted(skipped.items(), key=lambda kv: -kv[1])]
        sources = man.get("sources") or []
        if sources:
            lines += ["", f"## {task}: sources", ""]
            lines += [f"- {s.get('origin')} (sha256 {str(s.get('sha256'))[:12]}…, {s.get('rows')} rows)" for s in sources]
    lines += ["", "## Checks", ""]
    lines += [f"- VIOLATION: {p}" for p in problems] or ["- all checks passed: ISO cutoffs, unique ids, no train/eval overlap, control after every model's knowledge cutoff"]
    return "\n".join(lines) + "\n"
