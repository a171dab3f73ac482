"""Shapley values (exact and Leverage SHAP), call budget and memoization, Shapley-DCLR, Top-K."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from anachron.metrics.shapley import (
    ShapleyResult,
    _leverage_from_oracle,
    _Oracle,
    _pair_allocation,
    exact_shapley,
    leverage_shap,
    shapley_dclr,
    shapley_values,
    top_k_leak,
)


class Recorder:
    """A value function that records every coalition it is asked for."""

    def __init__(self, fn):
        self.fn = fn
        self.seen: list[tuple[bool, ...]] = []
        self.batches = 0

    def __call__(self, masks: np.ndarray) -> np.ndarray:
        assert masks.dtype == bool and masks.ndim == 2
        self.batches += 1
        self.seen.extend(tuple(bool(x) for x in row) for row in masks)
        return self.fn(masks)


def additive(w, c=0.0):
    w = np.asarray(w, dtype=float)
    return lambda m: c + m.astype(float) @ w


def random_game(n, rng, *, pair=0.7, triple=0.5):
    """c + a·z + pairwise + triple interactions (not reproducible by a degree-2 model)."""
    a = rng.normal(size=n)
    b = np.triu(rng.normal(scale=pair, size=(n, n)), 1)
    triples = list(itertools.combinations(range(n), 3))
    t = rng.normal(scale=triple, size=len(triples))
    c = rng.normal()

    def v(m):
        z = m.astype(float)
        out = c + z @ a + np.einsum("mi,ij,mj->m", z, b, z)
        for (i, j, k), tv in zip(triples, t):
            out = out + tv * z[:, i] * z[:, j] * z[:, k]
        return out

    return v


def brute_force_shapley(n, v):
    """Shapley values from the permutation definition (independent of the module's code)."""
    phi = np.zeros(n)
    perms = list(itertools.permutations(range(n)))
    for p in perms:
        m = np.zeros(n, dtype=bool)
        prev = v(m[None])[0]
        for i in p:
            m[i] = True
            cur = v(m[None])[0]
            phi[i] += cur - prev
            prev = cur
    return phi / len(perms)


# --- exact -------------------------------------------------------------------------------


def test_exact_additive_game_gives_weights():
    w = [0.3, -1.2, 2.5, 0.0, 0.7]
    phi = exact_shapley(5, additive(w, c=4.0))
    np.testing.assert_allclose(phi, w, atol=1e-12)


def glove_game(m):
    # players 0,1 hold left gloves, player 2 a right glove; a pair is worth 1
    return np.minimum(m[:, :2].sum(axis=1), m[:, 2].astype(int)).astype(float)


def test_exact_glove_game():
    # known values: right-glove holder 2/3, each left-glove holder 1/6
    np.testing.assert_allclose(exact_shapley(3, glove_game), [1 / 6, 1 / 6, 2 / 3], atol=1e-12)


def _majority(weights, quota):
    w = np.asarray(weights)
    return lambda m: (m.astype(int) @ w >= quota).astype(float)


@pytest.mark.parametrize(
    "weights,quota,expected",
    [
        # [51; 50, 49, 1]: player 0 is pivotal unless it comes first (4 of 6 orders)
        ([50, 49, 1], 51, [2 / 3, 1 / 6, 1 / 6]),
        # [4; 3, 2, 1, 1]: players 1-3 win only all together or with player 0, so they are
        # interchangeable; player 0 is pivotal in half of the 24 orders
        ([3, 2, 1, 1], 4, [1 / 2, 1 / 6, 1 / 6, 1 / 6]),
        # simple majority of 3 equal voters
        ([1, 1, 1], 2, [1 / 3, 1 / 3, 1 / 3]),
    ],
)
def test_exact_weighted_majority_games(weights, quota, expected):
    np.testing.assert_allclose(exact_shapley(len(weights), _majority(weights, quota)), expected, atol=1e-12)


def test_exact_symmetric_players_equal_and_dummy_gets_zero():
    # v depends on players 0..3 only through how many are present; player 4 never matters
    v = lambda m: np.sqrt(m[:, :4].sum(axis=1).astype(float)) * 3.0
    phi = exact_shapley(5, v)
    np.testing.assert_allclose(phi[:4], phi[0], atol=1e-12)
    assert phi[4] == pytest.approx(0.0, abs=1e-12)
    assert phi.sum() == pytest.approx(6.0, abs=1e-12)  # 3 * sqrt(4) - 0


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_exact_matches_permutation_definition(n):
    v = random_game(n, np.random.default_rng(n))
    np.testing.assert_allclose(exact_shapley(n, v), brute_force_shapley(n, v), atol=1e-12)


@pytest.mark.parametrize("n", [1, 3, 6, 9])
def test_exact_efficiency(n):
    v = random_game(n, np.random.default_rng(100 + n))
    phi = exact_shapley(n, v)
    full, empty = v(np.ones((1, n), bool))[0], v(np.zeros((1, n), bool))[0]
    assert phi.sum() == pytest.approx(full - empty, abs=1e-12)


def test_exact_evaluates_each_coalition_once_in_one_batch():
    rec = Recorder(additive([1, 2, 3, 4]))
    exact_shapley(4, rec)
    assert rec.batches == 1
    assert len(rec.seen) == len(set(rec.seen)) == 16


# --- Leverage SHAP -----------------------------------------------------------------------


@pytest.mark.parametrize("n,budget", [(3, 6), (5, 20), (6, 40), (8, 40), (8, 100), (12, 64)])
def test_leverage_efficiency(n, budget):
    v = random_game(n, np.random.default_rng(n * budget))
    res = shapley_values(n, v, budget=budget, seed=7)
    assert res.method == "leverage"
    assert res.v_empty == pytest.approx(v(np.zeros((1, n), bool))[0])
    assert res.v_all == pytest.approx(v(np.ones((1, n), bool))[0])
    assert abs(res.phi.sum() - (res.v_all - res.v_empty)) <= 1e-12 * max(1.0, abs(res.v_all - res.v_empty))


@pytest.mark.parametrize("n,budget", [(4, 10), (6, 16), (8, 24), (8, 64), (10, 40)])
def test_leverage_exact_on_additive_games(n, budget):
    w = np.random.default_rng(n).normal(size=n)
    phi = leverage_shap(n, additive(w, c=-2.0), budget=budget, seed=1)
    np.testing.assert_allclose(phi, w, atol=1e-10)


def test_leverage_exact_on_additive_games_at_the_smallest_identifying_budget():
    # n = 8, budget 16: 7 complementary pairs for 7 free dimensions; a rank-deficient draw
    # would be redrawn (no calls spent), so every seed recovers the weights
    n = 8
    for seed in range(40):
        w = np.random.default_rng(seed).normal(size=n)
        rec = Recorder(additive(w))
        np.testing.assert_allclose(leverage_shap(n, rec, budget=16, seed=seed), w, atol=1e-10)
        assert len(rec.seen) == 16


@pytest.mark.parametrize("n", [3, 4, 5, 6, 7, 8])
def test_leverage_with_every_coalition_sampled_reproduces_exact(n):
    # the regression itself (no exact shortcut): the kernel weights must give the Shapley values
    v = random_game(n, np.random.default_rng(200 + n))
    phi, _, _ = _leverage_from_oracle(n, _Oracle(n, v), 1 << n, np.random.default_rng(0))
    np.testing.assert_allclose(phi, exact_shapley(n, v), atol=1e-10)


@pytest.mark.parametrize("n,budget,tol", [(5, 20, 0.15), (6, 32, 0.12), (7, 64, 0.1), (8, 64, 0.15), (8, 128, 0.08)])
def test_leverage_close_to_exact_on_random_games(n, budget, tol):
    # mean over games of MAE / mean|phi|; degree-3 games, so a degree-2 model cannot be exact
    errs = []
    for g in range(30):
        v = random_game(n, np.random.default_rng(1000 * n + g))
        ex = exact_shapley(n, v)
        est = leverage_shap(n, v, budget=budget, seed=g)
        errs.append(np.abs(est - ex).mean() / np.abs(ex).mean())
    assert 0 < np.mean(errs) < tol


def test_leverage_error_shrinks_with_budget():
    n = 8
    mean_err = {}
    for budget in (24, 64, 160):
        errs = []
        for g in range(30):
            v = random_game(n, np.random.default_rng(g))
            errs.append(np.abs(leverage_shap(n, v, budget=budget, seed=g) - exact_shapley(n, v)).mean())
        mean_err[budget] = np.mean(errs)
    assert mean_err[24] > mean_err[64] > mean_err[160]


def test_leverage_pairwise_game_is_exact_with_paired_sampling():
    # paired Kernel SHAP recovers degree-2 games exactly once the design has full rank
    rng = np.random.default_rng(5)
    n = 8
    a, b = rng.normal(size=n), np.triu(rng.normal(size=(n, n)), 1)
    v = lambda m: m.astype(float) @ a + np.einsum("mi,ij,mj->m", m.astype(float), b, m.astype(float))
    np.testing.assert_allclose(leverage_shap(n, v, budget=48, seed=3), a + (b + b.T).sum(axis=1) / 2, atol=1e-10)


def test_leverage_same_seed_same_result():
    v = random_game(8, np.random.default_rng(3))
    a = leverage_shap(8, v, budget=40, seed=11)
    np.testing.assert_array_equal(a, leverage_shap(8, v, budget=40, seed=11))
    assert not np.array_equal(a, leverage_shap(8, v, budget=40, seed=12))


def test_leverage_uses_exact_when_budget_covers_all():
    v = random_game(5, np.random.default_rng(9))
    np.testing.assert_allclose(leverage_shap(5, v, budget=32, seed=0), exact_shapley(5, v), atol=1e-12)


@pytest.mark.parametrize("n,budget", [(2, 3), (3, 7), (5, 17), (6, 30), (8, 16), (8, 33), (9, 256), (16, 50)])
def test_calls_within_budget_and_never_repeated(n, budget):
    rec = Recorder(random_game(n, np.random.default_rng(budget)) if n <= 10 else additive(np.arange(n)))
    res = shapley_values(n, rec, budget=budget, seed=4)
    assert len(rec.seen) == len(set(rec.seen)) == res.n_calls
    assert res.n_calls <= budget
    assert res.n_calls >= budget - 1  # the whole budget is used, bar an odd leftover
    assert rec.batches == 1
    assert (False,) * n in rec.seen and (True,) * n in rec.seen


def test_sampled_coalitions_come_in_complementary_pairs_and_cover_all_sizes():
    n = 8
    rec = Recorder(additive(np.ones(n)))
    shapley_values(n, rec, budget=64, seed=0)
    seen = set(rec.seen)
    for z in seen:
        assert tuple(not x for x in z) in seen
    sizes = np.bincount([sum(z) for z in seen], minlength=n + 1)
    assert sizes[0] == sizes[n] == 1
    inner = sizes[1:n]
    assert inner.min() >= 1 and inner.max() - inner.min() <= 2  # leverage: ~equal per size


def test_pair_allocation_waterfills_and_respects_capacity():
    rng = np.random.default_rng(0)
    # n = 6: groups g=1 (cap 6 pairs), g=2 (cap 15), g=3 (halves, cap 10, half mass)
    alloc = _pair_allocation(6, 23, rng)
    assert sum(alloc.values()) == 23
    assert alloc[1] == 6  # size 1 and 5 fully enumerated
    assert alloc[2] <= 15 and alloc[3] <= 10
    assert abs(alloc[2] - 2 * alloc[3]) <= 2  # equal coalitions per size
    assert _pair_allocation(6, 1000, rng) == {1: 6, 2: 15, 3: 10}


def test_memo_reuses_cached_coalitions():
    rec = Recorder(additive([1.0, 2.0, 3.0]))
    o = _Oracle(3, rec)
    m = np.array([[1, 0, 0], [1, 0, 0], [0, 1, 1]], dtype=bool)
    np.testing.assert_allclose(o(m), [1, 1, 5])
    np.testing.assert_allclose(o(m[::-1]), [5, 1, 1])
    assert o.n_calls == 2 and len(rec.seen) == 2


# --- shapley_values: routing, trivial cases, errors -------------------------------------


def test_routing_exact_when_budget_covers_all():
    rec = Recorder(random_game(5, np.random.default_rng(1)))
    res = shapley_values(5, rec, budget=32, seed=0)
    assert isinstance(res, ShapleyResult)
    assert res.method == "exact" and res.n_calls == 32 and len(rec.seen) == 32
    assert res.phi.sum() == pytest.approx(res.v_all - res.v_empty, abs=1e-12)


def test_routing_respects_exact_max():
    v = random_game(5, np.random.default_rng(1))
    res = shapley_values(5, v, budget=32, seed=0, exact_max=4)
    assert res.method == "leverage" and res.n_calls <= 32
    # every coalition is sampled anyway, so the regression is exact too
    np.testing.assert_allclose(res.phi, exact_shapley(5, v), atol=1e-10)


def test_n_zero_makes_no_call():
    rec = Recorder(lambda m: np.zeros(len(m)))
    res = shapley_values(0, rec, budget=0, seed=0)
    assert res.phi.shape == (0,) and res.method == "trivial" and res.n_calls == 0
    assert rec.seen == [] and math.isnan(res.v_empty) and math.isnan(res.v_all)


def test_n_one_is_the_difference():
    res = shapley_values(1, lambda m: np.where(m[:, 0], 0.9, 0.25), budget=2, seed=0)
    assert res.method == "trivial" and res.n_calls == 2
    np.testing.assert_allclose(res.phi, [0.65])
    assert (res.v_empty, res.v_all) == (0.25, 0.9)


def test_tiny_budget_gives_equal_split():
    res = shapley_values(4, additive([4.0, 0.0, 0.0, 0.0]), budget=3, seed=0)
    assert res.method == "leverage" and res.n_calls == 2
    np.testing.assert_allclose(res.phi, [1.0, 1.0, 1.0, 1.0])


@pytest.mark.parametrize("budget", [0, 1, -3])
def test_budget_below_two_raises(budget):
    with pytest.raises(ValueError, match="at least 2 evaluations"):
        shapley_values(3, additive([1, 2, 3]), budget=budget, seed=0)


def test_non_integer_budget_raises():
    with pytest.raises(ValueError, match="integer"):
        shapley_values(3, additive([1, 2, 3]), budget=10.0, seed=0)


def test_bad_value_fn_output_raises():
    with pytest.raises(ValueError, match="shape"):
        exact_shapley(3, lambda m: np.zeros(len(m) + 1))
    with pytest.raises(ValueError, match="non-finite"):
        shapley_values(6, lambda m: np.full(len(m), np.nan), budget=20, seed=0)


# --- Shapley-DCLR and Top-K --------------------------------------------------------------


def test_dclr_weights_by_absolute_phi():
    # |phi| = 0.5, 0.3, 0.2 -> leaked share 0.5 + 0.2
    assert shapley_dclr([0.5, -0.3, 0.2], [True, False, True]) == pytest.approx(0.7)
    assert shapley_dclr([0.5, -0.3, 0.2], [0, 0, 0]) == 0.0
    assert shapley_dclr([0.5, -0.3, 0.2], [1, 1, 1]) == pytest.approx(1.0)


def test_dclr_undefined_cases():
    assert math.isnan(shapley_dclr([0.0, 0.0], [True, False]))
    assert math.isnan(shapley_dclr([], []))
    with pytest.raises(ValueError):
        shapley_dclr([0.1, 0.2], [True])
    with pytest.raises(ValueError):
        shapley_dclr([0.1, np.nan], [True, False])
    with pytest.raises(ValueError):
        shapley_dclr([0.1, 0.2], [0.5, 1])


def test_top_k_ranks_by_absolute_value():
    phi = [0.1, -0.9, 0.4, 0.05]
    leaked = [False, True, False, True]
    assert top_k_leak(phi, leaked, 1) == 1.0  # -0.9 is the most influential
    assert top_k_leak(phi, leaked, 2) == 0.5
    assert top_k_leak(phi, leaked, 3) == pytest.approx(1 / 3)
    assert top_k_leak(phi, leaked, 4) == 0.5


def test_top_k_capped_at_n_and_ties_by_claim_order():
    assert top_k_leak([0.2, 0.1], [True, False], 5) == 0.5
    # all |phi| equal: the first claims in order win
    assert top_k_leak([0.3, -0.3, 0.3], [False, True, True], 1) == 0.0
    assert top_k_leak([0.3, -0.3, 0.3], [True, False, False], 1) == 1.0
    assert top_k_leak([0.3, -0.3, 0.3], [False, True, True], 2) == 0.5


def test_top_k_edge_cases():
    assert math.isnan(top_k_leak([], [], 3))
    for bad in (0, -1, 1.5):
        with pytest.raises(ValueError):
            top_k_leak([0.1], [True], bad)


def test_dclr_from_computed_shapley_values():
    # claim 0 drives the score (leaked), claims 1, 2 matter less (clean)
    res = shapley_values(3, additive([0.6, 0.3, -0.1]), budget=8, seed=0)
    assert shapley_dclr(res.phi, [True, False, False]) == pytest.approx(0.6)
    assert top_k_leak(res.phi, [True, False, False], 1) == 1.0
