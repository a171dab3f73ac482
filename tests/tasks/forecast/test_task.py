"""build_forecast_instances and ForecastTask on invented ForecastBench fixtures."""

from __future__ import annotations

import json
import math

import jsonschema
import pandas as pd
import pytest

from anachron.sources.base import SNAPSHOT_ENV, SourceError
from anachron.sources.forecastbench import ForecastBenchReader
from anachron.tasks.base import INSTANCE_COLUMNS, brier_perf
from anachron.tasks.checks import check_instances
from anachron.tasks.forecast import CONFIG_SCHEMA, ForecastTask, build_forecast_instances
from anachron.tasks.forecast.dataset import assign_split, plain_text, truncate

from conftest import TESTS

FIXTURES = TESTS / "fixtures"
CUTOFFS = {"early-model": "2023-12-31", "late-model": "2024-06-30"}


@pytest.fixture(autouse=True)
def _no_env_snapshot(monkeypatch):
    monkeypatch.delenv(SNAPSHOT_ENV, raising=False)


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    return ForecastBenchReader(snapshot_dir=FIXTURES).read()


@pytest.fixture(scope="module")
def built(table):
    return build_forecast_instances({"forecastbench": table}, {}, knowledge_cutoffs=CUTOFFS)


def _by_qid(instances: pd.DataFrame) -> dict[tuple[str, str], pd.Series]:
    out = {}
    for _, r in instances.iterrows():
        prov, lab = json.loads(r["provenance"]), json.loads(r["label"])
        out[(prov["question_id"], lab["resolution_date"])] = r
    return out


def test_splits_and_exclusions_by_reason(built):
    instances, exclusions = built
    assert list(instances.columns) == INSTANCE_COLUMNS
    assert (instances["task"] == "forecast").all()
    rows = _by_qid(instances)
    eval_keys = {k for k, r in rows.items() if r["split"] == "eval"}
    control_keys = {k for k, r in rows.items() if r["split"] == "control"}
    assert eval_keys == {
        ("QzFakeMarket01", "2023-09-15"),
        ("0xfeedbeef", "2023-12-31"),  # resolved on the earliest cutoff: still eval
        ("FAKESERIES1", "2023-05-14"),
        ("FAKESERIES1", "2023-06-06"),
        ("ZZZQ", "2023-05-14"),
    }
    assert control_keys == {("CtrlMarket9", "2025-08-20"), ("FAKESERIES2", "2025-02-16"), ("FAKESERIES2", "2025-03-11")}
    reasons = {(r["question_id"], r["resolution_date"]): r["reason"] for _, r in exclusions.iterrows()}
    assert reasons == {
        ("90001", "2024-06-01"): "unresolved",
        ("ZZZQ", "2023-06-06"): "non_binary_resolution",
        ("FAKESERIES1", "2024-05-06"): "between_knowledge_cutoffs",
    }
    detail = exclusions.loc[exclusions["reason"] == "between_knowledge_cutoffs", "detail"].iloc[0]
    assert "between model knowledge cutoffs" in detail and "2023-12-31" in detail and "2024-06-30" in detail
    assert {"reason", "detail"} <= set(exclusions.columns)


def test_labels_and_freeze_date_as_cutoff(built):
    instances, _ = built
    rows = _by_qid(instances)
    assert json.loads(rows[("QzFakeMarket01", "2023-09-15")]["label"]) == {
        "resolved_to": 1,
        "resolution_date": "2023-09-15",
        "revised_value": False,
        "label_vintage": "as_published_by_forecastbench",
    }
    assert json.loads(rows[("FAKESERIES1", "2023-06-06")]["label"])["resolved_to"] == 0
    assert rows[("FAKESERIES1", "2023-06-06")]["cutoff_date"] == "2023-04-28"
    assert rows[("FAKESERIES2", "2025-02-16")]["cutoff_date"] == "2025-01-31"
    assert instances["cutoff_date"].str.fullmatch(r"\d{4}-\d{2}-\d{2}").all()
    # the workflow's own integrity checks accept the table (control after every knowledge cutoff)
    assert check_instances("forecast", instances, CUTOFFS) == []


def test_split_rule_boundaries():
    lo, hi = "2023-12-31", "2024-06-30"
    assert assign_split("2023-04-28", "2023-12-31", lo, hi) == "eval"
    assert assign_split("2023-04-28", "2024-01-01", lo, hi) is None
    assert assign_split("2024-06-30", "2024-08-01", lo, hi) is None  # frozen on the latest cutoff: not control
    assert assign_split("2024-07-01", "2024-08-01", lo, hi) == "control"


def test_default_model_cutoff_puts_later_rounds_in_control(table):
    instances, exclusions = build_forecast_instances({"forecastbench": table}, None, knowledge_cutoffs={"smollm2": "2024-06-30"})
    counts = instances["split"].value_counts().to_dict()
    assert counts == {"eval": 6, "control": 3}  # one model: nothing is "between"
    assert "between_knowledge_cutoffs" not in set(exclusions["reason"])


def test_inputs_fill_placeholders_and_hide_market_resolution_date(built):
    instances, _ = built
    rows = _by_qid(instances)
    fred = json.loads(rows[("FAKESERIES1", "2023-06-06")]["inputs"])
    assert fred["question"] == "Will the Invented Index have increased by 2023-06-06 as compared to its value on 2023-05-07?"
    assert fred["resolution_date"] == "2023-06-06" and fred["question_type"] == "dataset"
    market = json.loads(rows[("QzFakeMarket01", "2023-09-15")]["inputs"])
    assert market["resolution_date"] is None  # a market's settlement day would hint at the outcome
    assert len(market["background"]) <= 1200 and market["background"].endswith("[...]")
    poly = json.loads(rows[("0xfeedbeef", "2023-12-31")]["inputs"])
    assert poly["background"] == "The festival draws large crowds."  # HTML to text
    msgs = ForecastTask().messages(rows[("QzFakeMarket01", "2023-09-15")])
    assert [m["role"] for m in msgs] == ["system", "user"]
    assert "2023-09-15" not in msgs[0]["content"] + msgs[1]["content"]
    assert "Today's date: 2023-04-28" in msgs[1]["content"] and "forecaster" in msgs[0]["content"]
    assert "Value on 2023-04-28: 0.62" in msgs[1]["content"]
    user = ForecastTask().messages(rows[("FAKESERIES1", "2023-06-06")])[1]["content"]
    assert "Resolution date: 2023-06-06" in user and "{resolution_date}" not in user


def test_config_options(table):
    tables = {"forecastbench": table}
    inst, excl = build_forecast_instances(tables, {"horizons": "earliest"}, knowledge_cutoffs=CUTOFFS)
    fred = [json.loads(l)["resolution_date"] for l, p in zip(inst["label"], inst["provenance"]) if json.loads(p)["question_id"] == "FAKESERIES1"]
    assert fred == ["2023-05-14"]
    dropped = excl.loc[excl["reason"] == "horizon_not_selected", ["question_id", "resolution_date"]].values.tolist()
    # the horizon filter runs before the split: FAKESERIES1's 2024-05-06 is dropped here, not as "between"
    assert sorted(dropped) == [["FAKESERIES1", "2023-06-06"], ["FAKESERIES1", "2024-05-06"], ["FAKESERIES2", "2025-03-11"]]
    inst, excl = build_forecast_instances(tables, {"horizons": "latest"}, knowledge_cutoffs=CUTOFFS)
    kept = {json.loads(p)["question_id"]: json.loads(l)["resolution_date"] for l, p in zip(inst["label"], inst["provenance"])}
    assert "FAKESERIES1" not in kept  # its latest horizon falls between the cutoffs
    assert kept["FAKESERIES2"] == "2025-03-11"
    inst, excl = build_forecast_instances(tables, {"sources": ["fred"], "show_freeze_value": False}, knowledge_cutoffs=CUTOFFS)
    assert {json.loads(i)["source"] for i in inst["inputs"]} == {"fred"}
    assert (excl["reason"] == "source_not_selected").sum() == 6  # 3 markets of 2023, yfinance x2, 1 market of 2025
    assert "Value on" not in ForecastTask().messages(inst.iloc[0])[1]["content"]
    with pytest.raises(ValueError, match="unknown key"):
        build_forecast_instances(tables, {"horizon": "all"}, knowledge_cutoffs=CUTOFFS)


def test_resolved_by_freeze_and_duplicates_excluded(table):
    extra = table[table["question_id"] == "FAKESERIES2"].copy()
    extra["resolution_date"] = "2025-01-31"  # on the freeze date: the outcome was known at the cutoff
    dup = table[table["question_id"] == "CtrlMarket9"]
    inst, excl = build_forecast_instances({"forecastbench": pd.concat([table, extra.iloc[:1], dup])}, {}, knowledge_cutoffs=CUTOFFS)
    assert excl["reason"].value_counts()["resolved_by_freeze_date"] == 1
    assert excl["reason"].value_counts()["duplicate"] == 1
    assert len(inst) == 8


def test_deterministic_and_order_independent(table, built):
    shuffled = table.sample(frac=1.0, random_state=3).reset_index(drop=True)
    again, _ = build_forecast_instances({"forecastbench": shuffled}, {}, knowledge_cutoffs=CUTOFFS)
    pd.testing.assert_frame_equal(again, built[0])
    assert built[0]["instance_id"].is_unique
    assert built[0]["instance_id"].str.match(r"^forecast-\d{4}-\d{2}-\d{2}-[a-z]+-[0-9a-f]{12}-\d{4}-\d{2}-\d{2}$").all()


def test_bad_inputs_raise(table):
    with pytest.raises(SourceError, match="forecastbench table: missing required column.*freeze_date"):
        build_forecast_instances({"forecastbench": table.drop(columns=["freeze_date"])}, {}, knowledge_cutoffs=CUTOFFS)
    with pytest.raises(ValueError, match="knowledge_cutoffs is empty"):
        build_forecast_instances({"forecastbench": table}, {}, knowledge_cutoffs={})
    with pytest.raises(ValueError, match="model 'x'"):
        build_forecast_instances({"forecastbench": table}, {}, knowledge_cutoffs={"x": "mid-2024"})
    with pytest.raises(KeyError, match="forecastbench"):
        build_forecast_instances({}, {}, knowledge_cutoffs=CUTOFFS)


def test_prediction_schema_validation_and_perf(built):
    task = ForecastTask()
    row = _by_qid(built[0])[("QzFakeMarket01", "2023-09-15")]  # y = 1
    assert task.prediction_schema(row) == {"type": "number", "minimum": 0, "maximum": 1}
    assert task.validate_prediction(row, 0.8) == 0.8
    assert task.validate_prediction(row, 1) == 1.0
    assert task.validate_prediction(row, " 0.25 ") == 0.25
    for bad in (1.2, -0.01, float("nan"), True, None, "likely", [0.5]):
        with pytest.raises(ValueError):
            task.validate_prediction(row, bad)
    assert task.perf(row, 0.8) == pytest.approx(1 - 0.2**2)
    assert task.perf(row, 0.0) == 0.0
    no_row = _by_qid(built[0])[("FAKESERIES1", "2023-06-06")]  # y = 0
    assert task.perf(no_row, 0.0) == 1.0 and task.perf(no_row, 0.5) == pytest.approx(0.75)
    assert brier_perf(0.3, 1) == pytest.approx(0.51)
    with pytest.raises(ValueError):
        brier_perf(0.3, 0.5)


def test_grounding_context_and_entities(built):
    task = ForecastTask()
    rows = _by_qid(built[0])
    ctx = task.grounding_context(rows[("ZZZQ", "2023-05-14")])
    assert ctx["cutoff_date"] == "2023-04-28" and ctx["resolution_date"] == "2023-05-14" and ctx["resolved_to"] == 0
    assert ctx["question"].startswith("Will ZZZQ's close price on 2023-05-14")
    assert ctx["tickers"] == ["ZZZQ"] and ctx["sources"] == ["yfinance"]
    assert task.entities(rows[("FAKESERIES1", "2023-05-14")])["series"] == ["FAKESERIES1"]


def test_config_schema_defaults_validate():
    jsonschema.Draft202012Validator.check_schema(CONFIG_SCHEMA)
    defaults = {k: v["default"] for k, v in CONFIG_SCHEMA["properties"].items()}
    jsonschema.validate(defaults, CONFIG_SCHEMA)
    assert all("description" in v and "default" in v for v in CONFIG_SCHEMA["properties"].values())
    assert CONFIG_SCHEMA["additionalProperties"] is False
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"horizons": "middle"}, CONFIG_SCHEMA)


def test_text_helpers():
    assert truncate("short", 1200) == "short"
    cut = truncate("word " * 400, 100)
    assert len(cut) <= 100 and cut.endswith(" [...]")
    assert plain_text("a < b\r\n\r\n\r\n\r\nc") == "a < b\n\nc"
    assert math.isclose(len(truncate("x" * 5000, 1200)), 1200)


def test_label_carries_the_vintage_flags(table, built):
    rows = _by_qid(built[0])
    fred = json.loads(rows[("FAKESERIES1", "2023-06-06")]["label"])
    assert (fred["revised_value"], fred["label_vintage"]) == (True, "as_revised")  # snapshot: as revised
    stock = json.loads(rows[("ZZZQ", "2023-05-14")]["label"])
    assert (stock["revised_value"], stock["label_vintage"]) == (False, "as_published_by_forecastbench")
    # a row re-resolved on first releases (as a live read with a FRED key writes it)
    relabelled = table.copy()
    sel = (relabelled["question_id"] == "FAKESERIES1") & (relabelled["resolution_date"] == "2023-06-06")
    relabelled.loc[sel, ["resolved_to", "label_vintage", "revised_value"]] = [1.0, "first_release:due=2023-05-05,resolution=2023-06-02", False]
    inst, _ = build_forecast_instances({"forecastbench": relabelled}, {}, knowledge_cutoffs=CUTOFFS)
    label = json.loads(_by_qid(inst)[("FAKESERIES1", "2023-06-06")]["label"])
    assert label == {
        "resolved_to": 1,
        "resolution_date": "2023-06-06",
        "revised_value": False,
        "label_vintage": "first_release:due=2023-05-05,resolution=2023-06-02",
    }
    # ids, cutoffs and splits do not depend on the vintage
    pd.testing.assert_frame_equal(inst[["instance_id", "split", "cutoff_date"]], built[0][["instance_id", "split", "cutoff_date"]])


def test_table_without_vintage_columns_still_builds(table, built):
    old = table.drop(columns=["label_vintage", "revised_value"])
    inst, excl = build_forecast_instances({"forecastbench": old}, {}, knowledge_cutoffs=CUTOFFS)
    pd.testing.assert_frame_equal(inst[["instance_id", "split", "cutoff_date", "inputs"]], built[0][["instance_id", "split", "cutoff_date", "inputs"]])
    labels = {json.loads(p)["source"]: json.loads(l) for l, p in zip(inst["label"], inst["provenance"])}
    assert (labels["fred"]["revised_value"], labels["fred"]["label_vintage"]) == (True, None)
    assert (labels["yfinance"]["revised_value"], labels["manifold"]["label_vintage"]) == (False, None)
    dbn = old[old["question_id"] == "FAKESERIES1"].assign(source="dbnomics")
    inst, _ = build_forecast_instances({"forecastbench": dbn}, {}, knowledge_cutoffs=CUTOFFS)
    assert all(json.loads(l)["revised_value"] is True for l in inst["label"])
