import json

import numpy as np
import pandas as pd
import pytest

from anachron.metrics.core import aggregate, bootstrap_ci, instance_scores
from anachron.tables import CLAIM_COLUMNS


def _run(rows):
    base = {"task": "stock", "method": "temporal_hint", "model": "m", "split": "eval"}
    return pd.DataFrame([{**base, **r} for r in rows])


def _claims(rows):
    out = []
    for iid, leaked, cited, verdict in rows:
        out.append({c: None for c in CLAIM_COLUMNS} | {"instance_id": iid, "leaked": leaked, "cited": cited, "verdict": verdict})
    return pd.DataFrame(out, columns=CLAIM_COLUMNS)


def test_instance_scores_and_exclusions():
    run = _run([
        {"instance_id": "a", "parse_status": "ok", "prediction": json.dumps(["X", "Y"])},
        {"instance_id": "b", "parse_status": "not_json", "prediction": "null"},
        {"instance_id": "c", "parse_status": "invalid_prediction", "prediction": "null"},
    ])
    claims = _claims([
        ("a", True, True, "leaked"), ("a", False, False, "clean"), ("a", False, True, "undated"), ("a", False, True, "clean"),
        ("c", False, True, "clean"),
    ])
    s = instance_scores(run, claims, lambda iid, p: 1.0 if p == ["X", "Y"] else 0.0).set_index("instance_id")
    assert s.loc["a", "olr"] == pytest.approx(0.25)
    assert s.loc["a", "cov"] == pytest.approx(0.75)
    assert s.loc["a", "perf"] == 1.0 and s.loc["a", "n_undated"] == 1
    assert np.isnan(s.loc["b", "olr"]) and np.isnan(s.loc["b", "perf"]) and not s.loc["b", "parsed"]
    # a bad prediction keeps its evidence in OLR but has no Perf
    assert s.loc["c", "olr"] == 0.0 and np.isnan(s.loc["c", "perf"])

    m = aggregate(s.reset_index(), n_resamples=200).set_index("metric")
    assert m.loc["olr", "value"] == pytest.approx(0.125) and m.loc["olr", "n"] == 2
    assert m.loc["perf", "n"] == 1
    assert m.loc["parse_rate", "value"] == pytest.approx(1 / 3) and m.loc["parse_rate", "n"] == 3
    assert m.loc["undated_rate", "value"] == pytest.approx(1 / 5)
    assert m.loc["olr", "ci_low"] <= m.loc["olr", "value"] <= m.loc["olr", "ci_high"]


def test_strict_olr_counts_undated_and_ambiguous_claims_as_leaked():
    run = _run([
        {"instance_id": "p", "parse_status": "ok", "prediction": json.dumps(["X"])},
        {"instance_id": "q", "parse_status": "ok", "prediction": json.dumps(["X"])},
        {"instance_id": "r", "parse_status": "not_json", "prediction": "null"},
    ])
    claims = _claims([
        ("p", True, False, "leaked"), ("p", False, False, "undated"), ("p", False, False, "ambiguous"),
        ("p", False, False, "clean"),
        ("q", False, False, "clean"), ("q", False, False, "clean"),
    ])
    s = instance_scores(run, claims, lambda iid, p: 1.0).set_index("instance_id")
    assert s.loc["p", "olr"] == pytest.approx(1 / 4) and s.loc["p", "olr_strict"] == pytest.approx(3 / 4)
    assert s.loc["p", "n_undated"] == 1 and s.loc["p", "n_ambiguous"] == 1
    assert s.loc["q", "olr_strict"] == 0.0
    assert np.isnan(s.loc["r", "olr_strict"])  # no parsed evidence: no OLR either way
    assert (s["olr_strict"].dropna() >= s["olr"].dropna()).all()

    m = aggregate(s.reset_index(), n_resamples=300).set_index("metric")
    assert m.loc["olr_strict", "value"] == pytest.approx(3 / 8) and m.loc["olr_strict", "n"] == 2
    assert m.loc["olr_strict", "ci_low"] <= 3 / 8 <= m.loc["olr_strict", "ci_high"]
    assert m.loc["olr", "value"] == pytest.approx(1 / 8)
    # undated rate unchanged by the new verdict; ambiguous counted apart, pooled over claims
    assert m.loc["undated_rate", "value"] == pytest.approx(1 / 6) and m.loc["undated_rate", "n"] == 6
    assert m.loc["ambiguous_rate", "value"] == pytest.approx(1 / 6) and m.loc["ambiguous_rate", "n"] == 6


def test_declared_only_rate_is_the_share_of_claims_dated_by_the_declared_date_alone():
    run = _run([
        {"instance_id": "p", "parse_status": "ok", "prediction": json.dumps(["X"])},
        {"instance_id": "q", "parse_status": "ok", "prediction": json.dumps(["X"])},
    ])
    claims = _claims([
        ("p", False, False, "clean"), ("p", False, False, "clean"), ("p", True, False, "leaked"),
        ("q", False, False, "clean"),
    ])
    claims["declared_only"] = [True, None, True, False]  # a leak may rest on the declared date too; None is False
    claims.loc[len(claims)] = {**claims.iloc[0].to_dict(), "source": "reasoning", "declared_only": True}
    s = instance_scores(run, claims, lambda iid, p: 1.0).set_index("instance_id")
    assert s.loc["p", "n_declared_only"] == 2 and s.loc["q", "n_declared_only"] == 0  # reasoning claims left out
    m = aggregate(s.reset_index(), n_resamples=300).set_index("metric")
    assert m.loc["declared_only_rate", "value"] == pytest.approx(2 / 4) and m.loc["declared_only_rate", "n"] == 4
    assert m.loc["declared_only_rate", "ci_low"] <= m.loc["declared_only_rate", "ci_high"]


def test_claims_without_a_declared_only_column_score_as_not_declared_only():
    run = _run([{"instance_id": "p", "parse_status": "ok", "prediction": json.dumps(["X"])}])
    claims = _claims([("p", False, False, "clean")]).drop(columns="declared_only")
    s = instance_scores(run, claims, lambda iid, p: 1.0)
    assert s["n_declared_only"].tolist() == [0]
    m = aggregate(s, n_resamples=100).set_index("metric")
    assert m.loc["declared_only_rate", "value"] == 0.0


def test_bootstrap_ci_properties():
    rng = np.random.default_rng(1)
    v = rng.normal(0.5, 0.1, size=200)
    lo, hi = bootstrap_ci(v, n_resamples=1000, seed=3)
    assert lo < v.mean() < hi and hi - lo < 0.05
    assert bootstrap_ci(np.array([0.3]), n_resamples=100) == (0.3, 0.3)
    assert all(np.isnan(bootstrap_ci(np.array([np.nan]))))
    assert bootstrap_ci(v, seed=3, n_resamples=500) == bootstrap_ci(v, seed=3, n_resamples=500)


def test_samples_are_seeded_and_nested():
    from anachron.methods.runner import sample_instances

    df = pd.DataFrame({"instance_id": [f"i{k:03d}" for k in range(50)], "split": ["eval"] * 40 + ["control"] * 10})
    a = sample_instances(df, ["eval"], 10, seed=1)
    b = sample_instances(df, ["eval"], 20, seed=1)
    assert len(a) == 10 and set(a["instance_id"]) <= set(b["instance_id"])
    assert a.equals(sample_instances(df.sample(frac=1, random_state=3), ["eval"], 10, seed=1))
    both = sample_instances(df, ["eval", "control"], 5, seed=1)
    assert both["split"].value_counts().to_dict() == {"eval": 5, "control": 5}
    assert len(sample_instances(df, ["eval"], None, seed=1)) == 40


def test_bootstrap_draws_are_kept_and_equal_to_a_fresh_draw(monkeypatch):
    from anachron.metrics import core

    v = np.random.default_rng(3).random(40)
    fresh = v[np.random.default_rng(0).integers(0, 40, size=(500, 40))].mean(axis=1)
    # the counts product sums the same draws in another order: equal up to float rounding
    assert np.allclose(bootstrap_ci(v, n_resamples=500), np.quantile(fresh, [0.025, 0.975]), rtol=0, atol=1e-14)
    b = (v > 0.6).astype(float)  # 0/1 values: exact sums, the gathered CI to the bit
    gathered = b[np.random.default_rng(0).integers(0, 40, size=(500, 40))].mean(axis=1)
    assert bootstrap_ci(b, n_resamples=500) == tuple(float(x) for x in np.quantile(gathered, [0.025, 0.975]))
    assert core.resample_indices(40, 500, 0) is core.resample_indices(40, 500, 0)  # kept, not drawn again
    from collections import OrderedDict

    monkeypatch.setattr(core, "_RESAMPLES", OrderedDict())
    monkeypatch.setattr(core, "RESAMPLE_CACHE_ELEMENTS", 2 * 500 * 40)
    for n in (38, 39, 40):  # room for two: the least recently used goes
        core.resample_indices(n, 500, 0)
    assert [k[0] for k in core._RESAMPLES] == [39, 40]
    with pytest.raises(ValueError):
        core.resample_indices(40, 500, 0)[0, 0] = 1  # read-only: no caller can alter a kept draw


def test_bootstrap_cis_batched_blocked_and_kept_agree(monkeypatch):
    from collections import OrderedDict

    from anachron.metrics import core

    rng = np.random.default_rng(5)
    vectors = [rng.random(30), rng.random(30), np.array([0.4]), np.array([]), rng.random(12), np.array([np.nan, 0.2, 0.9])]
    batched = core.bootstrap_cis(vectors, n_resamples=300, seed=2)
    alone = [core.bootstrap_ci(v, n_resamples=300, seed=2) for v in vectors]
    assert batched[2] == (0.4, 0.4) and all(np.isnan(batched[3]))
    np.testing.assert_allclose(np.array(batched, dtype=float), np.array(alone, dtype=float), rtol=0, atol=1e-14)
    # a matrix too large to keep is built in blocks of rows from the same draws: the same CIs
    monkeypatch.setattr(core, "_COUNTS", OrderedDict())
    monkeypatch.setattr(core, "RESAMPLE_CACHE_ELEMENTS", 100)
    monkeypatch.setattr(core, "COUNT_BLOCK_ELEMENTS", 7 * 30)
    blocks = list(core._count_blocks(30, 300, 2))
    assert len(blocks) == 43 and sum(len(b) for b in blocks) == 300 and not core._COUNTS
    idx = np.random.default_rng(2).integers(0, 30, size=(300, 30))
    np.testing.assert_array_equal(np.vstack(blocks), np.stack([np.bincount(r, minlength=30) for r in idx]))
    np.testing.assert_allclose(np.array(core.bootstrap_cis(vectors, n_resamples=300, seed=2), dtype=float),
                               np.array(batched, dtype=float), rtol=0, atol=1e-14)
