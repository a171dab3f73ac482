"""OLR, Perf, Cov and parse rate, per instance and aggregated with bootstrap CIs.

Definitions (TEMPO paper, §5 and App. B; docs/metrics.md):

* OLR_j = n_leaked_j / n_claims_j over the evidence claims of an instance j with at least
  one (claims found in the reasoning are counted apart: ``n_reasoning_claims``);
  OLR = mean over those instances. Unparseable completions have no claims and are
  left out of OLR (they count against the parse rate instead).
* strict OLR_j = (n_leaked_j + n_undated_j + n_ambiguous_j) / n_claims_j: a claim the verifier
  could not date (``undated``) or whose date interval straddles the cutoff (``ambiguous``)
  counted as leaked, an upper bound of OLR_j.
* Perf_j: the task's score of a usable prediction (stock: (Spearman + 1) / 2).
* Cov_j = share of instance j's evidence items cited as [k] in its reasoning.
* parse rate = share of instances whose completion parsed with a usable prediction (final
  ``parse_status`` in ``PREDICTION_USABLE``, repaired answers included).

Every aggregate carries n (the instances it averages) and a percentile bootstrap
CI over instances.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Callable

import numpy as np
import pandas as pd

from anachron.frames import claim_flag
from anachron.tables import (
    EVIDENCE_USABLE,
    METRIC_COLUMNS,
    PREDICTION_USABLE,
    SCORE_COLUMNS,
    VERDICT_AMBIGUOUS,
    VERDICT_UNDATED,
)


def instance_scores(
    run: pd.DataFrame, claims: pd.DataFrame, perf_fn: Callable[[str, object], float]
) -> pd.DataFrame:
    """Per-instance scores (:data:`SCORE_COLUMNS`).

    Args:
        run: run table (one row per instance; ``parse_status``, ``prediction`` JSON).
        claims: claims table of the same run (one row per claim; ``verdict`` one of
            :data:`~anachron.tables.VERDICTS`; ``declared_only`` optional, False where absent).
        perf_fn: ``(instance_id, prediction) -> float`` in [0, 1].
    """
    import json

    by_inst = claims.groupby("instance_id") if len(claims) else None
    rows = []
    for r in run.itertuples(index=False):
        c = by_inst.get_group(r.instance_id) if by_inst is not None and r.instance_id in by_inst.groups else claims.iloc[0:0]
        reasoning = c[c["source"] == "reasoning"] if "source" in c.columns else c.iloc[0:0]
        if "source" in c.columns:
            c = c[c["source"] != "reasoning"]
        evidence_ok = r.parse_status in EVIDENCE_USABLE
        n_claims = int(len(c)) if evidence_ok else 0
        n_leaked = int(c["leaked"].sum()) if evidence_ok else 0
        n_cited = int(c["cited"].sum()) if evidence_ok else 0
        n_undated = int((c["verdict"] == VERDICT_UNDATED).sum()) if evidence_ok else 0
        n_ambiguous = int((c["verdict"] == VERDICT_AMBIGUOUS).sum()) if evidence_ok else 0
        unresolved = c["verdict"].isin([VERDICT_UNDATED, VERDICT_AMBIGUOUS])
        n_strict = int((claim_flag(c, "leaked") | unresolved).sum()) if evidence_ok else 0
        perf = np.nan
        if r.parse_status in PREDICTION_USABLE:
            perf = float(perf_fn(r.instance_id, json.loads(r.prediction)))
        rows.append(
            {
                "task": r.task,
                "method": r.method,
                "model": r.model,
                "split": r.split,
                "instance_id": r.instance_id,
                "parse_status": r.parse_status,
                "parsed": r.parse_status in PREDICTION_USABLE,
                "n_claims": n_claims,
                "n_leaked": n_leaked,
                "n_undated": n_undated,
                "n_ambiguous": n_ambiguous,
                "n_declared_only": int(claim_flag(c, "declared_only").sum()) if evidence_ok else 0,
                "n_reasoning_claims": int(len(reasoning)) if evidence_ok else 0,
                "n_reasoning_leaked": int(reasoning["leaked"].sum()) if evidence_ok else 0,
                "olr": n_leaked / n_claims if n_claims else np.nan,
                "olr_strict": n_strict / n_claims if n_claims else np.nan,
                "perf": perf,
                "n_evidence": n_claims,
                "n_cited": n_cited,
                "cov": n_cited / n_claims if n_claims else np.nan,
            }
        )
    return pd.DataFrame(rows, columns=SCORE_COLUMNS)


#: Resample index matrices kept by :func:`resample_indices` at most, in elements (8 bytes each: 64 MiB).
RESAMPLE_CACHE_ELEMENTS = 8 * 1024 * 1024
_RESAMPLES: OrderedDict[tuple[int, int, int], np.ndarray] = OrderedDict()


def resample_indices(n: int, n_resamples: int, seed: int) -> np.ndarray:
    """The ``(n_resamples, n)`` bootstrap indices of ``n`` values: ``default_rng(seed).integers(0, n,
    size=(n_resamples, n))``, the same for every call with the same arguments.

    Drawing them is most of a bootstrap's cost, and every metric of a run (and every run with as many
    instances) resamples the same ``n`` with the same seed, so the matrices are kept (least recently
    used first out, at most :data:`RESAMPLE_CACHE_ELEMENTS` elements in all; read-only arrays).
    """
    key = (int(n), int(n_resamples), int(seed))
    idx = _RESAMPLES.get(key)
    if idx is not None:
        _RESAMPLES.move_to_end(key)
        return idx
    idx = np.random.default_rng(seed).integers(0, n, size=(n_resamples, n))
    idx.flags.writeable = False
    if idx.size <= RESAMPLE_CACHE_ELEMENTS:
        _RESAMPLES[key] = idx
        while sum(a.size for a in _RESAMPLES.values()) > RESAMPLE_CACHE_ELEMENTS:
            _RESAMPLES.popitem(last=False)
    return idx


def bootstrap_ci(
    values: np.ndarray, *, n_resamples: int = 2000, confidence: float = 0.95, seed: int = 0
) -> tuple[float, float]:
    """Percentile bootstrap CI of the mean of ``values`` (1-D, NaNs dropped): instances resampled
    with replacement ``n_resamples`` times (:func:`resample_indices`), the ``(1 - confidence)/2``
    and ``(1 + confidence)/2`` quantiles of the resampled means (docs/metrics.md#aggregates).

    Returns (nan, nan) for an empty input and (x, x) for a single value.
    """
    v = np.asarray(values, dtype=float)
    v = v[~np.isnan(v)]
    if v.size == 0:
        return (np.nan, np.nan)
    if v.size == 1:
        return (float(v[0]), float(v[0]))
    means = v[resample_indices(v.size, n_resamples, seed)].mean(axis=1)
    alpha = (1.0 - confidence) / 2.0
    lo, hi = np.quantile(means, [alpha, 1.0 - alpha])
    return (float(lo), float(hi))


#: Shares of a run's evidence claims, pooled over its instances: metric -> the instance_scores count.
CLAIM_RATES = {"undated_rate": "n_undated", "ambiguous_rate": "n_ambiguous", "declared_only_rate": "n_declared_only"}


def _claim_rate(g: pd.DataFrame, count: str, **boot: object) -> tuple[float, float, float, int]:
    """(value, ci_low, ci_high, n) of the pooled share ``sum(count) / sum(n_claims)`` of the
    instances ``g``; the interval is the bootstrap of the per-instance shares over instances with
    claims; ``n`` the number of claims."""
    n_claims = int(g["n_claims"].sum())
    ratio = g[count].sum() / n_claims if n_claims else np.nan
    with_claims = g[g["n_claims"] > 0]
    lo, hi = bootstrap_ci((with_claims[count] / with_claims["n_claims"]).to_numpy(dtype=float), **boot)
    return float(ratio), lo, hi, n_claims


def aggregate(
    scores: pd.DataFrame, *, n_resamples: int = 2000, confidence: float = 0.95, seed: int = 0
) -> pd.DataFrame:
    """Aggregate instance scores into :data:`METRIC_COLUMNS` rows.

    Metrics per (task, method, model, split): ``olr``, ``perf``, ``cov``,
    ``parse_rate`` (all instances), ``olr_strict`` (means over instances with the bootstrap CI);
    then the claim shares of :data:`CLAIM_RATES`: ``undated_rate`` (claims without a usable
    date), ``ambiguous_rate`` (claims whose date interval straddles the cutoff),
    ``declared_only_rate`` (claims dated by the declared ``source_date`` alone), each pooled over
    the run's evidence claims with its CI over instances (see :func:`_claim_rate`).
    """
    boot = dict(n_resamples=n_resamples, confidence=confidence, seed=seed)
    out = []
    keys = ["task", "method", "model", "split"]
    for key, g in scores.groupby(keys, sort=True):
        base = dict(zip(keys, key))
        series = {
            "olr": g["olr"].to_numpy(dtype=float),
            "perf": g["perf"].to_numpy(dtype=float),
            "cov": g["cov"].to_numpy(dtype=float),
            "parse_rate": g["parsed"].to_numpy(dtype=float),
            "olr_strict": g["olr_strict"].to_numpy(dtype=float),
        }
        for metric, values in series.items():
            valid = values[~np.isnan(values)]
            lo, hi = bootstrap_ci(valid, **boot)
            out.append(
                {**base, "metric": metric, "value": float(valid.mean()) if valid.size else np.nan,
                 "ci_low": lo, "ci_high": hi, "n": int(valid.size)}
            )
        for metric, count in CLAIM_RATES.items():
            value, lo, hi, n = _claim_rate(g, count, **boot)
            out.append({**base, "metric": metric, "value": value, "ci_low": lo, "ci_high": hi, "n": n})
    return pd.DataFrame(out, columns=METRIC_COLUMNS)
