"""Shapley values of claims, Shapley-DCLR and Top-K leak share.

A *game* here has ``n`` players (the atomic claims of one completion) and a value function
``v`` over coalitions (subsets of the claims). In anachron ``v(S)`` is the task score of the
model's prediction when it sees the task input and only the claims in ``S`` (closed world;
docs/metrics.md#shapley-dclr), so every distinct coalition costs one model call. This module holds only the
math; the caller supplies ``v`` as a :data:`ValueFn` (the model-backed one is
:class:`anachron.attribution.shapley.ModelValue`). :func:`aggregate_shapley` averages the
per-instance Shapley-DCLR and Top-K into metric rows.

Definitions:

* Shapley value (Shapley, 1953): ``phi_i = sum_{S ⊆ N\\{i}} |S|! (n-|S|-1)! / n! *
  (v(S ∪ {i}) - v(S))``. It satisfies efficiency: ``sum_i phi_i = v(N) - v(∅)``.
* Kernel SHAP (Lundberg & Lee, 2017): the Shapley values are the solution of the
  constrained weighted least-squares problem ``min_phi sum_{0<|z|<n} w(z) (z·phi -
  (v(z) - v(∅)))^2`` subject to ``sum(phi) = v(N) - v(∅)``, with kernel weights
  ``w(z) = (n-1) / (C(n,|z|) |z| (n-|z|))``.
* Leverage SHAP (Musco & Witter, 2024, "Provably accurate Shapley value estimation via
  leverage score sampling"): solve that regression on a sample of coalitions drawn by the
  leverage scores of its (constraint-projected) design matrix. Those scores are
  proportional to ``1 / C(n,|z|)``, i.e. every coalition SIZE carries the same total
  leverage. The paper samples without replacement and in complementary pairs and
  enforces the constraint exactly by projection. See :func:`leverage_shap` for the
  variant implemented here.
* Shapley-DCLR (TimeSPEC paper, §4.2, Eq. 4): ``sum_i |phi_i| l_i / sum_i |phi_i|`` with
  ``l_i`` = 1 when claim ``i`` leaked. Top-K (same paper, App. Eq. 7; docs/metrics.md#top-k): the share
  of the ``K`` claims with the largest ``|phi_i|`` that leaked.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any, Callable, Literal

import numpy as np
import pandas as pd

from anachron.metrics.core import fill_cis
from anachron.tables import METRIC_COLUMNS

#: A value function: boolean masks of shape ``(m, n)`` (row ``r`` = one coalition; column
#: ``i`` True when claim ``i`` is in it) -> ``m`` float values. Called in batches so that the
#: caller can run the model calls of one batch concurrently.
ValueFn = Callable[[np.ndarray], np.ndarray]

#: Default largest ``n`` that :func:`shapley_values` enumerates exactly (2^20 coalitions).
EXACT_MAX = 20
#: The K of the Top-K leak shares recorded per instance (``top1``, ``top3``, ``top5``).
TOP_K = (1, 3, 5)


@dataclass(frozen=True)
class ShapleyResult:
    """The outcome of :func:`shapley_values`.

    ``phi``: shape ``(n,)``, claim ``i``'s Shapley value in the units of the value function
    (a task score); ``method``: ``"exact"`` (all ``2^n`` coalitions), ``"leverage"``
    (Leverage SHAP estimate) or ``"trivial"`` (``n <= 1``); ``n_calls``: distinct coalitions
    evaluated (= model calls); ``v_empty`` / ``v_all``: value of the empty / full coalition
    (NaN when ``n == 0``, where nothing is evaluated).
    """

    phi: np.ndarray
    method: Literal["exact", "leverage", "trivial"]
    n_calls: int
    v_empty: float
    v_all: float


class _Oracle:
    """Memoizing, budget-checking wrapper around a :data:`ValueFn` for one computation.

    Coalitions are keyed by their packed mask bytes; a batch is de-duplicated and only the
    coalitions never seen before are passed to ``value_fn`` (in one call). ``n_calls``
    counts the distinct coalitions evaluated.
    """

    def __init__(self, n: int, value_fn: ValueFn, budget: int | None = None) -> None:
        self.n = n
        self.value_fn = value_fn
        self.budget = budget
        self.cache: dict[bytes, float] = {}

    @property
    def n_calls(self) -> int:
        return len(self.cache)

    def __call__(self, masks: np.ndarray) -> np.ndarray:
        masks = np.asarray(masks, dtype=bool).reshape(-1, self.n)
        keys = [np.packbits(row).tobytes() for row in masks]
        new: dict[bytes, int] = {}
        for r, k in enumerate(keys):
            if k not in self.cache and k not in new:
                new[k] = r
        if new:
            if self.budget is not None and self.n_calls + len(new) > self.budget:
                raise RuntimeError(  # internal invariant: the samplers never overspend
                    f"would evaluate {self.n_calls + len(new)} coalitions, budget is {self.budget}"
                )
            rows = list(new.values())
            vals = np.asarray(self.value_fn(masks[rows].copy()), dtype=float)
            if vals.shape != (len(rows),):
                raise ValueError(
                    f"value_fn returned shape {vals.shape} for {len(rows)} coalitions; expected ({len(rows)},)"
                )
            if not np.all(np.isfinite(vals)):
                raise ValueError("value_fn returned non-finite values (NaN or inf); score failures explicitly")
            for k, val in zip(new, vals):
                self.cache[k] = float(val)
        return np.array([self.cache[k] for k in keys], dtype=float)


def _all_masks(n: int) -> np.ndarray:
    """All ``2^n`` coalitions, shape ``(2^n, n)``; row ``k`` holds bit ``i`` of ``k`` in column ``i``."""
    k = np.arange(1 << n, dtype=np.int64)
    return ((k[:, None] >> np.arange(n, dtype=np.int64)) & 1).astype(bool)


def _exact_from_oracle(n: int, oracle: _Oracle) -> np.ndarray:
    masks = _all_masks(n)
    v = oracle(masks)
    sizes = masks.sum(axis=1)
    # weight of a marginal contribution v(S+i) - v(S) for |S| = s: s! (n-s-1)! / n!
    w = np.array([1.0 / (n * math.comb(n - 1, s)) for s in range(n)])
    idx = np.arange(1 << n, dtype=np.int64)
    phi = np.empty(n)
    for i in range(n):
        without = idx[(idx >> i) & 1 == 0]
        phi[i] = np.dot(w[sizes[without]], v[without | (1 << i)] - v[without])
    return phi


def exact_shapley(n: int, value_fn: ValueFn) -> np.ndarray:
    """Exact Shapley values by enumerating all ``2^n`` coalitions (one batched call).

    Args:
        n: number of players (claims), ``n >= 0``.
        value_fn: see :data:`ValueFn`.

    Returns:
        ``phi``, shape ``(n,)``, in the units of ``value_fn``; ``sum(phi) = v(N) - v(∅)`` up
        to float rounding.

    Raises:
        ValueError: ``n < 0``, or ``value_fn`` returned a wrong shape or non-finite values.

    Definition: Shapley (1953); the classic weights ``|S|! (n-|S|-1)! / n!``.
    """
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    if n == 0:
        return np.zeros(0)
    return _exact_from_oracle(n, _Oracle(n, value_fn))


def _pair_allocation(n: int, n_pairs: int, rng: np.random.Generator) -> dict[int, int]:
    """How many complementary pairs to draw from each size group ``g = 1..floor(n/2)``.

    Group ``g < n/2`` holds the pairs (S, N\\S) with ``|S| = g`` (capacity ``C(n,g)``; each pair
    gives one coalition of size ``g`` and one of size ``n-g``); group ``g = n/2`` (n even)
    holds the pairs of two halves (capacity ``C(n,n/2)/2``; each pair gives two coalitions of
    size ``n/2``). Leverage scores give every size the same mass, so the target is the same
    number ``c`` of coalitions per size, capped at ``C(n,s)``: ``min(C(n,g), c)`` pairs for
    ``g < n/2`` and ``min(C(n,n/2)/2, c/2)`` for ``g = n/2``, with ``c`` set by water-filling
    so the total is ``n_pairs``. The integer remainder goes to the groups with the largest
    fractional targets (ties broken at random).
    """
    groups = list(range(1, n // 2 + 1))
    cap = {g: (math.comb(n, g) // 2 if 2 * g == n else math.comb(n, g)) for g in groups}
    mass = {g: (0.5 if 2 * g == n else 1.0) for g in groups}
    total = sum(cap.values())
    if n_pairs >= total:
        return dict(cap)
    # water-filling: groups fill up in order of cap/mass
    order = sorted(groups, key=lambda g: cap[g] / mass[g])
    remaining, open_mass = float(n_pairs), sum(mass.values())
    target: dict[int, float] = {}
    for j, g in enumerate(order):
        c = remaining / open_mass
        if cap[g] <= c * mass[g]:
            target[g] = float(cap[g])
            remaining -= cap[g]
            open_mass -= mass[g]
        else:
            for h in order[j:]:
                target[h] = c * mass[h]
            break
    alloc = {g: min(cap[g], int(math.floor(target[g] + 1e-9))) for g in groups}
    left = n_pairs - sum(alloc.values())
    if left > 0:
        tiebreak = rng.random(len(groups))
        cand = sorted(
            (g for g in groups if alloc[g] < cap[g]),
            key=lambda g: (-(target[g] - alloc[g]), tiebreak[g - 1]),
        )
        for g in cand[:left]:
            alloc[g] += 1
    return alloc


def _draw_subsets(n: int, size: int, k: int, rng: np.random.Generator, *, must_hold_0: bool) -> list[tuple[int, ...]]:
    """``k`` distinct size-``size`` subsets of ``range(n)``, uniformly without replacement
    (only those containing element 0 when ``must_hold_0``)."""
    pool = list(range(1, n)) if must_hold_0 else list(range(n))
    s = size - 1 if must_hold_0 else size
    cap = math.comb(len(pool), s)
    head = (0,) if must_hold_0 else ()
    if k <= 0:
        return []
    if cap <= 4 * k:  # dense: enumerate the group and pick k of its members
        combos = list(itertools.combinations(pool, s))
        pick = rng.choice(len(combos), size=k, replace=False)
        return [head + combos[j] for j in sorted(pick)]
    seen: set[tuple[int, ...]] = set()
    out: list[tuple[int, ...]] = []
    pool_arr = np.asarray(pool)
    while len(out) < k:  # sparse: rejection (acceptance >= 3/4)
        sub = head + tuple(sorted(int(x) for x in rng.choice(pool_arr, size=s, replace=False)))
        if sub not in seen:
            seen.add(sub)
            out.append(sub)
    return out


#: Designs redrawn at most this many times to reach full rank (no model call is spent on them).
DESIGN_TRIES = 30


def _draw_design(n: int, n_pairs: int, rng: np.random.Generator) -> np.ndarray:
    """Sampled coalitions, shape ``(2 * n_pairs', n)``, each followed by its complement.

    A pair (S, N\\S) adds one dimension to the projected design (``P(1 - z) = -Pz``), so the
    regression needs ``n - 1`` well-spread pairs to identify ``phi``. When the draw's
    projected design has rank below ``min(n - 1, n_pairs)``, the design is redrawn (up to
    :data:`DESIGN_TRIES` times, keeping the best): this happens before any evaluation, so it
    costs no model call, and it makes games of degree <= 2 exact whenever the budget allows.
    """
    alloc = _pair_allocation(n, n_pairs, rng)
    want = min(n - 1, sum(alloc.values()))
    best, best_rank = np.zeros((0, n), dtype=bool), -1
    for _ in range(DESIGN_TRIES):
        rows: list[np.ndarray] = []
        for g, k in alloc.items():
            for sub in _draw_subsets(n, g, k, rng, must_hold_0=(2 * g == n)):
                m = np.zeros(n, dtype=bool)
                m[list(sub)] = True
                rows.append(m)
                rows.append(~m)
        z = np.array(rows, dtype=bool).reshape(-1, n)
        if len(z) == 0:
            return z
        rank = int(np.linalg.matrix_rank(z[::2] - z[::2].sum(axis=1, keepdims=True) / n))
        if rank > best_rank:
            best, best_rank = z, rank
        if rank >= want:
            break
    return best


def _leverage_from_oracle(n: int, oracle: _Oracle, budget: int, rng: np.random.Generator) -> tuple[np.ndarray, float, float]:
    """Leverage SHAP for ``n >= 2`` without the exact shortcut; returns (phi, v_empty, v_all)."""
    n_pairs = (budget - 2) // 2
    z = _draw_design(n, n_pairs, rng)
    ends = np.array([np.zeros(n, dtype=bool), np.ones(n, dtype=bool)])
    vals = oracle(np.concatenate([ends, z]))
    v_empty, v_all = float(vals[0]), float(vals[1])
    delta = v_all - v_empty
    phi = np.full(n, delta / n)
    if len(z):
        y = vals[2:] - v_empty
        s = z.sum(axis=1)
        k_s = np.bincount(s, minlength=n + 1)
        # stratified estimate of the kernel objective: the kernel weight of size s in total,
        # (n-1) / (s (n-s)), spread over the k_s sampled coalitions of that size
        # (= w(z) / p(z) with inclusion probability p(z) = k_s / C(n,s))
        omega = (n - 1) / (s * (n - s)) / k_s[s]
        sw = np.sqrt(omega)
        # constraint by projection: phi = delta/n * 1 + P x, P = I - 11^T/n, so
        # z·phi = delta s/n + (Pz)·x; the min-norm x lies in range(P)
        a = (z - s[:, None] / n) * sw[:, None]
        b = (y - delta * s / n) * sw
        x, *_ = np.linalg.lstsq(a, b, rcond=None)
        phi = phi + (x - x.mean())
    phi = phi + (delta - phi.sum()) / n  # efficiency to the last bit the floats allow
    return phi, v_empty, v_all


def _check_budget(n: int, budget: int) -> None:
    if isinstance(budget, bool) or not isinstance(budget, (int, np.integer)):
        raise ValueError(f"budget must be an integer number of value_fn evaluations, got {budget!r}")
    if n >= 1 and budget < 2:
        raise ValueError(
            f"budget={budget} is too small: Shapley values of n={n} claims need at least 2 evaluations "
            "(the empty and the full coalition)"
        )
    if budget < 0:
        raise ValueError(f"budget must be >= 0, got {budget}")


def leverage_shap(n: int, value_fn: ValueFn, *, budget: int, seed: int | np.random.Generator | None = None) -> np.ndarray:
    """Leverage SHAP estimate of the Shapley values with at most ``budget`` evaluations.

    Musco & Witter (2024), "Provably accurate Shapley value estimation via leverage score
    sampling": Kernel SHAP's constrained regression (module docstring) solved on coalitions
    sampled by leverage score. Here:

    * ``v(∅)`` and ``v(N)`` are always evaluated (2 of the budget); the other
      ``budget - 2`` evaluations are spent in complementary pairs ``(S, N\\S)``, so an odd
      remainder of one evaluation is left unused.
    * Sampling is without replacement and stratified by size: leverage scores are
      proportional to ``1 / C(n,|S|)``, so each size ``s = 1..n-1`` gets the same number of
      coalitions (capped at ``C(n,s)``; water-filled), each a uniform subset of that size.
      Fixed counts per size (instead of the paper's independent Bernoulli draws) make the
      budget a hard limit. Each sampled row is weighted by kernel weight / inclusion
      probability, i.e. ``(n-1) / (s (n-s)) / k_s`` for ``k_s`` sampled rows of size ``s``.
    * ``sum(phi) = v(N) - v(∅)`` is enforced by projection (``phi = Δ/n·1 + P x`` with
      ``P = I - 11ᵀ/n``; ``x`` the minimum-norm least-squares solution), then re-centred so
      it holds to float precision.
    * A draw whose design cannot identify ``phi`` (projected rank below ``min(n-1, pairs)``)
      is redrawn before anything is evaluated (:func:`_draw_design`; no extra call).
    * With no sampled pair (``budget < 4``) the estimate is the equal split ``Δ/n``.
    * Every size fully sampled (large budgets) reproduces the exact Shapley values; when
      ``budget >= 2^n`` :func:`exact_shapley` is used directly.

    Args:
        n: number of players (claims), ``n >= 0``.
        value_fn: see :data:`ValueFn`; called once, with ``v(∅)``, ``v(N)`` and all samples.
        budget: most distinct coalitions to evaluate, ``v(∅)`` and ``v(N)`` included.
        seed: seed or generator for the sampling (same seed, same coalitions).

    Returns:
        ``phi``, shape ``(n,)``, in the units of ``value_fn``.

    Raises:
        ValueError: ``budget`` not an integer, or ``< 2`` with ``n >= 1``; bad ``value_fn`` output.
    """
    return _compute(n, value_fn, budget=budget, seed=seed, exact_max=None).phi


def _compute(n: int, value_fn: ValueFn, *, budget: int, seed, exact_max: int | None) -> ShapleyResult:
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    _check_budget(n, budget)
    if n == 0:
        return ShapleyResult(np.zeros(0), "trivial", 0, math.nan, math.nan)
    oracle = _Oracle(n, value_fn, budget=budget)
    if n == 1:
        v = oracle(np.array([[False], [True]]))
        return ShapleyResult(np.array([v[1] - v[0]]), "trivial", oracle.n_calls, float(v[0]), float(v[1]))
    if budget >= (1 << n) and (exact_max is None or n <= exact_max):
        phi = _exact_from_oracle(n, oracle)
        v0 = oracle(np.array([np.zeros(n, bool), np.ones(n, bool)]))  # cached: no new call
        return ShapleyResult(phi, "exact", oracle.n_calls, float(v0[0]), float(v0[1]))
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    phi, v_empty, v_all = _leverage_from_oracle(n, oracle, budget, rng)
    return ShapleyResult(phi, "leverage", oracle.n_calls, v_empty, v_all)


def n_value_calls(n: int, *, budget: int, exact_max: int = EXACT_MAX) -> int:
    """Distinct coalitions :func:`shapley_values` evaluates for ``n`` claims (its ``n_calls``),
    without evaluating any: 0 for ``n == 0``, 2 for ``n == 1``, ``2^n`` when the exact values fit
    the budget, else ``v(∅)``, ``v(N)`` and ``(budget - 2) // 2`` complementary pairs (Leverage SHAP),
    at most the ``2^n`` coalitions there are."""
    if n <= 0:
        return 0
    if n == 1:
        return 2
    if budget >= (1 << n) and (exact_max is None or n <= exact_max):
        return 1 << n
    return min(2 + 2 * ((budget - 2) // 2), 1 << n)


def shapley_values(
    n: int,
    value_fn: ValueFn,
    *,
    budget: int,
    seed: int | np.random.Generator | None = None,
    exact_max: int = EXACT_MAX,
) -> ShapleyResult:
    """Shapley values of ``n`` claims within a budget of ``budget`` model calls.

    * ``n == 0``: empty ``phi``, method ``"trivial"``, no evaluation (``v_empty``/``v_all`` NaN).
    * ``n == 1``: ``phi = [v(N) - v(∅)]``, method ``"trivial"``, 2 evaluations.
    * ``2^n <= budget`` and ``n <= exact_max``: :func:`exact_shapley`, method ``"exact"``.
    * otherwise: :func:`leverage_shap`, method ``"leverage"``.

    ``n_calls`` (distinct coalitions evaluated) never exceeds ``budget``, and no coalition is
    evaluated twice. Efficiency, ``sum(phi) = v_all - v_empty``, holds for every method.

    Raises:
        ValueError: ``budget`` not an integer or ``< 2`` with ``n >= 1``; bad ``value_fn`` output.
    """
    return _compute(n, value_fn, budget=budget, seed=seed, exact_max=exact_max)


def _phi_leaked(phi, leaked) -> tuple[np.ndarray, np.ndarray]:
    p = np.asarray(phi, dtype=float).reshape(-1)
    l = np.asarray(leaked).reshape(-1)
    if p.shape != l.shape:
        raise ValueError(f"phi has {p.size} claims, leaked has {l.size}")
    if not np.all(np.isfinite(p)):
        raise ValueError("phi holds non-finite values")
    l = l.astype(float)
    if not np.all((l == 0) | (l == 1)):
        raise ValueError("leaked must hold booleans (or 0/1)")
    return p, l


def shapley_dclr(phi, leaked) -> float:
    """Shapley-DCLR = ``sum_i |phi_i| l_i / sum_i |phi_i|`` (TimeSPEC paper, §4.2, Eq. 4).

    Args:
        phi: Shapley values, shape ``(n,)``.
        leaked: leak indicators ``l_i`` (bool or 0/1), shape ``(n,)``.

    Returns:
        The share in [0, 1] of the decision impact carried by leaked claims; NaN when no
        claim has any impact (``n == 0`` or every ``phi_i == 0``), since the share is then
        undefined (such instances should be left out of averages, not counted as 0).

    Raises:
        ValueError: shapes differ, ``phi`` not finite, or ``leaked`` not boolean/0-1.
    """
    p, l = _phi_leaked(phi, leaked)
    a = np.abs(p)
    tot = a.sum()
    if tot == 0:
        return math.nan
    return float(np.dot(a, l) / tot)


def top_k_leak(phi, leaked, k: int) -> float:
    """Top-K leak share: the fraction of the ``k`` largest-``|phi|`` claims that leaked.

    TimeSPEC paper App. (Eq. 7) ranks by Shapley value; we rank by ``|phi|`` (docs/metrics.md#top-k), so a
    claim that strongly pushes the prediction either way counts as decision-critical.

    Args:
        phi: Shapley values, shape ``(n,)``.
        leaked: leak indicators (bool or 0/1), shape ``(n,)``.
        k: ``K >= 1``; capped at ``n`` (with 2 claims, Top-5 is the share over both).

    Returns:
        A share in [0, 1]; NaN when ``n == 0``. Equal ``|phi|`` are ranked by claim order
        (the lower index first), so the result is deterministic.

    Raises:
        ValueError: ``k < 1``, shapes differ, ``phi`` not finite, ``leaked`` not boolean/0-1.
    """
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"k must be an integer >= 1, got {k!r}")
    p, l = _phi_leaked(phi, leaked)
    if p.size == 0:
        return math.nan
    order = np.argsort(-np.abs(p), kind="stable")
    return float(l[order[: min(int(k), p.size)]].mean())


def aggregate_shapley(per_instance: pd.DataFrame, **bootstrap: Any) -> pd.DataFrame:
    """Metric rows (:data:`~anachron.tables.METRIC_COLUMNS`): ``dclr``, ``top1``, ``top3``, ``top5``
    per run and split, each the mean over instances where it is defined, with its bootstrap CI.

    Args:
        per_instance: rows of the ``shapley`` table (:data:`~anachron.tables.SHAPLEY_COLUMNS`).
        bootstrap: keyword arguments of :func:`~anachron.metrics.core.bootstrap_cis`.
    """
    out, vectors = [], []
    keys = ["task", "method", "model", "split"]
    for key, g in per_instance.groupby(keys, sort=True):
        for metric in ("dclr", "top1", "top3", "top5"):
            v = g[metric].to_numpy(dtype=float)
            v = v[~np.isnan(v)]
            out.append({**dict(zip(keys, key)), "metric": metric, "value": float(v.mean()) if v.size else np.nan,
                        "ci_low": np.nan, "ci_high": np.nan, "n": int(v.size)})
            vectors.append(v)
    return pd.DataFrame(fill_cis(out, vectors, **bootstrap), columns=METRIC_COLUMNS)
