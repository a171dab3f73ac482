"""The verifier model's client for rules that call it (verify_claims, calibrate_verifier)."""

from __future__ import annotations

import os
from typing import Any

from anachron.llm.cache import LLMCache
from anachron.llm.client import CallLog, LLMClient
from anachron.llm.types import ModelSpec


def verifier_client(
    model: dict[str, Any] | None, cache_dir: str | os.PathLike[str]
) -> tuple[LLMClient | None, CallLog, dict[str, Any]]:
    """``(client, call_log, params)`` for a resolved model config (``name``, ``model``, ...).

    ``model`` None (no verifier configured) gives ``(None, empty log, {})``. The client
    shares the workflow's LLM cache, so a re-run repeats no verifier call.
    """
    log = CallLog()
    if not model:
        return None, log, {}
    spec = ModelSpec(**model)
    return LLMClient(spec, LLMCache(cache_dir), log), log, dict(spec.params)
