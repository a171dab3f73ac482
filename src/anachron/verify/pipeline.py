"""Claim-level verification of a run: every evidence item gets a verdict (DESIGN §5).

For each evidence item of each parsed completion the verifier decides an
*effective date* from the most trustworthy layer that applies:

1. ``grounded``: a check against point-in-time data (:mod:`anachron.verify.grounded`);
2. ``rules``: the earliest realistic public date of the information
   (:mod:`anachron.verify.rules`); a declared date that is too early is corrected;
3. ``declared``: otherwise the model's own (normalised) ``source_date`` stands.

The claim leaks iff its effective date is after the cutoff (same day does not
leak unless ``leak_on_same_day``), or a grounded check found it states the
instance's own outcome. A claim with no usable date at all is ``undated``:
kept, counted apart, not leaked.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from typing import Any, Protocol

import pandas as pd

from anachron.verify.dates import normalize_declared
from anachron.verify.grounded import GroundedVerdict
from anachron.verify.rules import earliest_public_date

CLAIM_COLUMNS = [
    "task",
    "method",
    "model",
    "instance_id",
    "claim_id",
    "evidence_id",
    "fact",
    "declared_date_raw",
    "declared_date",
    "date_status",
    "date_rule",
    "effective_date",
    "cutoff_date",
    "category",
    "leaked",
    "verdict",
    "layer",
    "reason",
    "cited",
]

LAYERS = ("grounded", "rules")

_CITE = re.compile(r"\[([\d\s,;\-–]+)\]")


class Grounding(Protocol):
    """A task's grounded checks: ``check(fact, instance) -> GroundedVerdict | None``."""

    def check(self, fact: str, instance: dict[str, Any]) -> GroundedVerdict | None: ...


def cited_ids(reasoning: str) -> set[int]:
    """Evidence numbers cited in ``reasoning`` as [k], [1, 3], [1][2] or [2-4]."""
    out: set[int] = set()
    for m in _CITE.finditer(reasoning or ""):
        for part in re.split(r"[,;\s]+", m[1].strip()):
            if not part:
                continue
            rng = re.fullmatch(r"(\d+)\s*[-–]\s*(\d+)", part)
            if rng:
                a, b = int(rng[1]), int(rng[2])
                if 0 < b - a < 50:
                    out.update(range(a, b + 1))
            elif part.isdigit():
                out.add(int(part))
    return out


def verify_claim(
    fact: str,
    declared_raw: str | None,
    cutoff: dt.date,
    *,
    instance: dict[str, Any] | None = None,
    grounding: Grounding | None = None,
    layers: tuple[str, ...] = LAYERS,
    leak_on_same_day: bool = False,
) -> dict[str, Any]:
    """Verify one claim; returns the verdict fields of :data:`CLAIM_COLUMNS`.

    Args:
        fact: claim text.
        declared_raw: the model's ``source_date`` as written (may be None or junk).
        cutoff: the instance's cutoff date.
        instance: task context for grounded checks (see the grounding class).
        grounding: the task's grounded checks, or None.
        layers: which of ``grounded``, ``rules`` to apply.
        leak_on_same_day: if True, a claim dated on the cutoff day leaks too.
    """
    declared = normalize_declared(declared_raw)
    out: dict[str, Any] = {
        "declared_date_raw": declared_raw,
        "declared_date": declared.date.isoformat() if declared.date else None,
        "date_status": declared.status,
        "date_rule": declared.rule,
        "category": None,
    }
    effective: dt.date | None
    outcome = False
    g = grounding.check(fact, instance or {}) if grounding is not None and "grounded" in layers else None
    if g is not None:
        effective, layer, reason, outcome = g.effective_date, "grounded", g.reason, g.outcome
        out["category"] = g.category
    else:
        finding = earliest_public_date(fact) if "rules" in layers else None
        if declared.date is not None and finding is not None and finding.earliest > declared.date:
            effective, layer = finding.earliest, "rules"
            reason = f"declared {declared.date} is too early ({finding.rule}); corrected to {finding.earliest}"
        elif declared.date is not None:
            effective, layer, reason = declared.date, "declared", "declared date is plausible"
        elif finding is not None:
            effective, layer = finding.earliest, "rules"
            reason = f"no usable declared date; dated from the text ({finding.rule})"
        else:
            effective, layer, reason = None, "none", f"undated: {declared.rule}"
    if effective is None:
        leaked, verdict = False, "undated"
    else:
        leaked = outcome or effective > cutoff or (leak_on_same_day and effective == cutoff)
        verdict = "leaked" if leaked else "clean"
    out.update(
        effective_date=effective.isoformat() if effective else None,
        leaked=bool(leaked),
        verdict=verdict,
        layer=layer,
        reason=reason,
    )
    return out


def verify_run(
    run: pd.DataFrame,
    contexts: dict[str, dict[str, Any]],
    *,
    grounding: Grounding | None = None,
    layers: tuple[str, ...] = LAYERS,
    leak_on_same_day: bool = False,
) -> pd.DataFrame:
    """One row per evidence item of every usable completion in ``run``.

    Args:
        run: a run table (``RUN_COLUMNS`` of :mod:`anachron.methods.base`).
        contexts: instance_id -> grounding context (``cutoff_date`` at least).
        grounding: the task's grounded checks, or None.
        layers: verifier layers to apply.
        leak_on_same_day: see :func:`verify_claim`.

    Returns:
        DataFrame with :data:`CLAIM_COLUMNS` (empty, with those columns, if no claims).
    """
    rows: list[dict[str, Any]] = []
    for r in run.itertuples(index=False):
        evidence = json.loads(r.evidence or "[]")
        if not evidence:
            continue
        ctx = contexts[r.instance_id]
        cutoff = dt.date.fromisoformat(r.cutoff_date)
        cited = cited_ids(r.reasoning)
        for k, item in enumerate(evidence, start=1):
            eid = item.get("id") or k
            verdict = verify_claim(
                item["fact"],
                item.get("source_date"),
                cutoff,
                instance=ctx,
                grounding=grounding,
                layers=layers,
                leak_on_same_day=leak_on_same_day,
            )
            rows.append(
                {
                    "task": r.task,
                    "method": r.method,
                    "model": r.model,
                    "instance_id": r.instance_id,
                    "claim_id": f"{r.instance_id}:{k}",
                    "evidence_id": int(eid),
                    "fact": item["fact"],
                    "cutoff_date": r.cutoff_date,
                    "cited": int(eid) in cited,
                    **verdict,
                }
            )
    return pd.DataFrame(rows, columns=CLAIM_COLUMNS)
