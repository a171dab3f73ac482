"""benchmarks/compare_results.py: two results databases compared table by table."""

from __future__ import annotations

import importlib.util
import sys

import duckdb
import pytest

from conftest import REPO

spec = importlib.util.spec_from_file_location("compare_results", REPO / "benchmarks" / "compare_results.py")
compare_results = importlib.util.module_from_spec(spec)
sys.modules["compare_results"] = compare_results  # dataclasses look their module up
spec.loader.exec_module(compare_results)


def _db(path, claims_rows, *, latency=0.1, extra_table=False, verdict_type="VARCHAR"):
    con = duckdb.connect(str(path))
    con.execute(f"CREATE TABLE claims (instance_id VARCHAR, fact VARCHAR, leaked BOOLEAN, verdict {verdict_type})")
    con.executemany("INSERT INTO claims VALUES (?, ?, ?, ?)", claims_rows)
    con.execute("CREATE TABLE llm_calls (key VARCHAR, prompt_tokens BIGINT, latency_s DOUBLE)")
    con.execute("INSERT INTO llm_calls VALUES ('k1', 10, ?)", [latency])
    if extra_table:
        con.execute("CREATE TABLE shapley (instance_id VARCHAR)")
    con.close()
    return str(path)


ROWS = [("i1", "Oil fell 5% on 2020-03-09.", True, "1"), ("i1", "Brent traded near $60.", False, "2"),
        ("i2", "Brent traded near $60.", False, "2")]


def test_identical_results_differ_only_in_volatile_columns(tmp_path):
    a = _db(tmp_path / "a.duckdb", ROWS, latency=0.1)
    b = _db(tmp_path / "b.duckdb", list(reversed(ROWS)), latency=9.9)  # other order, other latency
    diffs = compare_results.compare_databases(a, b)
    assert [d.name for d in diffs] == ["claims", "llm_calls"] and not any(d.differs for d in diffs)
    assert compare_results.main([a, b]) == 0


def test_changed_verdicts_missing_rows_and_tables_are_reported(tmp_path, capsys):
    a = _db(tmp_path / "a.duckdb", ROWS)
    changed = [ROWS[0], (ROWS[1][0], ROWS[1][1], True, "2")]  # a verdict flipped, a duplicate row lost
    b = _db(tmp_path / "b.duckdb", changed, extra_table=True)
    diffs = {d.name: d for d in compare_results.compare_databases(a, b, show=2)}
    assert (diffs["claims"].unmatched_a, diffs["claims"].unmatched_b) == (2, 1)
    assert diffs["shapley"].rows_a is None and diffs["shapley"].differs
    assert compare_results.main([a, b]) == 1
    assert "only in b" in capsys.readouterr().out


def test_a_type_change_is_reported_but_equal_numbers_match(tmp_path):
    a = _db(tmp_path / "a.duckdb", ROWS, verdict_type="BIGINT")
    b = _db(tmp_path / "b.duckdb", ROWS, verdict_type="DOUBLE")
    (claims,) = compare_results.compare_databases(a, b, tables=["claims"])
    assert claims.type_changes == [("verdict", "BIGINT", "DOUBLE")] and not claims.differs


@pytest.mark.parametrize("volatile", [(), ("latency_s",)])
def test_volatile_columns_are_configurable(tmp_path, volatile):
    a = _db(tmp_path / "a.duckdb", ROWS, latency=0.1)
    b = _db(tmp_path / "b.duckdb", ROWS, latency=0.2)
    (calls,) = compare_results.compare_databases(a, b, tables=["llm_calls"], volatile=volatile)
    assert calls.differs == (volatile == ())


def test_digits_forgive_the_last_bits_of_a_float_but_not_a_real_change(tmp_path):
    def metrics(path, values):
        con = duckdb.connect(str(path))
        con.execute("CREATE TABLE metrics (metric VARCHAR, ci_low DOUBLE)")
        con.executemany("INSERT INTO metrics VALUES (?, ?)", values)
        con.close()
        return str(path)

    a = metrics(tmp_path / "a.duckdb", [("olr", 0.1 + 0.2), ("perf", 0.0), ("cov", None)])
    b = metrics(tmp_path / "b.duckdb", [("olr", 0.3), ("perf", 0.0), ("cov", None)])  # 0.1 + 0.2 != 0.3 in floats
    c = metrics(tmp_path / "c.duckdb", [("olr", 0.3000001), ("perf", 0.0), ("cov", None)])
    assert compare_results.compare_databases(a, b)[0].differs
    assert not compare_results.compare_databases(a, b, digits=12)[0].differs
    assert compare_results.compare_databases(a, c, digits=12)[0].unmatched_a == 1
    assert compare_results.main([a, b, "--digits", "12"]) == 0
