"""Progress of long rules (anachron.progress): readable periodic lines and final totals in the rule's
log, a live bar only on a terminal, the LLM calls made / cached / failed / retried counted right, and
progress that never fails a job."""

from __future__ import annotations

import io
import json
import logging
import re
import sys

import pandas as pd
import pytest

from anachron import progress as P
from anachron.llm.cache import LLMCache
from anachron.llm.client import CallLog, LLMClient
from anachron.llm.types import ChatRequest, ModelSpec
from anachron.logs import log_to
from anachron.methods import runner
from anachron.verify.pipeline import verify_run, verify_table

from endpoint_fixtures import forecast_instances


class FakeTTY(io.StringIO):
    """A terminal: a text stream whose isatty() is True."""

    def isatty(self) -> bool:
        return True


class FakeClock:
    """A clock that the test moves (seconds)."""

    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


@pytest.fixture
def clock(monkeypatch):
    c = FakeClock()
    monkeypatch.setattr(P, "_clock", c)
    return c


def no_terminal(monkeypatch) -> None:
    """Neither stderr is a terminal (as under pytest's capture, made explicit). Called in the test's
    body: pytest's capture sets ``sys.stderr`` again after the fixtures are set up."""
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    monkeypatch.setattr(sys, "__stderr__", io.StringIO())


def progress_lines(text: str) -> list[str]:
    return [line.split("anachron.progress: ", 1)[1] for line in text.splitlines() if "anachron.progress: " in line]


def spec(**mock) -> ModelSpec:
    return ModelSpec(name="dry", model="mock/dry", knowledge_cutoff="2024-06-30", concurrency=2, max_retries=2,
                     retry_base_delay_s=0.0, retry_max_delay_s=0.0, mock=mock or None)


def requests(n: int, start: int = 0) -> list[ChatRequest]:
    return [ChatRequest(messages=[{"role": "user", "content": f"question {i}"}]) for i in range(start, start + n)]


# --------------------------------------------------------------------------- log lines


def test_a_slow_loop_logs_a_line_at_each_tenth_and_the_final_totals(monkeypatch, tmp_path, clock):
    no_terminal(monkeypatch)
    log = tmp_path / "rule.log"
    with log_to(log), P.job("stock/rag/m", calls=False) as job:
        for _ in P.track(range(100), "rag/stock search", calls=False):
            clock.t += 1.0  # one instance a second: 10 s per tenth, above LINE_MIN_GAP_S
        job.n = 100
    text = log.read_text()
    assert "\r" not in text
    lines = progress_lines(text)
    took = ["10.0s", "20.0s", "30.0s", "40.0s", "50.0s", "1m00s", "1m10s", "1m20s", "1m30s"]
    assert lines[:9] == [f"stock/rag/m search: {k}/100 inst ({k}%), {t}, 1.00 inst/s" for k, t in zip(range(10, 100, 10), took)]
    assert lines[9] == "stock/rag/m search: done 100/100 inst in 1m40s (1.00 inst/s)"
    assert lines[10] == "stock/rag/m: total 100 inst in 1m40s (1.00 inst/s)"
    assert len(lines) == 11


def test_lines_are_throttled_by_time(monkeypatch, tmp_path, clock):
    no_terminal(monkeypatch)
    log = tmp_path / "rule.log"
    with log_to(log):
        for _ in P.track(range(1000), "fast", calls=False):
            clock.t += 0.001  # a whole second for all: no line before the final one
        bar = P.Progress(None, "fetch", unit="req", calls=False)  # no total: a heartbeat line a minute
        for _ in range(5):
            clock.t += 30.0
            bar.update()
        bar.close()
    assert progress_lines(log.read_text()) == [
        "fast: done 1000/1000 inst in 1.0s (1000.00 inst/s)",
        "fetch: 2 req, 1m00s, 30.0s/req",
        "fetch: 4 req, 2m00s, 30.0s/req",
        "fetch: done 5 req in 2m30s (30.0s/req)",
    ]


def test_client_batches_count_calls_made_and_cached_from_a_warm_cache(monkeypatch, tmp_path):
    no_terminal(monkeypatch)
    log = tmp_path / "rule.log"
    cache = LLMCache(tmp_path / "cache")
    with log_to(log), P.job("forecast/temporal_hint/dry") as job:
        client = LLMClient(spec(), cache, CallLog())
        client.complete_many(requests(4), desc="temporal_hint/forecast generate", unit="inst")
        client.complete_many(requests(10), desc="temporal_hint/forecast generate retry", unit="inst")
        job.n = 10
    lines = progress_lines(log.read_text())
    rate = r"\((?:\d+\.\d\d \w+/s|\d+\.\ds/\w+)"
    assert re.fullmatch(rf"forecast/temporal_hint/dry generate: done 4/4 inst in \S+ {rate}\); "
                        rf"calls made 4, cached 0, failed 0, retries 0 {rate} made\)", lines[0])
    assert re.fullmatch(rf"forecast/temporal_hint/dry generate retry: done 10/10 inst in \S+ {rate}\); "
                        rf"calls made 6, cached 4, failed 0, retries 0 {rate} made\)", lines[1])
    assert re.fullmatch(rf"forecast/temporal_hint/dry: total 10 inst in \S+ {rate}\); "
                        rf"calls made 10, cached 4, failed 0, retries 0 {rate} made\)", lines[2])


def test_retries_and_failed_calls_are_counted(monkeypatch, tmp_path):
    no_terminal(monkeypatch)
    log = tmp_path / "rule.log"
    with log_to(log), P.job("j"):
        flaky = LLMClient(spec(fail_first=1), None, CallLog())  # each call fails once, then succeeds
        flaky.complete_many(requests(3), desc="flaky")
        broken = LLMClient(spec(fail_first=1, failure_kind="bad_request"), None, CallLog())  # not retried
        broken.complete_many(requests(2), desc="broken")
    lines = progress_lines(log.read_text())
    assert "j flaky: done 3/3 call in" in lines[0] and "calls made 3, cached 0, failed 0, retries 3" in lines[0]
    assert "j broken: done 2/2 call in" in lines[1] and "calls made 2, cached 0, failed 2, retries 0" in lines[1]
    assert "j: total 0 inst in" in lines[2] and "calls made 5, cached 0, failed 2, retries 3" in lines[2]


def test_a_run_method_job_states_its_totals(monkeypatch, tmp_path):
    no_terminal(monkeypatch)
    mock = {"model": "mock/scripted", "knowledge_cutoff": "2022-01-01", "params": {"temperature": 0}}

    def job_log(n: int, name: str) -> list[str]:
        log = tmp_path / name
        with log_to(log), P.job("forecast/temporal_hint/m") as job:
            out, _, _, meta = runner.run_method(
                forecast_instances(n), task_name="forecast", method_name="temporal_hint", model_name="m",
                model_config=mock, method_config={}, cache_dir=tmp_path / "cache", splits=["eval"], sample=None, seed=0,
            )
            job.n = len(out)
        assert "\r" not in log.read_text()
        return progress_lines(log.read_text())

    job_log(4, "first.log")
    second = job_log(10, "second.log")  # 4 instances answered from the cache
    assert second[0].startswith("forecast/temporal_hint/m generate: done 10/10 inst in ")
    assert second[-1].startswith("forecast/temporal_hint/m: total 10 inst in ")
    assert "calls made 6, cached 4, failed 0, retries 0" in second[-1]


def test_verification_loops_count_instances_and_claims_when_asked(monkeypatch, tmp_path):
    no_terminal(monkeypatch)
    claims = pd.DataFrame([
        {"task": "stock", "instance_id": "i1", "fact": f"Kestrel hired auditor {k}.", "declared_date_raw": "2022-01-10",
         "cutoff_date": "2022-03-15"} for k in range(3)
    ])
    run = pd.DataFrame([{
        "instance_id": f"i{k}", "task": "stock", "split": "eval", "cutoff_date": "2022-03-15", "parse_status": "ok",
        "evidence": json.dumps([{"id": 1, "fact": "Kestrel closed its Ohio plant in March 2022.", "source_date": None}]),
        "reasoning": "", "method": "m", "model": "x",
    } for k in range(2)])
    contexts = {f"i{k}": {"cutoff_date": "2022-03-15"} for k in range(2)}
    log = tmp_path / "rule.log"
    with log_to(log), P.job("verify stock/m/x"):
        verify_table(claims, contexts, {}, ("grounded", "rules"), progress=True)
        verify_run(run, contexts, progress=True)
        verify_run(run, contexts)  # the default (training's scoring): silent
    lines = progress_lines(log.read_text())
    assert lines[0].startswith("verify stock/m/x grounded+rules: done 3/3 claim in ")  # "verify" said once
    assert lines[1].startswith("verify stock/m/x claims: done 2/2 inst in ")
    assert lines[2].startswith("verify stock/m/x: total 0 inst in ") and len(lines) == 3


def test_a_failing_job_says_where_it_stopped(monkeypatch, tmp_path):
    no_terminal(monkeypatch)
    log = tmp_path / "rule.log"
    with pytest.raises(RuntimeError, match="boom"):
        with log_to(log), P.job("stock/rag/m", calls=False) as job:
            job.n = 3
            raise RuntimeError("boom")
    text = log.read_text()
    assert "stock/rag/m: stopped, total 3 inst in" in text
    assert text.index("stopped, total") < text.index("rule failed")


# --------------------------------------------------------------------------- the terminal


def test_the_bar_is_drawn_on_a_terminal_stderr_and_no_line_is_logged(monkeypatch, caplog):
    tty = FakeTTY()
    monkeypatch.setattr(sys, "stderr", tty)
    with caplog.at_level(logging.INFO, logger="anachron.progress"):
        for _ in P.track(range(5), "stock/x/m search", calls=False):
            pass
    drawn = tty.getvalue()
    assert "\rstock/x/m search: 100%|" in drawn and "5/5" in drawn and drawn.endswith("\n")
    assert not caplog.records  # the terminal shows the bar: no log line besides it


def test_without_a_terminal_no_bar_is_drawn(monkeypatch, caplog):
    no_terminal(monkeypatch)
    with caplog.at_level(logging.INFO, logger="anachron.progress"):
        for _ in P.track(range(5), "loop", calls=False):
            pass
    assert sys.stderr.getvalue() == "" and sys.__stderr__.getvalue() == ""
    assert [r.getMessage().split(" in ")[0] for r in caplog.records] == ["loop: done 5/5 inst"]


def test_under_log_to_the_bar_goes_to_the_terminal_and_lines_to_the_log(tmp_path, monkeypatch):
    tty = FakeTTY()
    monkeypatch.setattr(sys, "stderr", io.StringIO())  # Snakemake's job: stderr is not the terminal...
    monkeypatch.setattr(sys, "__stderr__", tty)  # ...but the process was started from one
    log = tmp_path / "rule.log"
    with log_to(log), P.job("stock/temporal_hint/dry") as job:
        LLMClient(spec(), None, CallLog()).complete_many(requests(3), desc="temporal_hint/stock generate", unit="inst")
        job.n = 3
    drawn = tty.getvalue()
    assert "\rstock/temporal_hint/dry generate: 100%|" in drawn
    assert "\x1b[K" in drawn  # each redraw clears the rest of the line (another job's longer bar)
    bars = [line for line in re.split(r"[\r\n]", drawn) if "|" in line]
    assert bars and max(len(line) for line in bars) <= P.MAX_COLS + len("\x1b[K")
    assert "stock/temporal_hint/dry: total 3 inst in" in drawn.splitlines()[-1]
    text = log.read_text()
    assert "\r" not in text and "|" not in text  # the log holds lines, no bar
    assert "stock/temporal_hint/dry generate: done 3/3 inst" in text and "stock/temporal_hint/dry: total 3 inst" in text


def test_a_closed_terminal_never_fails_the_job(tmp_path, monkeypatch):
    tty = FakeTTY()
    monkeypatch.setattr(sys, "__stderr__", tty)
    log = tmp_path / "rule.log"
    with log_to(log), P.job("j", calls=False):
        bar = P.Progress(10, "work", calls=False)
        bar.update(3)
        tty.close()  # the terminal went away
        bar.update(7)
        bar.close()
    assert "j work: done 10/10 inst" in log.read_text()


# --------------------------------------------------------------------------- labels and counts


@pytest.mark.parametrize(
    ("job", "desc", "label"),
    [
        ("stock/temporal_hint/smollm2", "temporal_hint/stock generate retry", "stock/temporal_hint/smollm2 generate retry"),
        ("stock/temporal_hint/smollm2", "temporal_hint/stock", "stock/temporal_hint/smollm2"),
        ("verify stock/rag/m", "extract claims", "verify stock/rag/m extract claims"),
        ("shapley legal/rag/m", "shapley", "shapley legal/rag/m"),
        (None, "rag/stock queries", "rag/stock queries"),
    ],
)
def test_bars_inside_a_job_carry_its_label_once(monkeypatch, job, desc, label):
    no_terminal(monkeypatch)
    if job is None:
        assert P.Progress(1, desc, enabled=False).label == label
        return
    with P.job(job):
        assert P.Progress(1, desc, enabled=False).label == label


def test_an_empty_batch_shows_nothing(monkeypatch, caplog):
    tty = FakeTTY()
    monkeypatch.setattr(sys, "stderr", tty)
    with caplog.at_level(logging.INFO, logger="anachron.progress"):
        LLMClient(spec(), None, CallLog()).complete_many([], desc="nothing")
    assert tty.getvalue() == "" and not caplog.records


def test_rates_read_per_second_or_seconds_per_unit():
    assert P._rate(30, 10.0, "inst") == "3.00 inst/s"
    assert P._rate(2, 33.0, "call") == "16.5s/call"
    assert P._rate(0, 5.0, "inst") == P._rate(3, 0.0, "inst") == "- inst/s"


def test_the_terminal_postfix_names_failures_and_retries_only_when_there_are_some(monkeypatch):
    bar = P.Progress(2, "x", enabled=False)
    monkeypatch.setattr(bar, "calls", lambda: P.CallCounts(3, 1, 0, 0))
    assert bar._postfix() == "made 3 cached 1"
    monkeypatch.setattr(bar, "calls", lambda: P.CallCounts(3, 1, 2, 5))
    assert bar._postfix() == "made 3 cached 1 failed 2 retries 5"


def test_call_counts_difference():
    a, b = P.CallCounts(5, 7, 1, 2), P.CallCounts(2, 3, 0, 1)
    assert a - b == P.CallCounts(made=3, cached=4, failed=1, retries=1)
    assert (a - b).text() == "made 3, cached 4, failed 1, retries 1"


def test_bar_width_follows_columns_and_falls_back_to_80(monkeypatch):
    monkeypatch.setenv("COLUMNS", "300")
    assert P._columns(FakeTTY()) == P.MAX_COLS
    monkeypatch.setenv("COLUMNS", "60")
    assert P._columns(FakeTTY()) == 59
    monkeypatch.delenv("COLUMNS")
    assert P._columns(FakeTTY()) == 79  # no size to read (a pseudo-terminal of 0 columns reads the same)
