"""Accuracy of Leverage SHAP against exact Shapley values, at small call budgets.

For n = 4..8 claims and budgets of 16, 32 and 64 value-function calls (v(∅) and v(N)
included), draws many random noise-free games and compares
:func:`anachron.metrics.shapley.shapley_values` (Leverage SHAP when 2^n > budget, exact
otherwise) with :func:`~anachron.metrics.shapley.exact_shapley`. Game families:

* ``additive``: v(S) = c + sum_{i in S} a_i (Leverage SHAP must be exact);
* ``pairwise``: additive + sum_{i<j in S} b_ij (degree 2; paired Kernel SHAP is exact once
  its design has full rank, so errors here only show rank-deficient budgets);
* ``triple``: pairwise + sum_{i<j<k in S} t_ijk (degree 3: a real test of the estimator);
* ``score``: a bounded task-score-like game, 1 - (sigmoid(pairwise logit) - y)^2 with
  y in {0, 1} (a Brier score, as the legal task's score; not a polynomial).

Reports per (n, budget): the method used, mean calls, and per family the mean absolute error
of phi (MAE, in value units) and the MAE normalized by the mean |phi| of the exact values
(nMAE), averaged over games; for reference, the nMAE of the equal split (v(N) - v(∅)) / n,
which needs only 2 calls. Prints a markdown table; ``--json PATH`` also writes the numbers.

Usage: ``.venv/bin/python benchmarks/bench_shapley.py [--games 200] [--seed 0] [--json out.json]``
"""

from __future__ import annotations

import argparse
import itertools
import json
import time
from pathlib import Path

import numpy as np

from anachron.metrics.shapley import exact_shapley, shapley_values

FAMILIES = ("additive", "pairwise", "triple", "score")
NS = (4, 5, 6, 7, 8)
BUDGETS = (16, 32, 64)


def make_game(family: str, n: int, rng: np.random.Generator):
    """A random noise-free game of ``family`` on ``n`` players (masks (m, n) -> (m,))."""
    c = rng.normal()
    a = rng.normal(size=n)
    b = np.triu(rng.normal(scale=0.7, size=(n, n)), 1)
    triples = np.array(list(itertools.combinations(range(n), 3)))
    t = rng.normal(scale=0.5, size=len(triples))
    y = float(rng.integers(0, 2))

    def poly(m: np.ndarray, degree: int) -> np.ndarray:
        z = m.astype(float)
        out = c + z @ a
        if degree >= 2:
            out = out + np.einsum("mi,ij,mj->m", z, b, z)
        if degree >= 3:
            out = out + (z[:, triples[:, 0]] * z[:, triples[:, 1]] * z[:, triples[:, 2]]) @ t
        return out

    if family == "additive":
        return lambda m: poly(m, 1)
    if family == "pairwise":
        return lambda m: poly(m, 2)
    if family == "triple":
        return lambda m: poly(m, 3)
    if family == "score":
        return lambda m: 1.0 - (1.0 / (1.0 + np.exp(-poly(m, 2))) - y) ** 2
    raise ValueError(family)


def run(games: int, seed: int) -> list[dict]:
    rows = []
    for n in NS:
        for budget in BUDGETS:
            row: dict = {"n": n, "budget": budget, "games": games}
            methods, calls = set(), []
            for fam in FAMILIES:
                rng = np.random.default_rng([seed, n, FAMILIES.index(fam)])  # same games at every budget
                abs_err, norm_err, split_err, max_eff = [], [], [], 0.0
                for g in range(games):
                    v = make_game(fam, n, rng)
                    ex = exact_shapley(n, v)
                    res = shapley_values(n, v, budget=budget, seed=[seed, g])
                    methods.add(res.method)
                    calls.append(res.n_calls)
                    err = np.abs(res.phi - ex).mean()
                    abs_err.append(err)
                    scale = np.abs(ex).mean()
                    norm_err.append(err / scale if scale > 0 else 0.0)
                    # reference: the equal split (v(N) - v(∅)) / n that 2 calls give
                    split_err.append(np.abs(ex.sum() / n - ex).mean() / scale if scale > 0 else 0.0)
                    max_eff = max(max_eff, abs(res.phi.sum() - (res.v_all - res.v_empty)))
                row[f"{fam}_mae"] = float(np.mean(abs_err))
                row[f"{fam}_nmae"] = float(np.mean(norm_err))
                row[f"{fam}_split_nmae"] = float(np.mean(split_err))
                row[f"{fam}_max_efficiency_gap"] = max_eff
            row["method"] = "/".join(sorted(methods))
            row["calls_mean"] = float(np.mean(calls))
            row["calls_max"] = int(np.max(calls))
            row["coalitions"] = 2**n
            rows.append(row)
    return rows


def markdown(rows: list[dict]) -> str:
    head = ["n", "budget", "2^n", "method", "calls (mean / max)"] + [f"{f} MAE (nMAE)" for f in FAMILIES]
    head.append("equal-split nMAE triple / score")
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = [str(r["n"]), str(r["budget"]), str(r["coalitions"]), r["method"],
                 f"{r['calls_mean']:.1f} / {r['calls_max']}"]
        cells += [f"{r[f'{f}_mae']:.2g} ({r[f'{f}_nmae']:.1%})" for f in FAMILIES]
        cells.append(f"{r['triple_split_nmae']:.0%} / {r['score_split_nmae']:.0%}")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", type=int, default=200, help="random games per (n, family)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", help="also write the results to this JSON file")
    args = ap.parse_args()
    t0 = time.perf_counter()
    rows = run(args.games, args.seed)
    elapsed = time.perf_counter() - t0
    print(markdown(rows))
    gap = max(r[f"{f}_max_efficiency_gap"] for r in rows for f in FAMILIES)
    over = [r for r in rows if r["calls_max"] > r["budget"]]
    print(f"\n{args.games} games per (n, family); largest |sum(phi) - (v(N) - v(∅))| = {gap:.1e}; "
          f"budget exceeded in {len(over)} settings; {elapsed:.1f} s")
    if args.json:
        Path(args.json).write_text(json.dumps({"games": args.games, "seed": args.seed, "seconds": elapsed,
                                               "rows": rows}, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
