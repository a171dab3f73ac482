"""Token prices (config key prices) and llm_calls.cost_usd, written when the database is built."""

from __future__ import annotations

import copy

import duckdb
import pytest

from anachron.config import validate_config
from anachron.cost import call_cost, model_prices
from anachron.errors import ConfigError
from results_fixture import write_results_db

BASE = {
    "run": {"tasks": ["stock"], "methods": ["temporal_hint"], "models": ["m1"]},
    "models": {
        "m1": {"model": "openai/m1", "knowledge_cutoff": "2023-01-01"},
        "m2": {"model": "openai/m2", "knowledge_cutoff": "2023-01-01"},
        "small": {"model": "local/smollm2-135m-instruct", "knowledge_cutoff": "2024-06-30"},
        "fake": {"model": "mock/fake", "knowledge_cutoff": "2024-06-30"},
    },
    "prices": {"m1": {"usd_per_million_input_tokens": 3.0, "usd_per_million_output_tokens": 15.0}},
}


def config(**over) -> dict:
    cfg = copy.deepcopy(BASE)
    cfg.update(over)
    return validate_config(cfg)


def test_model_prices_state_given_prices_free_local_and_mock_models_and_leave_the_rest_unknown():
    prices = model_prices(config())
    assert prices == {"m1": (3.0, 15.0), "small": (0.0, 0.0), "fake": (0.0, 0.0)}
    assert "m2" not in prices  # an API model without a price: unknown, never 0
    paid = config(prices={"small": {"usd_per_million_input_tokens": 0.5, "usd_per_million_output_tokens": 1.0}})
    assert model_prices(paid)["small"] == (0.5, 1.0)  # a price given for a local model wins


@pytest.mark.parametrize("prices, key", [
    ({"nope": {"usd_per_million_input_tokens": 1, "usd_per_million_output_tokens": 1}}, "prices.nope"),
    ({"m1": {"usd_per_million_input_tokens": -1, "usd_per_million_output_tokens": 1}},
     "prices.m1.usd_per_million_input_tokens"),
    ({"m1": {"usd_per_million_input_tokens": 1}}, "prices.m1"),
    ({"m1": {"usd_per_million_input_tokens": 1, "usd_per_million_output_tokens": 1, "cached": 0.1}}, "prices.m1"),
])
def test_price_errors_name_the_key(prices, key):
    with pytest.raises(ConfigError, match=rf"config key {key}\b"):
        config(prices=prices)


def test_call_cost_arithmetic_and_unknowns():
    assert call_cost(1000, 200, (3.0, 15.0)) == pytest.approx(0.003 + 0.003)
    assert call_cost(1000, 200, (0.0, 0.0)) == 0.0
    assert call_cost(1000, 200, None) is None
    assert call_cost(None, 200, (3.0, 15.0)) is None
    assert call_cost(float("nan"), 200, (3.0, 15.0)) is None


def test_cost_usd_in_the_results_database(tmp_path):
    # the fixture: 1,000 prompt and 200 completion tokens per call; m1's control calls are cache hits
    db = write_results_db(tmp_path, prices={"m1": (3.0, 15.0), "local": (0.0, 0.0)})
    con = duckdb.connect(str(db), read_only=True)
    per_call = con.execute("SELECT DISTINCT cost_usd FROM llm_calls WHERE model_name = 'm1'").fetchall()
    assert per_call == [(pytest.approx(1000 * 3.0 / 1e6 + 200 * 15.0 / 1e6),)]  # $0.006 a call
    assert con.execute("SELECT count(*) FROM llm_calls WHERE model_name = 'm2' AND cost_usd IS NOT NULL").fetchone()[0] == 0
    spent, all_calls, hits = con.execute(
        "SELECT sum(cost_usd) FILTER (WHERE NOT cache_hit), sum(cost_usd), count(*) FILTER (WHERE cache_hit) "
        "FROM llm_calls WHERE task = 'stock' AND method = 'timespec' AND model_key = 'm1'").fetchone()
    # timespec on stock: 6 instances x 2 calls, the 2 control instances' 4 calls are cache hits
    assert hits == 4
    assert spent == pytest.approx(8 * 0.006) and all_calls == pytest.approx(12 * 0.006)


def test_cost_usd_is_zero_for_a_free_model_and_null_without_prices(tmp_path):
    free = write_results_db(tmp_path / "free", prices=model_prices(config(
        models={"m1": {"model": "local/smollm2-135m-instruct", "knowledge_cutoff": "2024-06-30"},
                "m2": {"model": "openai/m2", "knowledge_cutoff": "2023-01-01"}}, prices={})))
    con = duckdb.connect(str(free), read_only=True)
    by_model = dict(con.execute("SELECT model_name, list(DISTINCT cost_usd) FROM llm_calls GROUP BY 1").fetchall())
    assert by_model == {"m1": [0.0], "m2": [None]}
    bare = write_results_db(tmp_path / "bare")
    con = duckdb.connect(str(bare), read_only=True)
    assert con.execute("SELECT count(*) FROM llm_calls WHERE cost_usd IS NOT NULL").fetchone()[0] == 0
