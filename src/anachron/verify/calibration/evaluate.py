"""Calibration of the claim verifier against planted claims of known truth (docs/verification.md#calibration).

The verifier is the measuring instrument of every leakage number, so it is
tested on claims whose truth we know: facts taken from the project's own
point-in-time data (closing prices, EDGAR filings, S&P 500 index changes,
contracts, Supreme Court decisions, ForecastBench resolutions), written in the
wording styles models use, and planted on real instances with their real cutoff
(:mod:`anachron.verify.calibration.planting`: the kinds ``post_cutoff``, ``pre_cutoff`` and
``outcome``, each task's planter in its package).

``calibrate`` runs a verifier over the planted claims for several layer sets and
reports recall on leaks (``post_cutoff``, ``outcome``, and both together) and the
false-positive rate on ``pre_cutoff``, each with a Wilson 95% interval, per task
and per wording style. The acceptance bar (docs/verification.md#calibration) is recall >= 0.95 and
false positives <= 1% per task with the grounded and rules layers.

Definitions: TimeSPEC (claim taxonomy, A4 outcome claims always leak); TEMPO
App. I.4 (date-plausibility rules); docs/verification.md#layers (verifier layers); docs/metrics.md#control-floor (control
runs give the false-positive floor; the paper reports a control OLR of 0.0-0.7%).
"""

from __future__ import annotations

import math
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from anachron.frames import claim_flag
from anachron.tables import CALIBRATION_COLUMNS, VERDICT_AMBIGUOUS, VERDICT_UNDATED
from anachron.verify.calibration.planting import KINDS, LEAK_KINDS
from anachron.verify.task_rules import TaskRules

#: Summary row kind that pools ``post_cutoff`` and ``outcome`` (the "planted leaks").
ALL_LEAKS = "all_leaks"
#: Acceptance bar (docs/verification.md#calibration; grounded + rules layers, per task).
RECALL_MIN = 0.95
FP_MAX = 0.01
#: Control-split OLR range the paper reports (docs/metrics.md#control-floor), as fractions.
PAPER_CONTROL_OLR = (0.0, 0.007)

VerifyFn = Callable[[pd.DataFrame, tuple[str, ...]], pd.DataFrame]

# ---------------------------------------------------------------------------
# verification and calibration


def layers_name(layers: Iterable[str]) -> str:
    """("grounded", "rules") -> "grounded+rules"."""
    return "+".join(layers)


def default_verify_fn(groundings: Mapping[str, Any], contexts: Mapping[str, Mapping[str, Any]], *, leak_on_same_day: bool = False) -> VerifyFn:
    """A ``verify_fn`` built on :func:`anachron.verify.pipeline.verify_claim`.

    Args:
        groundings: task -> grounding object (``check(fact, instance)``) or None.
        contexts: instance_id -> the task's grounding context (``Task.grounding_context``).
        leak_on_same_day: passed to ``verify_claim``.

    Returns:
        ``fn(planted, layers) -> DataFrame`` aligned to ``planted``'s rows with columns
        leaked, verdict (leaked / clean / undated / ambiguous), layer, reason, effective_date
        (and ``declared_only`` where the verifier sets it).
        Undated and ambiguous claims are not flagged (``leaked`` False); :func:`calibrate` counts them.
    """
    from anachron.verify.pipeline import verify_table

    def fn(planted: pd.DataFrame, layers: tuple[str, ...]) -> pd.DataFrame:
        return verify_table(planted, dict(contexts), dict(groundings), tuple(layers), leak_on_same_day=leak_on_same_day)

    return fn


def grounding_contexts(task: TaskRules, instances: pd.DataFrame) -> dict[str, dict[str, Any]]:
    """instance_id -> ``task.grounding_context(row)`` for every row of ``instances``."""
    return {r["instance_id"]: task.grounding_context(r) for r in instances.to_dict("records")}


def verify_planted(planted: pd.DataFrame, verify_fn: VerifyFn, layer_sets: Iterable[Sequence[str]]) -> pd.DataFrame:
    """Planted claims with the verifier's answer, one block of rows per layer set.

    Returns:
        ``planted`` columns + layers (name), leaked, verdict, layer, reason (and whatever
        else ``verify_fn`` returns), ``declared_only`` (False where ``verify_fn`` gives none),
        ``flagged`` (= leaked, bool), ``correct``.

    Raises:
        ValueError: ``verify_fn`` returned a frame of the wrong length or without ``leaked``.
    """
    blocks = []
    planted = planted.reset_index(drop=True)
    for layers in layer_sets:
        layers = tuple(layers)
        res = verify_fn(planted, layers)
        if len(res) != len(planted) or "leaked" not in res:
            raise ValueError(f"verify_fn returned {len(res)} rows (need {len(planted)}) or no 'leaked' column")
        res = res.reset_index(drop=True)
        block = planted.copy()
        block["layers"] = layers_name(layers)
        for col in res.columns:
            block[col] = res[col].to_numpy()
        if "verdict" not in block:
            block["verdict"] = np.where(block["leaked"], "leaked", "clean")
        block["declared_only"] = claim_flag(block, "declared_only")
        block["flagged"] = block["leaked"].fillna(False).astype(bool)
        block["correct"] = block["flagged"] == block["truth_leaked"].astype(bool)
        blocks.append(block)
    return pd.concat(blocks, ignore_index=True) if blocks else planted.assign(layers=pd.Series(dtype=str))


def wilson_ci(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval for a proportion k/n (nan, nan when n == 0)."""
    if n <= 0:
        return float("nan"), float("nan")
    p = k / n
    den = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return max(0.0, centre - half), min(1.0, centre + half)


def _summary_row(task: str, layers: str, kind: str, style: str, sub: pd.DataFrame) -> dict[str, Any]:
    n = len(sub)
    k = int(sub["flagged"].sum())
    lo, hi = wilson_ci(k, n)
    return dict(task=task, layers=layers, kind=kind, style=style,
                metric="fp_rate" if kind == "pre_cutoff" else "recall", n=n, n_flagged=k,
                n_undated=int((sub["verdict"] == VERDICT_UNDATED).sum()),
                n_ambiguous=int((sub["verdict"] == VERDICT_AMBIGUOUS).sum()),
                n_declared_only=int(claim_flag(sub, "declared_only").sum()), rate=k / n if n else float("nan"),
                ci_low=lo, ci_high=hi)


def summarize_calibration(verified: pd.DataFrame) -> pd.DataFrame:
    """Rates from :func:`verify_planted` output.

    Rows per (task, layers, kind) with ``style == "all"``, a pooled ``all_leaks`` row
    (post_cutoff + outcome), rows per facet of the style (``family=price``,
    ``wording=price:close_active_name``, ``date=on_day``, ``declared=missing``, and per family
    ``family_date=news:us_short``, ``family_declared=news:false_early``) and rows per
    full style (``family:wording:date:declared=...``). ``rate`` is the
    share flagged: recall for leak kinds, the false-positive rate for ``pre_cutoff``;
    Wilson 95% interval; ``n_undated`` claims got no date and ``n_ambiguous`` ones a date interval
    that straddles the cutoff (both counted as not flagged); ``n_declared_only`` were dated by the
    declared date alone (flagged or not).
    """
    rows = []
    for (task, layers), g in verified.groupby(["task", "layers"], sort=True):
        for kind in KINDS:
            sub = g[g["kind"] == kind]
            if len(sub):
                rows.append(_summary_row(task, layers, kind, "all", sub))
        leaks = g[g["kind"].isin(LEAK_KINDS)]
        if len(leaks):
            rows.append(_summary_row(task, layers, ALL_LEAKS, "all", leaks))
        parts = g["style"].str.split(":")
        declared = parts.str[3].str.replace("declared=", "", regex=False)
        facets = {
            "family": parts.str[0],
            "wording": parts.str[0] + ":" + parts.str[1],
            "date": parts.str[2],
            "declared": declared,
            "family_date": parts.str[0] + ":" + parts.str[2],
            "family_declared": parts.str[0] + ":" + declared,
        }
        for facet, values in facets.items():
            for (kind, value), sub in g.assign(_v=values.to_numpy()).groupby(["kind", "_v"], sort=True):
                rows.append(_summary_row(task, layers, kind, f"{facet}={value}", sub))
        for (kind, style), sub in g.groupby(["kind", "style"], sort=True):
            rows.append(_summary_row(task, layers, kind, style, sub))
    return pd.DataFrame(rows, columns=CALIBRATION_COLUMNS)


def calibrate(planted: pd.DataFrame, verify_fn: VerifyFn, layer_sets: Iterable[Sequence[str]]) -> pd.DataFrame:
    """Recall on planted leaks and false-positive rate on planted clean claims.

    Args:
        planted: :func:`~anachron.verify.calibration.plant.plant_claims` output (several tasks may be concatenated).
        verify_fn: ``fn(planted, layers) -> DataFrame`` aligned to ``planted`` with at
            least ``leaked`` (and ``verdict``, ``layer``); see :func:`default_verify_fn`.
        layer_sets: e.g. ``[("grounded", "rules"), ("rules",)]``.

    Returns:
        DataFrame with :data:`CALIBRATION_COLUMNS` (see :func:`summarize_calibration`).
    """
    return summarize_calibration(verify_planted(planted, verify_fn, layer_sets))

