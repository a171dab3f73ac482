"""The dataset report (``results/datasets/report.md``): instances per task and split, the
point-in-time checks (cutoff rules, cutoffs moved, the input audit, labels of revised series),
exclusions, sources and the integrity checks of :func:`anachron.tasks.checks.check_instances`."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any, Mapping

import pandas as pd

#: Examples of each kind of input-audit finding shown per task.
AUDIT_EXAMPLES = 3


def _labels(df: pd.DataFrame) -> list[dict[str, Any]]:
    out = []
    for v in df["label"] if "label" in df.columns else []:
        try:
            d = json.loads(v)
        except (TypeError, ValueError):
            d = {}
        out.append(d if isinstance(d, dict) else {})
    return out


def _moved(df: pd.DataFrame, labels: list[dict[str, Any]]) -> list[str]:
    """Cutoffs other than the eve of the recorded signing (labels with ``signing_date``), per split:
    how many the cutoff rule moved earlier (the contract could be known before it was signed) or
    later (an undated signing's fallback day lay before its league's market opened)."""
    by_split: dict[str, list[int]] = {}
    for cut, lab, split in zip(df["cutoff_date"], labels, df["split"]):
        signed = str(lab.get("signing_date") or "")[:10]
        if len(signed) == 10:
            by_split.setdefault(str(split), []).append(
                (dt.date.fromisoformat(signed) - dt.date.fromisoformat(str(cut)[:10])).days - 1
            )
    parts = []
    for split, days in sorted(by_split.items()):
        earlier = sorted(d for d in days if d > 0)
        later = sum(1 for d in days if d < 0)
        med = earlier[len(earlier) // 2] if earlier else 0
        parts.append(f"{split} {len(earlier)} of {len(days)} earlier (median {med} days), {later} later")
    return ["- cutoffs moved from the eve of the recorded signing: " + "; ".join(parts)] if parts else []


def _revised(df: pd.DataFrame, labels: list[dict[str, Any]]) -> list[str]:
    """Share of labels resolved on a revised series (label ``revised_value``), per split."""
    if not any("revised_value" in lab for lab in labels):
        return []
    out = []
    for split in sorted(set(df["split"])):
        flags = [bool(lab.get("revised_value")) for lab, sp in zip(labels, df["split"]) if sp == split]
        out.append(f"{split} {sum(flags)} of {len(flags)} ({sum(flags) / max(1, len(flags)):.1%})")
    return ["- labels resolved on a revised series, not as first published (`revised_value`): " + "; ".join(out)]


def _audit(man: Mapping[str, Any], findings: pd.DataFrame | None) -> list[str]:
    audit = man.get("input_audit") or {}
    if not audit.get("fields"):
        return ["- input audit: no free text in the inputs"]
    kinds = audit.get("findings_by_kind") or {}
    by_split = audit.get("instances_flagged_by_split") or {}
    lines = [
        f"- input audit ({', '.join(audit['fields'])}; layers {audit.get('layers')}): "
        f"{audit.get('instances_flagged', 0)} instances flagged"
        + (f" ({', '.join(f'{k} {v}' for k, v in sorted(by_split.items()))})" if by_split else "")
        + "; findings: " + (", ".join(f"{k} {v}" for k, v in sorted(kinds.items())) or "none")
    ]
    if findings is not None and len(findings):
        for kind, g in findings.groupby("kind", sort=True):
            for r in g.head(AUDIT_EXAMPLES).itertuples():
                sentence = " ".join(str(r.sentence).split())
                lines.append(f"  - {kind}: `{r.instance_id}` {r.field}: \"{sentence[:160]}\" ({str(r.reason)[:100]})")
    return lines


def dataset_report(
    frames: Mapping[str, pd.DataFrame],
    problems: list[str],
    manifests: Mapping[str, dict],
    audits: Mapping[str, pd.DataFrame] | None = None,
) -> str:
    """Markdown report: counts per task and split, the point-in-time checks, exclusions by
    reason, sources and any violations.

    Args:
        frames: task -> instance table.
        problems: integrity violations (:func:`anachron.tasks.checks.check_instances`).
        manifests: task -> the build manifest (counts, cutoff rules, input audit, exclusions, sources).
        audits: task -> input-audit findings (:data:`anachron.tasks.audit.AUDIT_COLUMNS`), for examples.
    """
    lines = ["# Dataset report", ""]
    rows = []
    for task, df in frames.items():
        for split, g in df.groupby("split"):
            rows.append({"task": task, "split": split, "instances": len(g),
                         "first cutoff": g["cutoff_date"].min(), "last cutoff": g["cutoff_date"].max()})
    lines.append(pd.DataFrame(rows).to_markdown(index=False) if rows else "_no instances_")
    for task, man in manifests.items():
        df = frames.get(task)
        labels = _labels(df) if df is not None else []
        rules = man.get("cutoff_rules") or {}
        lines += ["", f"## {task}: point in time", ""]
        if rules:
            lines.append("- cutoff rules: " + "; ".join(f"{k}: {v}" for k, v in sorted(rules.items(), key=lambda kv: -kv[1])))
        if df is not None:
            lines += _moved(df, labels) + _revised(df, labels)
        lines += _audit(man, (audits or {}).get(task))
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
