import json

import numpy as np
import pandas as pd
import pytest

from anachron.metrics.core import aggregate, bootstrap_ci, instance_scores
from anachron.store.schema import CLAIM_COLUMNS


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
