"""Paired comparison (bootstrap CI, exact sign test), the enforcement table and `anachron compare`."""

from __future__ import annotations

import argparse
import json
from math import comb

import duckdb
import numpy as np
import pandas as pd
import pytest

from anachron.compare import add_compare_parser, load_scores
from anachron.metrics.paired import ENFORCEMENT_COLUMNS, PairingError, enforcement_table, paired_comparison, sign_test_p
from anachron.report.paired import enforcement_markdown


def _s(values: dict) -> pd.Series:
    return pd.Series(values, dtype=float)


def test_known_differences_and_counts():
    a = _s({"i1": 0.5, "i2": 1.0, "i3": 0.0, "i4": 0.25})
    b = _s({"i4": 0.5, "i3": 0.0, "i2": 0.5, "i1": 0.0})  # other order
    r = paired_comparison(a, b, n_resamples=2000)
    assert r.n == 4
    assert r.relative_reduction == pytest.approx(0.1875 / 0.4375)  # (mean a - mean b) / mean a
    assert r.mean_a == pytest.approx(0.4375) and r.mean_b == pytest.approx(0.25)
    assert r.mean_diff == pytest.approx(-0.1875)  # b - a: (-0.5 - 0.5 + 0 + 0.25) / 4
    assert (r.improved, r.worsened, r.tied) == (2, 1, 1)  # lower is better
    assert r.ci_low <= r.mean_diff <= r.ci_high
    flipped = paired_comparison(a, b, n_resamples=2000, lower_is_better=False)
    assert (flipped.improved, flipped.worsened, flipped.tied) == (1, 2, 1)
    assert flipped.p_value == r.p_value


def test_sign_test_p_matches_hand_computation():
    # 7 improved, 0 worsened, 20 tied: two-sided p = 2 * 0.5**7
    a = _s({f"i{k}": 1.0 if k < 7 else 0.0 for k in range(27)})
    b = _s({f"i{k}": 0.0 for k in range(27)})
    r = paired_comparison(a, b)
    assert (r.improved, r.worsened, r.tied) == (7, 0, 20)
    assert r.p_value == pytest.approx(2 * 0.5**7) == pytest.approx(0.015625)
    # 8 vs 2: p = 2 * (C(10,0) + C(10,1) + C(10,2)) / 2**10 = 112 / 1024
    assert sign_test_p(8, 2) == pytest.approx(2 * sum(comb(10, k) for k in range(3)) / 2**10) == pytest.approx(0.109375)
    assert sign_test_p(2, 8) == pytest.approx(0.109375)
    assert sign_test_p(5, 5) == pytest.approx(1.0)
    assert sign_test_p(0, 0) == 1.0


def test_all_tied():
    a = _s({"i1": 0.0, "i2": 0.5, "i3": 1.0})
    r = paired_comparison(a, a.copy())
    assert (r.improved, r.worsened, r.tied) == (0, 0, 3)
    assert r.p_value == 1.0 and r.mean_diff == 0.0 and (r.ci_low, r.ci_high) == (0.0, 0.0)


def test_ci_contains_the_true_mean_difference():
    ids = [f"i{k}" for k in range(8)]
    a = pd.Series([0.2, 0.4, 0.6, 0.8, 0.3, 0.5, 0.7, 0.9], index=ids)
    b = a - 0.1 + pd.Series([0.05, -0.05] * 4, index=ids)  # differences -0.05 / -0.15, mean exactly -0.1
    r = paired_comparison(a, b, n_resamples=5000, seed=3)
    assert r.mean_diff == pytest.approx(-0.1)
    assert -0.15 <= r.ci_low < -0.1 < r.ci_high <= -0.05
    assert r.improved == 8 and r.p_value == pytest.approx(2 * 0.5**8)
    rng = np.random.default_rng(0)
    ids = [f"j{k}" for k in range(300)]
    base = pd.Series(rng.uniform(0, 1, 300), index=ids)
    shifted = base - 0.2 + pd.Series(rng.normal(0, 0.1, 300), index=ids)
    r2 = paired_comparison(base, shifted, n_resamples=4000, seed=1, value_range=None)  # differences may go below 0
    assert r2.ci_low < -0.2 < r2.ci_high and r2.ci_high - r2.ci_low < 0.05
    const = paired_comparison(a, a - 0.2)
    assert (const.ci_low, const.ci_high) == (pytest.approx(-0.2), pytest.approx(-0.2))


def test_bootstrap_is_seeded_and_nan_pairs_are_dropped():
    a = _s({"i1": 0.1, "i2": 0.9, "i3": 0.4, "i4": np.nan})
    b = _s({"i1": 0.0, "i2": 0.3, "i3": 0.5, "i4": 0.2})
    r1, r2 = paired_comparison(a, b, seed=5), paired_comparison(a, b, seed=5)
    assert r1 == r2 and r1.n == 3 and r1.n_undefined == 1
    assert paired_comparison(_s({"x": np.nan}), _s({"x": 1.0})).n == 0
    with pytest.raises(ValueError, match="repeats"):
        paired_comparison(pd.Series([1.0, 0.5], index=["i1", "i1"]), b)


def test_unpaired_ids_and_out_of_range_rates_are_rejected_by_name():
    a = _s({"i1": 0.5, "i2": 1.0, "only_a": 0.9})
    b = _s({"i2": 0.5, "i1": 0.0, "only_b": 0.1, "only_b2": 0.0})
    with pytest.raises(PairingError, match=r"1 only in a \(only_a\); 2 only in b \(only_b, only_b2\)"):
        paired_comparison(a, b)
    with pytest.raises(PairingError, match=r"series b has 1 value\(s\) outside \[0, 1\]: i2=1.5"):
        paired_comparison(_s({"i1": 0.5, "i2": 1.0}), _s({"i1": 0.0, "i2": 1.5}))
    with pytest.raises(PairingError, match=r"series a .* i1=-0.1"):
        paired_comparison(_s({"i1": -0.1}), _s({"i1": 0.0}))
    assert paired_comparison(_s({"i1": 2.0}), _s({"i1": 3.0}), value_range=None).mean_diff == 1.0
    # no leakage in a: the relative reduction is undefined
    assert np.isnan(paired_comparison(_s({"i1": 0.0}), _s({"i1": 0.0})).relative_reduction)
    # v0 README's illustrative output: 0.241 -> 0.037 is an 84.6% relative reduction
    r = paired_comparison(_s({f"i{k}": v for k, v in enumerate([0.241] * 4)}),
                          _s({f"i{k}": v for k, v in enumerate([0.037] * 4)}))
    assert round(r.relative_reduction, 3) == 0.846


def _trace_scores() -> pd.DataFrame:
    rows = []
    un = {"s1": 1.0, "s2": 0.5, "s3": 0.0, "s4": 1.0}
    en = {"s1": 0.0, "s2": 0.0, "s3": 0.0, "s4": 0.5}
    for method, vals in (("rag_unrestricted", un), ("rag", en)):
        for iid, v in vals.items():
            rows.append({"task": "stock", "method": method, "model": "fake", "split": "eval", "instance_id": iid,
                         "n_calls": 2, "n_errors": 0, "tclr": v, "survivorship": 0.5, "restatement": v / 2,
                         "query_intent": 0.0})
    rows.append({"task": "legal", "method": "rag", "model": "fake", "split": "eval", "instance_id": "l1",
                 "n_calls": 1, "n_errors": 0, "tclr": 0.0, "survivorship": 0.0, "restatement": 0.0, "query_intent": 0.0})
    return pd.DataFrame(rows)


def test_enforcement_table_and_markdown():
    t = enforcement_table(_trace_scores(), n_resamples=1000)
    assert list(t.columns) == ENFORCEMENT_COLUMNS
    assert set(t["task"]) == {"stock"}  # legal has only one mode: no row
    tclr = t[t["metric"] == "tclr"].iloc[0]
    assert tclr["n"] == 4 and tclr["unrestricted"] == pytest.approx(0.625) and tclr["enforced"] == pytest.approx(0.125)
    assert tclr["diff"] == pytest.approx(-0.5) and tclr["ci_high"] <= 0
    assert (tclr["improved"], tclr["worsened"], tclr["tied"]) == (3, 0, 1)
    assert tclr["p_value"] == pytest.approx(0.25)
    surv = t[t["metric"] == "survivorship"].iloc[0]
    assert surv["tied"] == 4 and surv["p_value"] == 1.0
    md = enforcement_markdown(t)
    assert md.startswith("# Enforcement effect\n") and "| stock" in md and "-0.500 [" in md and "3 / 0 / 1" in md
    assert "sign test" in md
    assert "**No data:** no paired retrieval runs" in enforcement_markdown(enforcement_table(_trace_scores().iloc[0:0]))
    assert tclr["relative_reduction"] == pytest.approx(0.8) and tclr["status"] == "ok" and "80.0%" in md


def test_enforcement_table_names_instances_run_in_one_mode_only():
    scores = _trace_scores()
    scores = scores[~((scores["method"] == "rag") & (scores["instance_id"] == "s4"))]
    t = enforcement_table(scores, n_resamples=200)
    tclr = t[t["metric"] == "tclr"].iloc[0]
    assert tclr["n"] == 0 and np.isnan(tclr["diff"]) and "only in a (s4)" in tclr["status"]
    assert "not compared: " in enforcement_markdown(t)


# ------------------------------------------------------------------------------ anachron compare


def _parse(argv):
    parser = argparse.ArgumentParser(prog="anachron")
    add_compare_parser(parser.add_subparsers(dest="command"))
    return parser.parse_args(["compare", *argv])


def _run(argv) -> int:
    args = _parse(argv)
    return args.func(args)


def test_compare_files_table_and_json(tmp_path, capsys):
    un = pd.DataFrame({"instance_id": ["i1", "i2", "i3"], "tclr": [1.0, 0.5, 0.0], "split": "eval"})
    en = pd.DataFrame({"instance_id": ["i3", "i2", "i1"], "tclr": [0.0, 0.0, 0.0], "split": "eval"})
    un.to_parquet(tmp_path / "un.parquet")
    en.to_csv(tmp_path / "en.csv", index=False)
    assert _run([str(tmp_path / "un.parquet"), str(tmp_path / "en.csv"), "--n-resamples", "500"]) == 0
    out = capsys.readouterr().out
    assert "mean difference" in out and "-0.5000" in out and "2 / 0 / 1" in out
    assert _run([str(tmp_path / "un.parquet"), str(tmp_path / "en.csv"), "--format", "json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["n"] == 3 and res["mean_diff"] == pytest.approx(-0.5) and res["improved"] == 2 and res["tied"] == 1
    assert res["p_value"] == pytest.approx(0.5) and res["metric"] == "tclr"
    (tmp_path / "v0.json").write_text(json.dumps({"i1": 1.0, "i2": 0.5, "i3": 0.0}))
    assert load_scores(str(tmp_path / "v0.json"), "tclr").to_dict() == {"i1": 1.0, "i2": 0.5, "i3": 0.0}


def test_compare_run_specs_from_the_database(tmp_path, capsys):
    db = tmp_path / "results.duckdb"
    con = duckdb.connect(str(db))
    scores = _trace_scores()
    con.register("t", scores)
    con.execute("CREATE TABLE trace_scores AS SELECT * FROM t")
    perf = pd.DataFrame({"task": "stock", "method": ["temporal_hint"] * 2 + ["rag"] * 2, "model": "fake",
                         "split": "eval", "instance_id": ["s1", "s2", "s1", "s2"], "perf": [0.5, 0.6, 0.7, 0.8],
                         "olr": [0.1, 0.2, 0.0, 0.0]})
    con.register("p", perf)
    con.execute("CREATE TABLE instance_scores AS SELECT * FROM p")
    con.close()
    argv = ["stock/rag_unrestricted/fake", "stock/rag/fake", "--db", str(db), "--format", "json", "--n-resamples", "500"]
    assert _run(argv) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["n"] == 4 and res["mean_diff"] == pytest.approx(-0.5) and res["improved"] == 3
    assert _run(["stock/temporal_hint/fake", "stock/rag/fake", "--db", str(db), "--metric", "perf", "--format", "json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["mean_diff"] == pytest.approx(0.2) and res["improved"] == 2 and res["lower_is_better"] is False
    assert _run(["stock/nope/fake", "stock/rag/fake", "--db", str(db)]) == 2
    assert "no rows for run stock/nope/fake" in capsys.readouterr().err
    assert _run(["stock/rag/fake", "stock/rag/fake", "--db", str(db), "--metric", "bogus"]) == 2
    assert "no table with a column 'bogus'" in capsys.readouterr().err
    assert _run(["not-a-spec", "stock/rag/fake", "--db", str(db)]) == 2
    assert "neither an existing score file" in capsys.readouterr().err
    assert _run(["stock/rag/fake", "stock/rag/fake", "--db", str(tmp_path / "missing.duckdb")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_compare_bad_files(tmp_path, capsys):
    pd.DataFrame({"instance_id": ["i1"], "olr": [0.1]}).to_csv(tmp_path / "a.csv", index=False)
    assert _run([str(tmp_path / "a.csv"), str(tmp_path / "a.csv")]) == 2
    assert "missing required column(s) tclr" in capsys.readouterr().err
    pd.DataFrame({"instance_id": ["i1", "i1"], "tclr": [0.1, 0.2]}).to_csv(tmp_path / "d.csv", index=False)
    assert _run([str(tmp_path / "d.csv"), str(tmp_path / "a.csv")]) == 2
    assert "instance ids repeat" in capsys.readouterr().err
    assert _run([str(tmp_path / "gone.parquet"), str(tmp_path / "a.csv")]) == 2
    assert "no such file" in capsys.readouterr().err
    pd.DataFrame({"instance_id": ["i1", "i2"], "tclr": [0.1, 0.2]}).to_csv(tmp_path / "b.csv", index=False)
    pd.DataFrame({"instance_id": ["i1"], "tclr": [0.1]}).to_csv(tmp_path / "c.csv", index=False)
    assert _run([str(tmp_path / "b.csv"), str(tmp_path / "c.csv")]) == 2
    assert "unpaired instance ids: 1 only in a (i2)" in capsys.readouterr().err
    pd.DataFrame({"instance_id": ["i1"], "tclr": [1.2]}).to_csv(tmp_path / "r.csv", index=False)
    assert _run([str(tmp_path / "c.csv"), str(tmp_path / "r.csv")]) == 2
    assert "outside [0, 1]: i1=1.2" in capsys.readouterr().err
