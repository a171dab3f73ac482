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


def _count_blocks(n: int, n_resamples: int, seed: int):
    """The resample counts of :func:`resample_indices`'s draws, as float ``(rows, n)`` blocks in resample
    order: ``counts[b, i]`` = how often value ``i`` is drawn in resample ``b``. Blocks hold at most
    :data:`COUNT_BLOCK_ELEMENTS` elements; the draws come from one generator in order, so the blocks stack
    to exactly the counts of ``default_rng(seed).integers(0, n, size=(n_resamples, n))``. A matrix of at
    most :data:`RESAMPLE_CACHE_ELEMENTS` elements is kept (one block)."""
    key = (int(n), int(n_resamples), int(seed))
    cached = _COUNTS.get(key)
    if cached is not None:
        _COUNTS.move_to_end(key)
        yield cached
        return
    keep = n * n_resamples <= RESAMPLE_CACHE_ELEMENTS
    rng = np.random.default_rng(seed)
    rows = n_resamples if keep else max(1, COUNT_BLOCK_ELEMENTS // n)
    for start in range(0, n_resamples, rows):
        k = min(rows, n_resamples - start)
        idx = rng.integers(0, n, size=(k, n))
        idx += (np.arange(k) * n)[:, None]
        block = np.bincount(idx.ravel(), minlength=k * n).reshape(k, n).astype(float)
        if keep:
            block.flags.writeable = False
            _COUNTS[key] = block
            while sum(a.size for a in _COUNTS.values()) > RESAMPLE_CACHE_ELEMENTS:
                _COUNTS.popitem(last=False)
        yield block


#: Largest block of resample counts :func:`_count_blocks` builds at once when the whole matrix is not kept.
COUNT_BLOCK_ELEMENTS = 4 * 1024 * 1024
_COUNTS: OrderedDict[tuple[int, int, int], np.ndarray] = OrderedDict()


def bootstrap_cis(
    vectors: list[np.ndarray], *, n_resamples: int = 2000, confidence: float = 0.95, seed: int = 0
) -> list[tuple[float, float]]:
    """:func:`bootstrap_ci` of each of ``vectors`` (1-D, NaNs dropped), computed together.

    The resampled means of every vector of one length come from one matrix product: the counts of
    how often each instance is drawn in each resample (the same draws as :func:`resample_indices`,
    so the same resamples as one gather per vector) times the vectors stacked as columns, divided
    by n. A mean of 0/1 values equals the gathered one exactly; others differ from it by float
    rounding only (the terms are summed in another order, about 1e-16). Memory per length: the
    counts (``n_resamples x n`` floats, in blocks of at most :data:`COUNT_BLOCK_ELEMENTS`) and the
    ``n_resamples x k`` means of its ``k`` vectors.

    Returns:
        ``(low, high)`` per vector, in order: (nan, nan) for one without a value, (x, x) for one
        with a single value.
    """
    out: list[tuple[float, float]] = [(np.nan, np.nan)] * len(vectors)
    alpha = (1.0 - confidence) / 2.0
    by_size: dict[int, list[tuple[int, np.ndarray]]] = {}
    for j, values in enumerate(vectors):
        v = np.asarray(values, dtype=float)
        v = v[~np.isnan(v)]
        if v.size == 1:
            out[j] = (float(v[0]), float(v[0]))
        elif v.size > 1:
            by_size.setdefault(int(v.size), []).append((j, v))
    for n, items in by_size.items():
        stacked = np.column_stack([v for _, v in items])
        means = np.vstack([block @ stacked for block in _count_blocks(n, n_resamples, seed)]) / n
        lo, hi = np.quantile(means, [alpha, 1.0 - alpha], axis=0)
        for col, (j, _) in enumerate(items):
            out[j] = (float(lo[col]), float(hi[col]))
    return out


def bootstrap_ci(
    values: np.ndarray, *, n_resamples: int = 2000, confidence: float = 0.95, seed: int = 0
) -> tuple[float, float]:
    """Percentile bootstrap CI of the mean of ``values`` (1-D, NaNs dropped): instances resampled
    with replacement ``n_resamples`` times (:func:`resample_indices`), the ``(1 - confidence)/2``
    and ``(1 + confidence)/2`` quantiles of the resampled means (docs/metrics.md#aggregates).
    Many vectors at once: :func:`bootstrap_cis` (one matrix product per length).

    Returns (nan, nan) for an empty input and (x, x) for a single value.
    """
    return bootstrap_cis([values], n_resamples=n_resamples, confidence=confidence, seed=seed)[0]


def fill_cis(rows: list[dict], vectors: list[np.ndarray | None], **boot: object) -> list[dict]:
    """Set ``ci_low`` / ``ci_high`` of each metric row from :func:`bootstrap_cis` of its vector (rows
    whose vector is None keep theirs); ``rows`` and ``vectors`` align. Returns ``rows``."""
    todo = [(r, v) for r, v in zip(rows, vectors) if v is not None]
    for r, (lo, hi) in zip((r for r, _ in todo), bootstrap_cis([v for _, v in todo], **boot)):
        r["ci_low"], r["ci_high"] = lo, hi
    return rows


#: Shares of a run's evidence claims, pooled over its instances: metric -> the instance_scores count.
CLAIM_RATES = {"undated_rate": "n_undated", "ambiguous_rate": "n_ambiguous", "declared_only_rate": "n_declared_only"}


def _claim_rate(g: pd.DataFrame, count: str) -> tuple[float, np.ndarray, int]:
    """(value, per-instance shares, n) of the pooled share ``sum(count) / sum(n_claims)`` of the
    instances ``g``; its interval is the bootstrap of the per-instance shares over instances with
    claims; ``n`` the number of claims."""
    n_claims = int(g["n_claims"].sum())
    ratio = g[count].sum() / n_claims if n_claims else np.nan
    with_claims = g[g["n_claims"] > 0]
    return float(ratio), (with_claims[count] / with_claims["n_claims"]).to_numpy(dtype=float), n_claims


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
    out: list[dict] = []
    vectors: list[np.ndarray] = []
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
            out.append(
                {**base, "metric": metric, "value": float(valid.mean()) if valid.size else np.nan,
                 "ci_low": np.nan, "ci_high": np.nan, "n": int(valid.size)}
            )
            vectors.append(valid)
        for metric, count in CLAIM_RATES.items():
            value, shares, n = _claim_rate(g, count)
            out.append({**base, "metric": metric, "value": value, "ci_low": np.nan, "ci_high": np.nan, "n": n})
            vectors.append(shares)
    return pd.DataFrame(fill_cis(out, vectors, **boot), columns=METRIC_COLUMNS)
