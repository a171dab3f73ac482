"""The report's figures (anachron.report.figures) against the hand-written results database of
tests/results_fixture.py: what each figure draws is the fixture's numbers, no two texts overlap,
legends sit outside the axes, and a missing / empty table or column gives a "no data" figure."""

from __future__ import annotations

import itertools
import shutil
from pathlib import Path
from unittest import mock

import duckdb
import numpy as np
import pandas as pd
import pytest
from matplotlib.legend import Legend
from matplotlib.text import Text

from anachron.report import FIGURE_NAMES
from anachron.report.figures import (
    FIGURES,
    calibration_figure,
    coverage_distribution_figure,
    leakage_performance_figure,
    no_data_reasons,
    olr_distribution_figure,
    save_figure,
    training_plot_figure,
)
from anachron.verify.calibration.evaluate import FP_MAX, RECALL_MIN

from results_fixture import RUN_SCORES, scenario, split_of, write_results_db

TEST_DPI = 72


# ---------------------------------------------------------------------------
# helpers


def drawn_texts(fig) -> list[Text]:
    """The non-empty texts a render of ``fig`` actually draws (tick labels of ticks outside the view
    are never drawn, so they are not counted)."""
    fig.set_dpi(TEST_DPI)
    seen: list[Text] = []
    original = Text.draw

    def record(self, renderer):
        if self.get_visible() and self.get_text().strip():
            seen.append(self)
        return original(self, renderer)

    with mock.patch.object(Text, "draw", record):
        fig.canvas.draw()
    return seen


def assert_readable(fig) -> None:
    """Draw ``fig`` and assert: no two drawn texts' window extents overlap (tick labels, titles,
    legend entries, annotations), every text and legend lies inside the figure, and no legend
    covers an axes."""
    texts = drawn_texts(fig)
    renderer = fig.canvas.get_renderer()
    page = fig.bbox
    boxes = [(t, t.get_window_extent(renderer)) for t in texts]
    for t, b in boxes:
        assert b.x0 >= page.x0 - 1 and b.y0 >= page.y0 - 1 and b.x1 <= page.x1 + 1 and b.y1 <= page.y1 + 1, \
            f"{t.get_text()!r} {b} lies outside the figure {page}"
    for (t1, b1), (t2, b2) in itertools.combinations(boxes, 2):
        w = min(b1.x1, b2.x1) - max(b1.x0, b2.x0)
        h = min(b1.y1, b2.y1) - max(b1.y0, b2.y0)
        assert w <= 0.5 or h <= 0.5, f"{t1.get_text()!r} overlaps {t2.get_text()!r}"
    for leg in fig.findobj(Legend):
        lb = leg.get_window_extent(renderer)
        assert page.x0 - 1 <= lb.x0 and lb.x1 <= page.x1 + 1 and page.y0 - 1 <= lb.y0 and lb.y1 <= page.y1 + 1
        for ax in fig.axes:
            ab = ax.get_window_extent(renderer)
            assert not lb.overlaps(ab), "a legend covers an axes"


def by_gid(fig, prefix: str) -> dict[str, object]:
    """Artists of ``fig`` whose gid starts with ``prefix:``, keyed by the rest of the gid."""
    return {a.get_gid()[len(prefix) + 1:]: a for a in fig.findobj(lambda a: str(a.get_gid() or "").startswith(prefix + ":"))}


def eval_mean(task: str, method: str, model: str, k: int) -> float:
    """Mean of component ``k`` (0 OLR, 1 Perf, 2 Cov) over a fixture run's eval instances."""
    return float(np.mean([s[k] for i, s in enumerate(RUN_SCORES[(task, method, model)]) if split_of(i) == "eval"]))


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> Path:
    return write_results_db(tmp_path_factory.mktemp("figures"))


@pytest.fixture(scope="module")
def con(db):
    c = duckdb.connect(str(db), read_only=True)
    yield c
    c.close()


def _altered(db: Path, tmp_path: Path, *sql: str) -> duckdb.DuckDBPyConnection:
    """A copy of ``db`` with ``sql`` applied, opened read-only."""
    copy = tmp_path / "altered.duckdb"
    shutil.copy(db, copy)
    with duckdb.connect(str(copy)) as c:
        for s in sql:
            c.execute(s)
    return duckdb.connect(str(copy), read_only=True)


# ---------------------------------------------------------------------------
# the leakage–performance plane


def test_plane_has_one_point_per_eval_run_at_its_olr_and_perf(con):
    points = by_gid(leakage_performance_figure(con), "point")
    assert set(points) == {f"{t}:{m}:{mo}" for t, m, mo in RUN_SCORES}
    for (t, m, mo) in RUN_SCORES:
        line = points[f"{t}:{m}:{mo}"]
        assert line.get_xdata()[0] == pytest.approx(100 * eval_mean(t, m, mo, 0))
        assert line.get_ydata()[0] == pytest.approx(eval_mean(t, m, mo, 1))


def test_plane_arrows_run_from_temporal_hint_of_the_same_model(con):
    fig = leakage_performance_figure(con)
    arrows = by_gid(fig, "arrow")
    expected = {f"{t}:{m}:{mo}" for t, m, mo in RUN_SCORES if m != "temporal_hint" and (t, "temporal_hint", mo) in RUN_SCORES}
    assert set(arrows) == expected and len(expected) == 5  # m2 has Temporal Hint only
    points = by_gid(fig, "point")
    a = arrows["stock:rag:m1"]
    (x0, y0), (x1, y1) = a._posA_posB
    hint, rag = points["stock:temporal_hint:m1"], points["stock:rag:m1"]
    assert (x0, y0) == pytest.approx((hint.get_xdata()[0], hint.get_ydata()[0]))
    assert (x1, y1) == pytest.approx((rag.get_xdata()[0], rag.get_ydata()[0]))


def test_plane_floor_is_the_pooled_control_olr(con):
    floors = by_gid(leakage_performance_figure(con), "floor")
    for task in ("stock", "legal"):
        control = [s[0] for (t, _, _), per in RUN_SCORES.items() if t == task for i, s in enumerate(per) if split_of(i) == "control"]
        assert floors[task].get_xdata()[0] == pytest.approx(100 * np.mean(control))
    assert floors["stock"].get_xdata()[0] == pytest.approx(2.5)  # 0.25 over ten control instances


def test_plane_error_bars_are_the_metrics_cis(con):
    row = con.execute("SELECT ci_low, ci_high FROM metrics WHERE task = 'stock' AND method = 'rag_unrestricted' "
                      "AND model = 'm1' AND split = 'eval' AND metric = 'olr'").fetchone()
    fig = leakage_performance_figure(con)
    point = by_gid(fig, "point")["stock:rag_unrestricted:m1"]
    ax = point.axes
    # the horizontal error bar of that point: a LineCollection segment at the point's y spanning the CI
    spans = [seg for c in ax.collections for seg in c.get_segments()
             if len(seg) == 2 and seg[0][1] == seg[1][1] == point.get_ydata()[0]]
    assert any(s[0][0] == pytest.approx(100 * row[0]) and s[1][0] == pytest.approx(100 * row[1]) for s in spans)


def test_plane_without_control_split_or_ci_columns(db, tmp_path):
    c = _altered(db, tmp_path, "DELETE FROM instance_scores WHERE split = 'control'",
                 "ALTER TABLE metrics DROP COLUMN ci_low")
    fig = leakage_performance_figure(c)
    assert not by_gid(fig, "floor")
    assert len(by_gid(fig, "point")) == len(RUN_SCORES)  # still drawn, without error bars
    assert all("no control split" in ax.get_title() for ax in fig.axes)
    assert_readable(fig)
    c.close()


# ---------------------------------------------------------------------------
# distributions, calibration, training


@pytest.mark.parametrize("draw,k", [(olr_distribution_figure, 0), (coverage_distribution_figure, 2)])
def test_distributions_hold_every_eval_instance_value(con, draw, k):
    values = by_gid(draw(con), "values")
    assert set(values) == {f"{t}:{m}:{mo}" for t, m, mo in RUN_SCORES}
    for (t, m, mo), per in RUN_SCORES.items():
        got = sorted(values[f"{t}:{m}:{mo}"].get_offsets()[:, 0])  # x: the value, y: the jittered method row
        assert got == pytest.approx(sorted(100 * s[k] for i, s in enumerate(per) if split_of(i) == "eval"))


def test_calibration_bars_are_the_rates(con):
    fig = calibration_figure(con)
    bars = by_gid(fig, "bar")
    rows = scenario()["calibration"]
    assert set(bars) == {f"{r.task}:{r.metric}:{r.kind}:{r.layers}" for r in rows.itertuples()}
    for r in rows.itertuples():
        assert bars[f"{r.task}:{r.metric}:{r.kind}:{r.layers}"].get_height() == pytest.approx(100 * r.rate)
    levels = {round(float(line.get_ydata()[0]), 6) for ax in fig.axes for line in ax.get_lines() if np.ptp(line.get_ydata()) == 0}
    assert {round(100 * RECALL_MIN, 6), round(100 * FP_MAX, 6)} <= levels  # the acceptance bars


def test_training_curves_come_from_the_log_table(con):
    fig = training_plot_figure(con)
    log = scenario()["training_log"]
    assert list(by_gid(fig, "mode")["m1:stock"].get_ydata()) == pytest.approx(log["perf_mode_fraction"].tolist())
    assert list(by_gid(fig, "val_olr")["m1:stock"].get_ydata()) == pytest.approx(log["val_olr"].tolist())


@pytest.mark.parametrize("name", FIGURE_NAMES)
def test_every_figure_is_readable(con, name):
    fig = FIGURES[name](con)
    assert not no_data_reasons(fig)
    assert fig.get_suptitle()
    for ax in fig.axes:
        assert ax.get_xlabel() and ax.get_ylabel() and ax.get_title()
    assert_readable(fig)


def test_layout_scales_with_more_tasks_and_methods(tmp_path):
    frames = scenario()
    extra = []
    for task in ("alpha", "beta", "gamma"):
        for method in ("temporal_hint", "rag", "rag_unrestricted", "self_correction", "timespec", "tempo"):
            for i in range(6):
                extra.append({"task": task, "method": method, "model": "m1", "split": split_of(i), "instance_id": f"{task}-{i}",
                              "parse_status": "ok", "parsed": True, "n_claims": 4, "n_leaked": i % 3, "olr": (i % 3) / 4,
                              "perf": 0.5 + 0.05 * i, "n_evidence": 4, "n_cited": 4 - i % 2, "cov": 1 - (i % 2) / 4})
    frames["instance_scores"] = pd.concat([frames["instance_scores"], pd.DataFrame(extra)], ignore_index=True)
    with duckdb.connect(str(write_results_db(tmp_path, frames)), read_only=True) as c:
        for draw in (leakage_performance_figure, olr_distribution_figure):
            fig = draw(c)
            assert len(fig.axes) == 5
            assert_readable(fig)


# ---------------------------------------------------------------------------
# no data


def test_dropped_tables_give_a_no_data_figure(tmp_path):
    with duckdb.connect(str(write_results_db(tmp_path, drop=("training_log", "calibration"))), read_only=True) as c:
        for draw, table in ((training_plot_figure, "training_log"), (calibration_figure, "calibration")):
            fig = draw(c)
            (reason,) = no_data_reasons(fig)
            assert f"table {table} has no rows" in reason
            assert_readable(fig)


def test_an_empty_database_gives_no_data_for_every_figure(tmp_path):
    duckdb.connect(str(tmp_path / "empty.duckdb")).close()
    with duckdb.connect(str(tmp_path / "empty.duckdb"), read_only=True) as c:
        for name, draw in FIGURES.items():
            fig = draw(c)
            (reason,) = no_data_reasons(fig)
            assert "is missing" in reason and "snakemake" in reason, name
            assert_readable(fig)


def test_a_missing_column_names_the_column(db, tmp_path):
    c = _altered(db, tmp_path, "ALTER TABLE instance_scores DROP COLUMN cov")
    (reason,) = no_data_reasons(coverage_distribution_figure(c))
    assert "no column cov" in reason and "older results.duckdb" in reason
    assert not no_data_reasons(olr_distribution_figure(c))
    c.close()


def test_a_task_without_eval_runs_keeps_its_panel(db, tmp_path):
    c = _altered(db, tmp_path, "DELETE FROM metrics WHERE task = 'legal' AND split = 'eval'")
    fig = leakage_performance_figure(c)
    assert [ax.get_title().split("\n")[0] for ax in fig.axes] == ["legal", "stock"]
    assert len(no_data_reasons(fig)) == 1 and "legal" in by_gid(fig, "floor")
    c.close()


def test_save_figure_writes_png_and_pdf_atomically(con, tmp_path):
    fig = calibration_figure(con)
    out = tmp_path / "figures"
    save_figure(fig, [out / "c.png", out / "c.pdf"], dpi=TEST_DPI)
    assert (out / "c.png").read_bytes()[:4] == b"\x89PNG" and (out / "c.pdf").read_bytes()[:4] == b"%PDF"
    assert sorted(p.name for p in out.iterdir()) == ["c.pdf", "c.png"]  # no temporary file left


def test_perf_clean_arrows_and_probe_bars_show_the_stored_numbers(con):
    from results_fixture import CLEAN_PERF, PROBE_PERF

    fig = FIGURES["leakage_performance"](con)
    arrows = by_gid(fig, "clean")
    assert set(arrows) == {"stock:temporal_hint:m1"}  # only the run with clean_scores
    (_, y0), (_, y1) = arrows["stock:temporal_hint:m1"]._posA_posB
    assert y0 == pytest.approx(eval_mean("stock", "temporal_hint", "m1", 1)) and y1 == pytest.approx(np.mean(CLEAN_PERF[:4]))
    bars = by_gid(FIGURES["probes"](con), "probe")
    assert bars["stock:temporal_hint:m1:perf_clean"].get_height() == pytest.approx(np.mean(CLEAN_PERF[:4]))
    neut = [p for p in PROBE_PERF["neutered"][:4] if p is not None]
    assert bars["stock:temporal_hint:m1:neutered Perf"].get_height() == pytest.approx(np.mean(neut))
