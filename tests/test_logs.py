"""Rule logs never carry credentials: URL user:password, secret query parameters, keys."""

from __future__ import annotations

import logging
import uuid

import pytest

from anachron.config import validate_config
from anachron.llm.client import CallLog, LLMClient
from anachron.llm.testserver import TestServer
from anachron.llm.types import ChatRequest, ModelSpec
from anachron.logs import log_to, mask_secrets


def test_mask_secrets_masks_credentials_and_keeps_the_rest():
    assert mask_secrets("GET https://bob:hunter2@api.example.org/v1/chat") == "GET https://***@api.example.org/v1/chat"
    assert mask_secrets("https://x.org/v1?key=abc123&q=1") == "https://x.org/v1?key=***&q=1"
    assert mask_secrets("Authorization: Bearer abcdefghijk123") == "Authorization: Bearer ***"
    fake_key = "sk-" + "test" + "0" * 12  # built here: no key-like literal in the repository
    assert mask_secrets(f"using {fake_key}") == "using sk-test***"
    plain = "loaded 20 instances from https://api.example.org/v1 at 2024-06-30"
    assert mask_secrets(plain) == plain


def test_rule_logs_mask_secrets_and_quieten_http_loggers(tmp_path):
    path = tmp_path / "rule.log"
    with log_to(path) as log:
        logging.getLogger("httpx").info("HTTP Request: POST https://u:MARKERPW@h.example/v1/chat/completions")
        logging.getLogger("httpx").warning("retrying https://u:MARKERPW@h.example/v1 (%s)", "502")
        log.info("endpoint %s", "https://h.example/v1?api_key=MARKERKEY")
    text = path.read_text()
    assert "MARKERPW" not in text and "MARKERKEY" not in text
    assert "HTTP Request" not in text  # INFO of the HTTP client is dropped
    assert "retrying https://***@h.example/v1 (502)" in text and "api_key=***" in text
    assert logging.getLogger("httpx").level == logging.NOTSET  # restored after the rule


def test_rule_logs_carry_no_request_url_of_the_openai_client(tmp_path, monkeypatch):
    """Whatever HTTP library the installed openai client logs through, its request lines (full URLs,
    credentials in a path included) stay out of a rule's log."""
    pytest.importorskip("openai")
    marker = "mu-" + uuid.uuid4().hex
    path = tmp_path / "rule.log"
    with TestServer() as srv, log_to(path):
        monkeypatch.setenv("LOG_TEST_URL", f"http://127.0.0.1:{srv.port}/{marker}/v1")
        monkeypatch.setenv("LOG_TEST_KEY", "unused")
        spec = ModelSpec(name="m", model="openai/x", knowledge_cutoff="2024-01-01", base_url_env="LOG_TEST_URL",
                         api_key_env="LOG_TEST_KEY")
        [result] = LLMClient(spec, None, CallLog()).complete_many(
            [ChatRequest(messages=[{"role": "user", "content": "hi"}])], progress=False)
    assert result.ok and srv.stats()["ok"] == 1
    assert marker not in path.read_text()


def test_retry_delay_keys_are_config_keys():
    cfg = validate_config({"run": {"models": ["m"]}, "models": {"m": {"model": "openai/x", "knowledge_cutoff": "2024-01-01",
                                                                      "retry_base_delay_s": 0.5, "retry_max_delay_s": 10}}})
    assert cfg["models"]["m"]["retry_base_delay_s"] == 0.5 and cfg["models"]["m"]["retry_max_delay_s"] == 10
    from anachron.config import model_spec

    spec = model_spec(cfg, "m")
    assert (spec.retry_base_delay_s, spec.retry_max_delay_s) == (0.5, 10)
