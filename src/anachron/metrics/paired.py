"""Paired comparison of two runs over the same instances, and the enforcement-effect table.

Anachron v0 scorer (paired mode comparison; docs/metrics.md#paired-comparison): for per-instance scores ``a`` and
``b`` of two runs, over the instances both have,

* the mean difference ``b - a`` (for ``a`` = unrestricted and ``b`` = enforced, a negative
  difference is a leakage reduction),
* a paired percentile bootstrap CI of that mean (instances resampled as pairs),
* an exact two-sided sign test over the non-tied pairs (binomial, p = 1/2),
* improved / worsened / tied counts, where "improved" means lower when ``lower_is_better``
  (leakage metrics) and higher otherwise,
* the relative reduction ``(mean(a) - mean(b)) / mean(a)`` (v0's "relative reduction"; NaN when
  ``mean(a)`` is 0).

Both series must hold the same instance ids (an id in only one is an error naming it) and, by
default, values in [0, 1] (every score of the project is a rate); NaN values are undefined
scores and their pairs are left out.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Sequence

import numpy as np
import pandas as pd

from anachron.frames import is_nan
from anachron.metrics.core import bootstrap_ci

#: Differences smaller than this in absolute value count as ties.
TIE_TOLERANCE = 1e-12


class PairingError(ValueError):
    """Two score series that cannot be compared pair by pair (unpaired ids, out-of-range values)."""


def _few(ids: pd.Index, k: int = 10) -> str:
    shown = ", ".join(map(str, ids[:k]))
    return shown + (f", ... (+{len(ids) - k})" if len(ids) > k else "")


@dataclass(frozen=True)
class PairedResult:
    """The outcome of :func:`paired_comparison`.

    ``mean_diff`` = mean(b) - mean(a) over the ``n`` paired instances; ``ci_low`` /
    ``ci_high`` its paired percentile bootstrap CI at ``confidence``; ``p_value`` the exact
    two-sided sign-test p over ``improved + worsened`` non-tied pairs (1.0 when none);
    ``relative_reduction`` = (mean_a - mean_b) / mean_a (NaN when mean_a is 0 or there are no
    pairs); ``n_undefined`` the ids left out because a value is NaN.
    """

    n: int
    mean_a: float
    mean_b: float
    mean_diff: float
    ci_low: float
    ci_high: float
    p_value: float
    improved: int
    worsened: int
    tied: int
    confidence: float
    lower_is_better: bool
    relative_reduction: float = float("nan")
    n_undefined: int = 0

    def to_dict(self) -> dict[str, Any]:
        """The fields as a JSON-serialisable dict (NaN becomes None)."""
        return {k: (None if is_nan(v) else v) for k, v in asdict(self).items()}


def sign_test_p(improved: int, worsened: int) -> float:
    """Exact two-sided sign-test p-value for ``improved`` vs ``worsened`` pairs (1.0 when both are 0)."""
    n = improved + worsened
    if n == 0:
        return 1.0
    from scipy.stats import binomtest  # here, not at import: scipy.stats takes ~1 s to import, which every
    # load_results would pay for its derived tables, most of which need no sign test

    return float(binomtest(improved, n, 0.5, alternative="two-sided").pvalue)


def paired_comparison(
    a: pd.Series,
    b: pd.Series,
    *,
    n_resamples: int = 10000,
    confidence: float = 0.95,
    seed: int = 0,
    lower_is_better: bool = True,
    value_range: tuple[float, float] | None = (0.0, 1.0),
) -> PairedResult:
    """Compare per-instance scores ``b`` against ``a`` (both indexed by instance id).

    Every id must be in both series; pairs with a NaN on either side are left out (counted in
    ``n_undefined``). ``value_range``: the allowed closed interval of the values (None: any).

    Returns:
        :class:`PairedResult`; with no pairs, the means and CI are NaN, counts 0 and p 1.0.

    Raises:
        PairingError: duplicate ids, an id in only one series (named, up to 10 per side), or a
            value outside ``value_range`` (named).
    """
    for name, s in (("a", a), ("b", b)):
        if s.index.has_duplicates:
            dup = s.index[s.index.duplicated()].unique()[:5].tolist()
            raise PairingError(f"paired_comparison: series {name} repeats instance ids {dup}")
    only_a, only_b = a.index.difference(b.index), b.index.difference(a.index)
    if len(only_a) or len(only_b):
        parts = [f"{len(ids)} only in {name} ({_few(ids)})" for name, ids in (("a", only_a), ("b", only_b)) if len(ids)]
        raise PairingError(f"paired_comparison: unpaired instance ids: {'; '.join(parts)}")
    joined = pd.concat([a.rename("a").astype(float), b.rename("b").astype(float)], axis=1, join="inner")
    if value_range is not None:
        lo_v, hi_v = value_range
        for name in ("a", "b"):
            col = joined[name]
            bad = col[col.notna() & ((col < lo_v) | (col > hi_v))]
            if len(bad):
                shown = ", ".join(f"{k}={v:g}" for k, v in bad.head(10).items())
                raise PairingError(
                    f"paired_comparison: series {name} has {len(bad)} value(s) outside [{lo_v:g}, {hi_v:g}]: {shown}"
                )
    n_undefined = int(joined.isna().any(axis=1).sum())
    joined = joined.dropna()
    n = len(joined)
    if n == 0:
        nan = float("nan")
        return PairedResult(0, nan, nan, nan, nan, nan, 1.0, 0, 0, 0, confidence, lower_is_better, nan, n_undefined)
    va, vb = joined["a"].to_numpy(), joined["b"].to_numpy()
    d = vb - va
    tied = int(np.sum(np.abs(d) <= TIE_TOLERANCE))
    lower = int(np.sum(d < -TIE_TOLERANCE))
    higher = int(np.sum(d > TIE_TOLERANCE))
    improved, worsened = (lower, higher) if lower_is_better else (higher, lower)
    lo, hi = bootstrap_ci(d, n_resamples=n_resamples, confidence=confidence, seed=seed)
    return PairedResult(
        n=n,
        mean_a=float(va.mean()),
        mean_b=float(vb.mean()),
        mean_diff=float(d.mean()),
        ci_low=lo,
        ci_high=hi,
        p_value=sign_test_p(improved, worsened),
        improved=improved,
        worsened=worsened,
        tied=tied,
        confidence=confidence,
        lower_is_better=lower_is_better,
        relative_reduction=float((va.mean() - vb.mean()) / va.mean()) if va.mean() != 0 else float("nan"),
        n_undefined=n_undefined,
    )


#: Columns of :func:`enforcement_table`.
ENFORCEMENT_COLUMNS = [
    "task",
    "model",
    "split",
    "metric",
    "n",
    "unrestricted",
    "enforced",
    "diff",
    "ci_low",
    "ci_high",
    "p_value",
    "improved",
    "worsened",
    "tied",
    "relative_reduction",
    "status",
]


def enforcement_table(
    trace_scores: pd.DataFrame,
    *,
    metrics: Sequence[str] = ("tclr", "survivorship", "restatement"),
    unrestricted_method: str = "rag_unrestricted",
    enforced_method: str = "rag",
    n_resamples: int = 10000,
    confidence: float = 0.95,
    seed: int = 0,
) -> pd.DataFrame:
    """The enforcement effect: unrestricted vs enforced retrieval per task x model x split.

    Args:
        trace_scores: :func:`anachron.metrics.traces.trace_instance_scores` output for both
            methods (``task``, ``method``, ``model``, ``split``, ``instance_id`` and the metrics).
        metrics: which per-instance rates to compare (lower is better for each).
        unrestricted_method, enforced_method: the method names of the two modes.

    Returns:
        :data:`ENFORCEMENT_COLUMNS`, one row per (task, model, split, metric) where both
        methods ran: the two means over paired instances, ``diff`` = enforced - unrestricted
        (negative = the filter removed leakage), its paired bootstrap CI, the sign-test p and
        improved / worsened / tied counts (improved = lower under enforcement), the relative
        reduction and ``status``: ``"ok"``, or the :class:`PairingError` message (ids run by
        one method only, an out-of-range rate) with the statistics left NaN.
    """
    if not len(trace_scores):
        return pd.DataFrame(columns=ENFORCEMENT_COLUMNS)
    scores = trace_scores if "split" in trace_scores else trace_scores.assign(split="eval")
    rows = []
    for (task, model, split), g in scores.groupby(["task", "model", "split"], sort=True):
        un = g[g["method"] == unrestricted_method].set_index("instance_id")
        en = g[g["method"] == enforced_method].set_index("instance_id")
        if not len(un) or not len(en):
            continue
        for metric in metrics:
            base = {"task": task, "model": model, "split": split, "metric": metric}
            try:
                r = paired_comparison(un[metric], en[metric], n_resamples=n_resamples, confidence=confidence,
                                      seed=seed)
            except PairingError as exc:
                nan = float("nan")
                rows.append({**base, "n": 0, "unrestricted": nan, "enforced": nan, "diff": nan, "ci_low": nan,
                             "ci_high": nan, "p_value": nan, "improved": 0, "worsened": 0, "tied": 0,
                             "relative_reduction": nan, "status": str(exc)})
                continue
            rows.append(
                {**base, "n": r.n,
                 "unrestricted": r.mean_a, "enforced": r.mean_b, "diff": r.mean_diff, "ci_low": r.ci_low,
                 "ci_high": r.ci_high, "p_value": r.p_value, "improved": r.improved, "worsened": r.worsened,
                 "tied": r.tied, "relative_reduction": r.relative_reduction, "status": "ok"}
            )
    return pd.DataFrame(rows, columns=ENFORCEMENT_COLUMNS)
