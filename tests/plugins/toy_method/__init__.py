"""A toy method defined only in this file's folder: Temporal Hint asked twice, the second answer kept.

Used by tests/methods/test_toy_method.py as a plugin (config key ``plugins: [toy_method]``): importing it
registers the method ``toy_twice`` (runner, call pattern, no retrieval, no supervisor), and the real
workflow then runs, verifies, scores and loads it like any method, its settings validated by its
own config block.
"""

from __future__ import annotations

from typing import Any, Mapping

import pandas as pd

from anachron.llm.client import LLMClient
from anachron.methods.base import PARSE_RETRIES, MethodResult, generate_and_parse, generation_request
from anachron.methods.pattern import CallPattern, Step
from anachron.methods.registry import register_method
from anachron.tasks.base import Task

#: The method's config block (``methods.toy_twice``).
CONFIG_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "default": {},
    "properties": {
        "tasks": {"type": ["array", "null"], "items": {"type": "string"}, "default": None},
        "sample": {"type": ["integer", "null"], "minimum": 1, "default": None},
        "max_evidence": {"type": "integer", "minimum": 1, "default": 4},
    },
}


def run_toy_twice(
    instances: pd.DataFrame, task: Task, client: LLMClient, *, params: dict[str, Any], max_evidence: int = 4
) -> list[MethodResult]:
    """Two generations per instance (sample indices 0 and 1); the second is the answer."""
    rows = [r for _, r in instances.iterrows()]
    first = [generation_request(task, r, params, max_evidence) for r in rows]
    generate_and_parse(task, rows, first, client, desc=f"toy_twice/{task.name} first")
    second = [generation_request(task, r, params, max_evidence).model_copy(update={"sample_index": 1}) for r in rows]
    return generate_and_parse(task, rows, second, client, desc=f"toy_twice/{task.name} second")


def call_pattern(settings: Mapping[str, Any]) -> CallPattern:
    """Two generation requests per instance, each asked again when it does not parse."""
    n = int(settings.get("max_evidence", 4))
    gen = Step("generate", lambda task, row, facts: generation_request(task, row, {}, n).messages, retries=PARSE_RETRIES)
    return CallPattern(steps=(gen, gen))


register_method("toy_twice", runner=run_toy_twice, call_pattern=call_pattern, config_schema=CONFIG_SCHEMA)
