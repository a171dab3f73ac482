"""The declared results schema and its loader: columns and types from the declaration, DuckDB reading
the Parquet files by name and in order, undeclared columns refused."""

from __future__ import annotations

import ast
import json

import pandas as pd
import pytest

from anachron.metrics.derived import derive_with
from anachron.llm.client import CallLog
from anachron.llm.types import ChatRequest, ChatResult, ModelSpec
from anachron.store import SCHEMA, TABLES, connect_readonly
from anachron.store.load import write_database
from anachron.tables import CALL_LOG_COLUMNS, LLM_CALLS, TOOL_CALL_COLUMNS
from conftest import REPO

EMPTY = dict(instances=[], run_meta=[], completions=[], llm_calls=[], claims=[], instance_scores=[])


def _parquet(tmp_path, name: str, df: pd.DataFrame):
    path = tmp_path / f"{name}.parquet"
    df.to_parquet(path, index=False)
    return path


def _describe(con, table: str) -> list[tuple[str, str]]:
    return [(r[0], r[1]) for r in con.execute(f"DESCRIBE {table}").fetchall()]


def test_every_table_has_its_declared_columns_and_types_even_when_empty(tmp_path):
    out = tmp_path / "results.duckdb"
    counts = write_database(out, **EMPTY)
    assert list(counts) == list(TABLES) and not any(counts.values())
    con = connect_readonly(out)
    for name, table in SCHEMA.items():
        assert _describe(con, name) == list(table.columns), name
    assert con.execute("SELECT count(*) FROM main_table").fetchone()[0] == 0
    con.close()


def test_parquet_files_are_read_by_name_in_order_and_cast_to_the_declared_types(tmp_path):
    first = pd.DataFrame({"task": ["stock", "stock"], "call_id": ["a", "b"], "prompt_tokens": [10, None],
                          "cache_hit": [False, True], "instance_id": ["i1", "i2"], "step": ["generate"] * 2})
    assert first["prompt_tokens"].dtype == "float64"  # what pandas makes of a failed call's missing count
    empty = pd.DataFrame(columns=["task", "method", "model_key", *CALL_LOG_COLUMNS])  # an empty call log
    later = pd.DataFrame({"call_id": ["c"], "step": ["plausibility"], "cutoff_date": ["2019-11-30"], "n_items": [80],
                          "prompt_tokens": [7]})
    files = [_parquet(tmp_path, name, df) for name, df in (("first", first), ("empty", empty), ("later", later))]
    out = tmp_path / "results.duckdb"
    counts = write_database(out, **{**EMPTY, "llm_calls": files})
    assert counts["llm_calls"] == 3
    con = connect_readonly(out)
    assert _describe(con, "llm_calls") == list(LLM_CALLS.columns)
    rows = con.execute("SELECT call_id, prompt_tokens, cache_hit, step, cutoff_date, n_items FROM llm_calls").fetchall()
    assert rows == [("a", 10, False, "generate", None, None), ("b", None, True, "generate", None, None),
                    ("c", 7, None, "plausibility", "2019-11-30", 80)]
    con.close()


def test_an_undeclared_column_is_refused_and_the_old_database_stays(tmp_path):
    out = tmp_path / "results.duckdb"
    write_database(out, **EMPTY)
    before = out.read_bytes()
    bad = _parquet(tmp_path, "calls", pd.DataFrame({"task": ["stock"], "query": ["q"], "surprise": [1]}))
    with pytest.raises(ValueError, match=r"'tool_calls'.*\['surprise'\].*tables.py does not declare"):
        write_database(out, **EMPTY, tool_calls=[bad])
    assert out.read_bytes() == before


def test_computed_tables_follow_the_declaration(tmp_path):
    """runs (from the metadata JSON), trace_scores and metrics go through the declared columns too."""
    calls = pd.DataFrame([{c: None for c in TOOL_CALL_COLUMNS} | {
        "task": "stock", "method": "rag", "model": "m", "instance_id": "i0", "seq": 0, "query": "q", "mode": "enforced",
        "cutoff_date": "2019-11-30", "returned": '["d1"]', "consumed": '["d1"]', "after_cutoff": '["d1"]',
        "invalid_entities": "[]", "restatements": "[]", "query_intent_after_cutoff": False}])
    run = pd.DataFrame([{"instance_id": "i0", "task": "stock", "method": "rag", "model": "m", "split": "eval",
                         "cutoff_date": "2019-11-30", "parse_status": "ok"}])
    meta = tmp_path / "meta.json"
    meta.write_text(json.dumps({"task": "stock", "method": "rag", "model": "m", "knowledge_cutoff": None, "n_instances": 1}))
    out = tmp_path / "results.duckdb"
    write_database(out, **{**EMPTY, "run_meta": [meta], "completions": [_parquet(tmp_path, "run", run)],
                           "tool_calls": [_parquet(tmp_path, "tool_calls", calls)]}, derive=derive_with())
    con = connect_readonly(out)
    for name in ("runs", "trace_scores", "metrics"):
        assert _describe(con, name) == list(SCHEMA[name].columns), name
    assert con.execute("SELECT knowledge_cutoff, n_instances, n_llm_calls FROM runs").fetchall() == [(None, 1, None)]
    assert con.execute("SELECT n_calls, tclr FROM trace_scores").fetchall() == [(1, 1.0)]
    assert con.execute("SELECT value, n FROM metrics WHERE metric = 'tclr'").fetchall() == [(1.0, 1)]
    con.close()


def _tag_keys() -> set[str]:
    """Keys of every ``tag={...}`` literal of an LLM request in the package."""
    keys: set[str] = set()
    for path in (REPO / "src" / "anachron").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.keyword) and node.arg == "tag" and isinstance(node.value, ast.Dict):
                keys |= {k.value for k in node.value.keys if isinstance(k, ast.Constant)}
    return keys


def test_every_request_tag_is_a_declared_llm_calls_column():
    keys = _tag_keys()
    assert {"instance_id", "step", "cutoff_date", "n_items"} <= keys
    assert keys <= set(LLM_CALLS.names) - set(CALL_LOG_COLUMNS)


def test_a_call_log_loads_with_its_tags(tmp_path):
    spec = ModelSpec(name="m", model="openai/fake", knowledge_cutoff="2023-01-01")
    log = CallLog()
    ok = ChatResult(text="{}", cache_key="k", prompt_tokens=3, completion_tokens=1, latency_s=0.5)
    log.record(spec, ChatRequest(messages=[{"role": "user", "content": "x"}], tag={"instance_id": "i0", "step": "generate"}),
               ok, "2026-01-01T00:00:00.000+00:00")
    failed = ChatResult(text="", cache_key="k2", error="timeout")
    log.record(spec, ChatRequest(messages=[{"role": "user", "content": "y"}], tag={"step": "plausibility", "n_items": 2}),
               failed, "2026-01-01T00:00:01.000+00:00")
    path = _parquet(tmp_path, "calls", log.frame(task="stock", method="temporal_hint", model_key="m"))
    out = tmp_path / "results.duckdb"
    write_database(out, **{**EMPTY, "llm_calls": [path]})
    con = connect_readonly(out)
    got = con.execute("SELECT model_key, cache_key, prompt_tokens, error, instance_id, step, n_items FROM llm_calls").fetchall()
    assert got == [("m", "k", 3, None, "i0", "generate", None), ("m", "k2", 0, "timeout", None, "plausibility", 2)]
    con.close()


def _trace_fixture(tmp_path):
    """Two searching runs (an erroring call, a NULL ``entity_docs``, an instance without calls, a
    control split) and one run that never searched, each with long text columns."""
    calls, runs = [], []
    for method in ("rag", "rag_unrestricted", "temporal_hint"):
        for i in range(4):
            runs.append({"instance_id": f"i{i}", "task": "stock", "method": method, "model": "m",
                         "split": "control" if i == 3 else "eval", "cutoff_date": "2019-11-30", "parse_status": "ok",
                         "completion": "x" * 500, "trace": "t" * 500})
            if method == "temporal_hint" or i == 2:
                continue
            for seq in range(i + 1):
                calls.append({c: None for c in TOOL_CALL_COLUMNS} | {
                    "task": "stock", "method": method, "model": "m", "instance_id": f"i{i}", "seq": seq,
                    "query": "q" * 200, "mode": "enforced", "cutoff_date": "2019-11-30",
                    "returned": '["d1", "d2"]' if seq else "[]", "consumed": '["d1"]',
                    "after_cutoff": '["d2"]' if (i + seq) % 2 else "[]", "invalid_entities": '["E"]' if seq == 1 else "[]",
                    "restatements": '["d1"]' if i == 1 else "[]", "query_intent_after_cutoff": seq == 0,
                    "error": "timeout" if (method, i, seq) == ("rag", 1, 1) else None,
                    "entity_docs": None if method == "rag_unrestricted" else ('["d1"]' if seq == 1 else "[]"),
                    "flag_reason": "r" * 200})
    return pd.DataFrame(calls), pd.DataFrame(runs)


def test_trace_scores_equal_those_of_the_whole_tables(tmp_path):
    """The loader hands the trace metrics only the columns they read (TRACE_INPUT_COLUMNS /
    TRACE_RUN_COLUMNS) and picks the searching runs in SQL; the table equals what the whole
    tool_calls and completions frames give."""
    from anachron.metrics.traces import trace_instance_scores

    calls, run = _trace_fixture(tmp_path)
    out = tmp_path / "results.duckdb"
    write_database(out, **{**EMPTY, "completions": [_parquet(tmp_path, "run", run)],
                           "tool_calls": [_parquet(tmp_path, "tool_calls", calls)]}, derive=derive_with())
    searched = run.merge(calls[["task", "method", "model"]].drop_duplicates(), on=["task", "method", "model"])
    want = trace_instance_scores(calls, run=searched)
    con = connect_readonly(out)
    got = con.execute("SELECT * FROM trace_scores").df()
    con.close()
    assert len(want) == 8 and set(want["method"]) == {"rag", "rag_unrestricted"}
    assert want["n_errors"].sum() == 1 and want["survivorship"].notna().any()
    pd.testing.assert_frame_equal(got, want, check_dtype=False)


def test_the_store_computes_nothing_without_a_derive_hook(tmp_path):
    calls, run = _trace_fixture(tmp_path)
    out = tmp_path / "results.duckdb"
    counts = write_database(out, **{**EMPTY, "completions": [_parquet(tmp_path, "run", run)],
                                    "tool_calls": [_parquet(tmp_path, "tool_calls", calls)]})
    assert counts["tool_calls"] == len(calls) and counts["trace_scores"] == 0 and counts["metrics"] == 0
    seen = []

    def derive(read):
        seen.append(sorted(read("completions", ["method"], runs_of="tool_calls")["method"].unique()))
        return [("metrics", pd.DataFrame([{"task": "stock", "method": "rag", "model": "fake", "metric": "x", "value": 1.0}]))]

    counts = write_database(out, **{**EMPTY, "completions": [_parquet(tmp_path, "run", run)],
                                    "tool_calls": [_parquet(tmp_path, "tool_calls", calls)]}, derive=derive)
    assert seen == [["rag", "rag_unrestricted"]] and counts["metrics"] == 1


def test_tables_larger_than_the_memory_limit_load_whole(tmp_path):
    """DuckDB spills to disk past ``memory_limit``: ~50 MB of completions under a 32 MB limit
    load row for row, in file order, and no spill file is left next to the database."""
    n = 12_000
    run = pd.DataFrame({"instance_id": [f"i{k:05d}" for k in range(n)], "task": "stock", "method": "rag",
                        "model": "m", "split": "eval", "cutoff_date": "2019-11-30", "parse_status": "ok",
                        "completion": [f"{k:05d}" + "abcdefghij" * 400 for k in range(n)]})
    paths = [_parquet(tmp_path, f"run{j}", run.iloc[j::2]) for j in range(2)]
    out = tmp_path / "db" / "results.duckdb"
    counts = write_database(out, **{**EMPTY, "completions": paths}, memory_limit="32MB")
    assert counts["completions"] == n
    con = connect_readonly(out)
    got = con.execute("SELECT instance_id, length(completion), substr(completion, 1, 5) FROM completions").fetchall()
    con.close()
    want = [(i, 4005, i[1:]) for i in [*run["instance_id"].iloc[0::2], *run["instance_id"].iloc[1::2]]]
    assert got == want
    assert sorted(p.name for p in out.parent.iterdir()) == ["results.duckdb"]
