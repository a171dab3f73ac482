"""The report tables of results/tables (anachron.report.tables, anachron.report.registry): their
numbers on the hand-written fixture database (tests/results_fixture.py), the report views, the
no-data paths of older, partial and empty databases, the Markdown / LaTeX / HTML renderings, and
the captions of ``snakemake --report`` (workflow/report/tables/*.rst) against the one list of tables."""

from __future__ import annotations

import shutil
from html.parser import HTMLParser

import duckdb
import numpy as np
import pandas as pd
import pytest

from anachron.metrics.paired import enforcement_table
from anachron.report.registry import FORMATS, REPORT_TABLES, render_table, report_view_statements
from anachron.report.render import TableData, latex_escape, render_html, render_latex, render_markdown
from anachron.report.tables import TABLE_NAMES
from anachron.store.load import write_database
from conftest import REPO
from results_fixture import CLEAN_PERF, PROBE_PERF, RUN_SCORES, scenario, write_results_db


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    return write_results_db(tmp_path_factory.mktemp("fixture"))


@pytest.fixture()
def con(db):
    c = duckdb.connect(str(db), read_only=True)
    yield c
    c.close()


def _numbers(con, name: str) -> pd.DataFrame:
    return REPORT_TABLES[name].numbers(con)


def _row(df: pd.DataFrame, **keys) -> pd.Series:
    sel = df
    for k, v in keys.items():
        sel = sel[sel[k] == v]
    assert len(sel) == 1, (keys, sel)
    return sel.iloc[0]


def _copy_without_views(db, tmp_path, name="old.duckdb"):
    """A copy of ``db`` without the report views: a database written before they existed."""
    path = tmp_path / name
    shutil.copy(db, path)
    c = duckdb.connect(str(path))
    for t in REPORT_TABLES.values():
        c.execute(f"DROP VIEW IF EXISTS {t.view}")
    return path, c


# ----------------------------------------------------------------------------- numbers


def test_main_values_and_best_of_block(con):
    df = _numbers(con, "main")
    assert set(df["split"]) == {"eval"}  # control rows live in the control table
    th = _row(df, task="stock", method="temporal_hint", model="m1")
    assert th["olr"] == pytest.approx(0.25) and th["olr_strict"] == pytest.approx(0.3125)
    assert th["n"] == 4 and th["olr_n"] == 4 and th["perf"] == pytest.approx(0.6) and th["cov"] == pytest.approx(0.75)
    stock = df[df["task"] == "stock"]
    assert stock.loc[stock["best_olr"], ["method", "model"]].values.tolist() == [["timespec", "m1"]]
    assert stock.loc[stock["best_perf"], ["method", "model"]].values.tolist() == [["temporal_hint", "m2"]]
    legal = df[df["task"] == "legal"]  # a tie: both rows with Perf 0.75 are best
    assert sorted(legal.loc[legal["best_perf"], "method"]) == ["rag", "temporal_hint"]

    data = REPORT_TABLES["main"].build(con)
    frame = data.frame
    i = frame.index[(frame["Task"] == "stock") & (frame["Method"] == "temporal_hint") & (frame["Model"] == "m1")][0]
    assert frame.loc[i, "OLR % ↓ [95% CI]"].startswith("25.0 [") and frame.loc[i, "strict OLR % [95% CI]"].startswith("31.2")
    j = frame.index[(frame["Task"] == "stock") & (frame["Method"] == "timespec")][0]
    assert (j, "OLR % ↓ [95% CI]") in data.bold and (i, "OLR % ↓ [95% CI]") not in data.bold
    assert data.blocks == (list(frame["Task"]).index("stock"),)  # one rule, between legal and stock
    md = render_markdown(data, "t", "n")
    assert f"**{frame.loc[j, 'OLR % ↓ [95% CI]']}**" in md


def test_main_marks_nothing_in_a_block_of_equal_values(tmp_path):
    frames = scenario()
    frames["instance_scores"].loc[frames["instance_scores"]["task"] == "legal", "olr"] = 0.0
    with duckdb.connect(str(write_results_db(tmp_path, frames)), read_only=True) as c:
        df = _numbers(c, "main")
    assert not df.loc[df["task"] == "legal", "best_olr"].any()
    assert df.loc[df["task"] == "stock", "best_olr"].sum() == 1


def test_main_has_perf_clean_and_the_leak_share_beside_perf(con):
    row = _row(_numbers(con, "main"), task="stock", method="temporal_hint", model="m1", split="eval")
    perf = np.mean([p for _, p, _ in RUN_SCORES[("stock", "temporal_hint", "m1")][:4]])
    clean = np.mean(CLEAN_PERF[:4])  # the eval instances
    assert row["perf_clean"] == pytest.approx(clean) and row["perf_leak_share"] == pytest.approx((perf - clean) / perf)
    other = _row(_numbers(con, "main"), task="stock", method="temporal_hint", model="m2", split="eval")
    assert pd.isna(other["perf_clean"])  # no clean_scores for m2: "–" in the table
    text = render_table("main", con)["md"]
    assert "perf_clean" in text and "leak share" in text


def test_probes_table_pairs_the_probes_with_the_method(con):
    df = _numbers(con, "probes")
    assert set(df["method"]) == {"temporal_hint"}  # no probe run shows as a method of its own
    row = _row(df, task="stock", method="temporal_hint", model="m1", split="eval")
    perf = [p for _, p, _ in RUN_SCORES[("stock", "temporal_hint", "m1")][:4]]
    neut = PROBE_PERF["neutered"][:4]
    paired = [(a, b) for a, b in zip(perf, neut) if b is not None]
    assert row["neutered_gap"] == pytest.approx(np.mean([a - b for a, b in paired]))
    assert row["neutered_gap_n"] == 3 and row["neutered_skipped"] == 1 and row["neutered_skipped_n"] == 4
    assert row["reid_rate"] == pytest.approx(2 / 3)
    assert row["shift_change_rate"] == pytest.approx(3 / 4)
    assert row["shift_perf_change"] == pytest.approx(np.mean(np.array(PROBE_PERF["date_shift"][:4]) - perf))
    files = render_table("probes", con)
    assert "1/4, 0/4" in files["md"] and "66.7" in files["md"]
    main = _numbers(con, "main")
    assert not main["method"].str.contains("@").any()


def test_control_floor_per_run_and_pooled(con):
    df = _numbers(con, "control")
    m2 = _row(df, task="stock", method="temporal_hint", model="m2")
    assert m2["olr"] == pytest.approx(0.125) and m2["n"] == 2 and m2["vs_paper"] == "above"
    pooled = _row(df, task="stock", scope="pooled")
    # stock control instances: 5 runs x 2; one instance leaks 1 of 4 claims
    assert pooled["olr"] == pytest.approx(0.25 / 10) and pooled["n"] == 10 and pooled["n_runs"] == 5
    assert _row(df, task="legal", scope="pooled")["olr"] == 0.0
    assert list(df["scope"]) == ["run"] * 3 + ["pooled"] + ["run"] * 5 + ["pooled"]  # each task's runs, then its floor
    cells = REPORT_TABLES["control"].build(con).frame
    assert cells.iloc[9]["Method"] == "all (5 runs)" and cells.iloc[9]["control OLR % [95% CI]"] == "2.5"


def test_olr_bins(con):
    df = _numbers(con, "olr_bins")
    r = _row(df, task="stock", method="temporal_hint", model="m1", split="eval")  # OLRs 0.5, 0.25, 0, 0.25
    assert (r["n"], r["n_zero"], r["n_upto_5"], r["n_upto_10"], r["n_above_10"]) == (4, 1, 0, 0, 3)
    assert r["share_zero"] == pytest.approx(0.25) and r["share_above_10"] == pytest.approx(0.75)
    cells = REPORT_TABLES["olr_bins"].build(con).frame
    row = cells[(cells["Task"] == "stock") & (cells["Method"] == "temporal_hint") & (cells["Model"] == "m1")
                & (cells["Split"] == "eval")].iloc[0]
    assert row["OLR = 0"] == "25.0 (1)" and row["OLR > 10%"] == "75.0 (3)"


def test_olr_bin_edges(tmp_path):
    frames = scenario()
    s = frames["instance_scores"]
    key = (s["task"] == "stock") & (s["method"] == "rag") & (s["model"] == "m1") & (s["split"] == "eval")
    s.loc[key, "olr"] = [0.05, 0.1, 0.1000001, 0.0]  # edges belong to the lower bin
    with duckdb.connect(str(write_results_db(tmp_path, frames)), read_only=True) as c:
        r = _row(_numbers(c, "olr_bins"), task="stock", method="rag", split="eval")
    assert (r["n_zero"], r["n_upto_5"], r["n_upto_10"], r["n_above_10"]) == (1, 1, 1, 1)


def test_coverage_distribution(con):
    df = _numbers(con, "coverage")
    r = _row(df, task="stock", method="temporal_hint", model="m1", split="eval")  # Cov 1, .5, 1, .5
    assert r["mean_cov"] == pytest.approx(0.75) and r["n_above_80"] == 2 and r["share_above_80"] == pytest.approx(0.5)
    r = _row(df, task="stock", method="timespec", model="m1", split="eval")  # Cov 1, 1, .75, 1
    assert r["share_above_90"] == pytest.approx(0.75) and r["share_above_80"] == pytest.approx(0.75)
    assert r["n_zero"] == 0


def test_cost_per_instance_and_totals(con):
    df = _numbers(con, "cost")
    th = _row(df, task="stock", method="temporal_hint", model="m1", calls_for="run")
    assert th["instances"] == 6 and th["calls"] == 6 and (th["calls_made"], th["calls_cached"]) == (4, 2)
    assert th["prompt_tokens_per_instance"] == pytest.approx(1000) and th["completion_tokens_per_instance"] == 200
    assert th["seconds_per_instance"] == pytest.approx(1.5) and th["searches_per_instance"] == 0
    ts = _row(df, task="stock", method="timespec", model="m1", calls_for="run")  # draft + supervisor
    assert ts["calls_per_instance"] == 2 and ts["prompt_tokens_per_instance"] == pytest.approx(2000)
    rag = _row(df, task="stock", method="rag", model="m1", calls_for="run")
    assert rag["searches_per_instance"] == 2 and rag["searches"] == 12
    total = _row(df, calls_for="total")
    # 8 runs x 6 instances, timespec twice the calls: 60 calls of 1,000 + 200 tokens; m1's control calls cached
    assert total["calls"] == 60 and (total["calls_made"], total["calls_cached"]) == (42, 18)
    assert total["prompt_tokens"] + total["completion_tokens"] == 72_000 and total["searches"] == 36  # 3 searching runs x 6 x 2
    assert df["cost_usd"].isna().all()


def test_cost_says_why_without_a_cost_column(db, tmp_path):
    path, c = _copy_without_views(db, tmp_path)
    c.execute("ALTER TABLE llm_calls DROP COLUMN cost_usd")  # a database built before cost accounting
    c.close()
    with duckdb.connect(str(path), read_only=True) as ro:
        data = REPORT_TABLES["cost"].build(ro)
    assert set(data.frame["USD / inst."]) == {"n/a"} and set(data.frame["USD spent (calls made)"]) == {"n/a"}
    assert any("no `cost_usd` column" in n and "re-run load_results" in n for n in data.notes)
    assert "no `cost_usd` column" in render_markdown(data, "Cost", REPORT_TABLES["cost"].note)


def test_cost_uses_cost_usd_when_present(tmp_path):
    # $1 per million prompt tokens, $2 per million completion tokens; m2 has no price (the loader's prices)
    path = write_results_db(tmp_path, prices={"m1": (1.0, 2.0)})
    with duckdb.connect(str(path), read_only=True) as ro:
        df = _numbers(ro, "cost")
        data = REPORT_TABLES["cost"].build(ro)
    th = _row(df, task="stock", method="temporal_hint", model="m1", calls_for="run")
    assert th["cost_usd_per_instance"] == pytest.approx(0.0014) and th["cost_usd_made"] == pytest.approx(4 * 0.0014)
    assert not data.notes
    cells = data.frame.set_index(["Task", "Method", "Model"])
    assert cells.loc[("stock", "temporal_hint", "m1"), "USD / inst."] == "0.0014"
    assert cells.loc[("stock", "temporal_hint", "m1"), "USD spent (calls made)"] == "0.01"
    assert cells.loc[("stock", "temporal_hint", "m2"), "USD / inst."] == "n/a"
    assert data.frame.iloc[-1]["Task"] == "Total" and data.frame.iloc[-1]["USD spent (calls made)"].startswith("≥ ")


def test_cost_splits_verifier_and_shapley_calls(tmp_path):
    frames = scenario()
    calls = frames["llm_calls"]
    extra = calls[(calls["method"] == "rag") & (calls["task"] == "stock")].copy()
    verifier = extra.assign(model_key="judge", step="extract_claims", call_id=extra["call_id"] + ":v")
    shap = extra.head(2).assign(step="shapley", call_id=extra["call_id"].head(2) + ":s")
    frames["llm_calls"] = pd.concat([calls, verifier, shap], ignore_index=True)
    frames["shapley"] = _shapley_rows()
    with duckdb.connect(str(write_results_db(tmp_path, frames)), read_only=True) as c:
        df = _numbers(c, "cost")
    v = _row(df, task="stock", method="rag", calls_for="verifier")
    assert v["model"] == "judge" and v["calls"] == 6 and v["instances"] == 6 and pd.isna(v["searches"])
    s = _row(df, task="stock", method="rag", model="m1", calls_for="shapley")
    assert s["calls"] == 2 and s["instances"] == 1 and s["calls_per_instance"] == 2
    assert _row(df, task="stock", method="rag", model="m1", calls_for="run")["calls"] == 6  # unchanged
    order = df[(df["task"] == "stock") & (df["method"] == "rag")]["calls_for"].tolist()
    assert order == ["run", "shapley", "verifier"]


def _shapley_rows() -> pd.DataFrame:
    base = {"task": "stock", "method": "rag", "model": "m1", "split": "eval", "n_calls": 4, "budget": 16,
            "n_failed": 0, "v_empty": 0.5, "v_all": 0.7, "exact_mae": None}
    return pd.DataFrame([
        {**base, "instance_id": "stock-2", "n_claims": 4, "n_leaked": 1, "estimator": "exact", "dclr": 0.4,
         "top1": 1.0, "top3": 1 / 3, "top5": 0.25},
    ])


def test_dclr_from_the_shapley_table(tmp_path):
    frames = scenario()
    frames["shapley"] = _shapley_rows()
    with duckdb.connect(str(write_results_db(tmp_path, frames)), read_only=True) as c:
        df = _numbers(c, "dclr")
        cells = REPORT_TABLES["dclr"].build(c).frame
    r = _row(df, task="stock", method="rag", split="eval")
    assert r["dclr"] == pytest.approx(0.4) and r["top1"] == 1.0 and r["n"] == 1 and r["n_exact"] == 1
    assert r["olr"] == pytest.approx(0.25)  # instance stock-2 of stock/rag/m1
    assert cells.iloc[0]["DCLR % [95% CI]"] == "40.0 [40.0, 40.0]" and cells.iloc[0]["Top-3 % [95% CI]"].startswith("33.3")
    assert cells.iloc[0]["calls mean (max) / budget"] == "4.0 (4) / 16"


def test_enforcement_matches_the_python_paired_comparison(con):
    rows = _numbers(con, "enforcement")
    traces = con.execute("SELECT * FROM trace_scores").df()
    want = enforcement_table(traces).set_index(["task", "model", "split", "metric"])
    from anachron.report.tables.enforcement import enforcement_frame

    got = enforcement_frame(rows, con).set_index(["task", "model", "split", "metric"])
    assert sorted(got.index) == sorted(want.index)
    for col in ("n", "unrestricted", "enforced", "diff", "ci_low", "ci_high", "p_value", "improved", "worsened", "tied"):
        np.testing.assert_allclose(got.loc[want.index, col].astype(float), want[col].astype(float), equal_nan=True,
                                   err_msg=col)
    tclr = got.loc[("stock", "m1", "eval", "tclr")]
    assert tclr["unrestricted"] == pytest.approx(0.5) and tclr["enforced"] == 0 and tclr["improved"] == 4
    assert list(rows[rows["split"] == "eval"]["metric"]) == ["tclr", "survivorship", "restatement"]


def test_enforcement_names_unpaired_instances(tmp_path):
    frames = scenario()
    t = frames["tool_calls"]
    frames["tool_calls"] = t[~((t["method"] == "rag") & (t["instance_id"] == "stock-3"))]
    c = frames["completions"]
    frames["completions"] = c[~((c["method"] == "rag") & (c["instance_id"] == "stock-3"))]
    with duckdb.connect(str(write_results_db(tmp_path, frames)), read_only=True) as con:
        data = REPORT_TABLES["enforcement"].build(con)
    row = data.frame[(data.frame["Split"] == "eval") & (data.frame["Metric"] == "tclr")].iloc[0]
    assert "not compared" in row["Δ [95% CI]"] and "1 only unrestricted" in row["Δ [95% CI]"]
    assert "stock-3" in row["Δ [95% CI]"]


def test_calibration_compact_table(con):
    df = _numbers(con, "calibration")
    assert list(df["kind"]) == ["post_cutoff", "pre_cutoff"]  # recall rows first
    r = _row(df, kind="post_cutoff")
    assert r["rate"] == pytest.approx(0.9) and r["meets_bar"] == False  # noqa: E712 (numpy bool) 0.90 < 0.95
    cells = REPORT_TABLES["calibration"].build(con)
    assert cells.frame.iloc[0]["Rate % [Wilson 95% CI]"] == "90.0 [82.0, 98.0]" and cells.frame.iloc[0]["bar"] == "misses"
    assert (0, "bar") in cells.bold
    fp = _row(df, kind="pre_cutoff")
    assert fp["metric"] == "fp_rate" and fp["rate"] == pytest.approx(0.05) and fp["meets_bar"] == False  # noqa: E712 5% > 1%


def test_training_first_last_and_best(con):
    r = _numbers(con, "training").iloc[0]
    assert (r["model"], r["task"], r["first_step"], r["last_step"]) == ("m1", "stock", 0, 2)
    assert r["mode_first"] == pytest.approx(0.25) and r["mode_last"] == pytest.approx(0.75)
    assert r["val_olr_first"] == pytest.approx(0.5) and r["val_olr_last"] == pytest.approx(0.125)
    assert r["best_step"] == 2 and r["val_olr_best"] == pytest.approx(0.125) and r["val_perf_best"] == pytest.approx(0.5)
    cells = REPORT_TABLES["training"].build(con).frame.iloc[0]
    assert cells["perf-mode fraction"] == "0.25 → 0.75" and cells["val. OLR %"] == "50.0 → 12.5"


def test_training_best_is_the_last_improvement_and_skips_steps_without_values(tmp_path):
    frames = scenario()
    log = frames["training_log"]
    extra = log.iloc[[2, 2]].copy()
    extra["step"] = [3, 4]
    extra["val_olr"] = [0.25, np.nan]  # no better; then a validation without an OLR
    extra["checkpoint"] = [None, None]
    extra["perf_mode_fraction"] = [0.9, np.nan]
    frames["training_log"] = pd.concat([log, extra], ignore_index=True)
    with duckdb.connect(str(write_results_db(tmp_path, frames)), read_only=True) as c:
        r = _numbers(c, "training").iloc[0]
    assert r["last_step"] == 3 and r["mode_last"] == pytest.approx(0.9)
    assert r["val_last_step"] == 4 and pd.isna(r["val_olr_last"])  # the last validation, even without an OLR
    assert r["best_step"] == 2


# ----------------------------------------------------------------------------- views


def test_views_hold_what_the_tables_show(con):
    names = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    assert {f"report_{n}" for n in TABLE_NAMES} <= names
    for name in TABLE_NAMES:
        view = con.execute(f"SELECT * FROM report_{name}").df()
        pd.testing.assert_frame_equal(view, _numbers(con, name), obj=name)


def test_write_database_runs_the_view_statements(tmp_path):
    out = tmp_path / "r.duckdb"
    write_database(out, instances=[], run_meta=[], completions=[], llm_calls=[], claims=[], instance_scores=[],
                   views=["CREATE VIEW extra_view AS SELECT count(*) AS n FROM instances"])
    with duckdb.connect(str(out), read_only=True) as c:
        assert c.execute("SELECT n FROM extra_view").fetchone() == (0,)
    bad = tmp_path / "bad.duckdb"
    with pytest.raises(duckdb.Error):
        write_database(bad, instances=[], run_meta=[], completions=[], llm_calls=[], claims=[], instance_scores=[],
                       views=["CREATE VIEW v AS SELECT * FROM no_such_table"])
    assert not bad.exists() and not list(tmp_path.glob(".bad.duckdb*"))


def test_report_views_are_created_on_an_empty_database(tmp_path):
    out = tmp_path / "r.duckdb"
    write_database(out, instances=[], run_meta=[], completions=[], llm_calls=[], claims=[], instance_scores=[],
                   views=report_view_statements())
    with duckdb.connect(str(out), read_only=True) as c:
        for name in TABLE_NAMES:
            assert c.execute(f"SELECT count(*) FROM report_{name}").fetchone() == (0,)


# ----------------------------------------------------------------------------- bad input


def test_a_database_without_the_views_renders_the_same(db, tmp_path, con):
    path, c = _copy_without_views(db, tmp_path)
    c.close()
    with duckdb.connect(str(path), read_only=True) as old:
        for name in TABLE_NAMES:
            assert render_table(name, old) == render_table(name, con), name


def test_empty_database_says_no_data_everywhere(tmp_path):
    with duckdb.connect(str(write_results_db(tmp_path, frames={})), read_only=True) as c:
        for name in TABLE_NAMES:
            data = REPORT_TABLES[name].build(c)
            assert data.reason == REPORT_TABLES[name].empty, name
            files = render_table(name, c)
            assert "No data" in files["md"] and "No data" in files["html"] and "No data" in files["tex"]
    assert "TEMPO training did not run (`snakemake tempo`)" in REPORT_TABLES["training"].empty


@pytest.mark.parametrize("dropped, name, reason", [
    ("training_log", "training", "TEMPO training did not run"),
    ("tool_calls", "enforcement", "no paired retrieval runs"),
    ("calibration", "calibration", "calibrate_verifier did not run"),
    ("probe_scores", "probes", "no probe run"),
])
def test_tables_left_empty_say_why(tmp_path, dropped, name, reason):
    with duckdb.connect(str(write_results_db(tmp_path, drop=(dropped,))), read_only=True) as c:
        data = REPORT_TABLES[name].build(c)
        assert data.reason and reason in data.reason
        assert REPORT_TABLES["main"].build(c).has_data  # the others still render


def test_missing_table_or_column_names_it(db, tmp_path):
    path, c = _copy_without_views(db, tmp_path)
    c.execute("DROP TABLE trace_scores")
    c.execute("ALTER TABLE llm_calls DROP COLUMN step")
    c.execute("DROP TABLE training_log")
    c.close()
    with duckdb.connect(str(path), read_only=True) as old:
        enf = render_table("enforcement", old)
        assert "no table `trace_scores`" in enf["md"] and "re-run load_results" in enf["md"]
        assert "no column `step`" in render_table("cost", old)["html"].replace("<code>", "`").replace("</code>", "`")
        assert "no table" in REPORT_TABLES["training"].build(old).reason
        assert REPORT_TABLES["main"].build(old).has_data


def test_a_table_that_fails_to_build_still_renders(con, monkeypatch):
    import dataclasses

    from anachron.report import registry

    def boom(rows, c):
        raise RuntimeError("formatter bug")

    monkeypatch.setitem(registry.REPORT_TABLES, "coverage", dataclasses.replace(registry.REPORT_TABLES["coverage"], format=boom))
    files = render_table("coverage", con)
    assert "No data" in files["md"] and "RuntimeError: formatter bug" in files["md"]
    assert set(files) == set(FORMATS)


# ----------------------------------------------------------------------------- rendering


def _data() -> TableData:
    frame = pd.DataFrame({"Task": ["stock", "legal_x"], "Method": ["rag_unrestricted", "a & b"],
                          "OLR % [95% CI]": ["25.0 [6.2, 37.5]", "–"], "n": ["4", "0"]})
    return TableData(frame=frame, n_keys=2, bold=frozenset({(0, "OLR % [95% CI]")}), blocks=(1,),
                     notes=("Extra: `cost_usd` missing.",))


def test_latex_escaping_and_layout():
    assert latex_escape("50% of a_b & $x # {y} ~ ^") == r"50\% of a\_b \& \$x \# \{y\} \textasciitilde{} \textasciicircum{}"
    assert latex_escape("OLR ↓ – Δ × `rag_x`") == r"OLR $\downarrow$ -- $\Delta$ $\times$ \texttt{rag\_x}"
    assert latex_escape("back\\slash") == r"back\textbackslash{}slash"
    tex = render_latex(_data(), "Title_1", "Note 5%.", "tab:x")
    assert r"\begin{tabular}{llrr}" in tex and r"rag\_unrestricted" in tex and r"a \& b" in tex
    assert r"\textbf{25.0 [6.2, 37.5]}" in tex and r"OLR \% [95\% CI]" in tex
    assert r"\caption{Title\_1. Note 5\%. Extra: \texttt{cost\_usd} missing.}" in tex and r"\label{tab:x}" in tex
    body = tex.split(r"\midrule", 1)[1]
    assert body.count(r"\midrule") == 1  # one rule between the two blocks
    for line in tex.splitlines():
        if not line.startswith("%"):
            assert line.count("{") == line.count("}"), line
    no = render_latex(TableData.no_data("no table `x`_y"), "T", "N", "tab:t")
    assert r"\emph{No data: no table \texttt{x}\_y}" in no and r"\begin{tabular}" not in no


class _Checker(HTMLParser):
    """Well-formedness of the HTML we write: every element closed in order (void elements aside)."""

    VOID = {"meta", "br", "link"}

    def __init__(self):
        super().__init__()
        self.stack: list[str] = []
        self.counts: dict[str, int] = {}
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.counts[tag] = self.counts.get(tag, 0) + 1
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        assert self.stack and self.stack[-1] == tag, (tag, self.stack)
        self.stack.pop()

    def handle_data(self, data):
        self.text.append(data)


def _check_html(doc: str) -> _Checker:
    assert doc.startswith("<!DOCTYPE html>")
    p = _Checker()
    p.feed(doc)
    p.close()
    assert p.stack == []
    return p


def test_html_is_well_formed_and_marks_numbers_and_best():
    doc = render_html(_data(), "Title <1>", "Note & more `code`.")
    p = _check_html(doc)
    assert p.counts["tr"] == 3 and p.counts["th"] == 4 and p.counts["td"] == 8
    assert p.counts["strong"] == 1 and p.counts["table"] == 1 and p.counts["style"] == 1
    assert "<strong>25.0</strong><span class=\"ci\">[6.2, 37.5]</span>" in doc  # CI on its own line
    assert 'class="num"' in doc and "text-align: right" in doc and "position: sticky" in doc
    assert "Title &lt;1&gt;" in doc and "a &amp; b" in doc and "<code>code</code>" in doc
    assert '<tr class="block">' in doc
    nodata = render_html(TableData.no_data("no table `x`"), "T", "N")
    q = _check_html(nodata)
    assert "table" not in q.counts and "No data: no table <code>x</code>" in nodata


def test_every_rendered_file_of_the_fixture(con):
    for name in TABLE_NAMES:
        files = render_table(name, con)
        assert set(files) == set(FORMATS)
        _check_html(files["html"])
        assert files["md"].startswith(f"# {REPORT_TABLES[name].title}\n")
        assert f"\\label{{tab:{name}}}" in files["tex"]
    assert "No data" in render_table("dclr", con)["md"]  # the fixture attributes nothing


def test_markdown_alignment_and_no_data():
    md = render_markdown(_data(), "T", "N")
    assert "|:--" in md and "--:|" in md  # keys left, numbers right
    assert "**25.0 [6.2, 37.5]**" in md and md.rstrip().endswith("Extra: `cost_usd` missing.")
    assert render_markdown(TableData.no_data("why"), "T", "N") == "# T\n\n**No data:** why\n\nN\n"


def test_cost_spent_is_zero_when_every_priced_call_was_cached(tmp_path):
    frames = scenario()
    calls = frames["llm_calls"]
    calls.loc[(calls["task"] == "stock") & (calls["method"] == "temporal_hint"), "cache_hit"] = True
    path = write_results_db(tmp_path, frames, prices={"m1": (1.0, 2.0)})
    with duckdb.connect(str(path), read_only=True) as ro:
        df = _numbers(ro, "cost")
        cells = REPORT_TABLES["cost"].build(ro).frame.set_index(["Task", "Method", "Model"])
    th = _row(df, task="stock", method="temporal_hint", model="m1", calls_for="run")
    assert th["cost_usd_made"] == 0.0 and th["cost_usd"] == pytest.approx(6 * 0.0014)
    assert cells.loc[("stock", "temporal_hint", "m1"), "USD spent (calls made)"] == "0.00"
    assert cells.loc[("stock", "temporal_hint", "m1"), "USD (all calls)"] == "0.01"
    assert cells.loc[("stock", "temporal_hint", "m2"), "USD spent (calls made)"] == "n/a"  # m2 has no price


# ----------------------------------------------------------------------------- the one list of tables


def test_every_table_module_is_in_the_list_once():
    from anachron.report.registry import load_table

    modules = {p.stem for p in (REPO / "src" / "anachron" / "report" / "tables").glob("*.py")} - {"__init__", "base"}
    assert sorted(modules) == sorted(TABLE_NAMES) and len(set(TABLE_NAMES)) == len(TABLE_NAMES)
    assert tuple(REPORT_TABLES) == TABLE_NAMES
    assert all(load_table(name) is REPORT_TABLES[name] and REPORT_TABLES[name].name == name for name in TABLE_NAMES)


def test_every_table_and_figure_has_a_caption_and_a_category():
    # snakemake --report reads workflow/report/{tables,figures}/{name}.rst (report_file in common.smk)
    from anachron.report import FIGURE_NAMES, REPORT_LAYOUT

    captions = REPO / "workflow" / "report"
    assert sorted(p.stem for p in (captions / "tables").glob("*.rst")) == sorted(TABLE_NAMES)
    assert sorted(p.stem for p in (captions / "figures").glob("*.rst")) == sorted(FIGURE_NAMES)
    assert set(REPORT_LAYOUT) == set(TABLE_NAMES) | set(FIGURE_NAMES)


def test_revised_labels(con):
    df = _numbers(con, "revised_labels")
    # only the runs with a revised label: the legal ones, on eval (instances 1 and 3)
    assert set(df["task"]) == {"legal"} and set(df["split"]) == {"eval"}
    r = _row(df, task="legal", method="temporal_hint", model="m1", split="eval")
    assert (r["n"], r["n_revised"]) == (4, 2)
    assert r["perf_all"] == pytest.approx(0.75) and r["perf_first_release"] == pytest.approx(1.0)
    assert r["olr_all"] == pytest.approx(0.5) and r["olr_first_release"] == pytest.approx(0.75)
    cells = REPORT_TABLES["revised_labels"].build(con).frame
    assert list(cells.loc[0, ["revised labels", "Perf, all", "Perf, first-published only"]]) == ["2 (50%)", "0.750", "1.000"]
