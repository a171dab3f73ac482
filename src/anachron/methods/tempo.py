"""TEMPO at inference: the Temporal Hint prompt on the base model plus the trained LoRA adapter.

Training (rule ``train_tempo``, :mod:`anachron.training`) is where TEMPO differs from Temporal Hint;
at evaluation the method is one greedy call per instance with the same prompt and output schema,
scored by the same pipeline as every other method (TEMPO paper §4 and App. E.4). Only the model
changes: :func:`tempo_model_config` points the model's config at the adapter.
"""

from __future__ import annotations

from typing import Any

from anachron.errors import ConfigError
from anachron.methods.temporal_hint import call_pattern as temporal_hint_pattern
from anachron.methods.registry import register_method
from anachron.methods.temporal_hint import run_temporal_hint

#: The runner: Temporal Hint's (the adapter is part of the model, not of the method).
run_tempo = run_temporal_hint
#: Calls per instance at evaluation: Temporal Hint's (training calls no endpoint: rule train_tempo).
call_pattern = temporal_hint_pattern


def tempo_model_config(model_name: str, model_config: dict[str, Any], adapter: str, task: str,
                       served_names: dict[str, str] | None = None) -> dict[str, Any]:
    """The model config of the base model with the trained adapter of ``task``.

    ``local/`` models get ``lora_path`` = ``adapter`` (the adapter in GGUF; llama.cpp applies it
    and the LLM cache key includes its digest); ``openai/`` models are called by the name the
    endpoint serves the adapter under (``methods.tempo.served_names.<model>``, ``{task}`` filled in).

    Raises:
        ConfigError: an openai/ model without a served name, or a mock model.
    """
    provider = str(model_config["model"]).split("/", 1)[0]
    if provider == "local":
        return {**model_config, "lora_path": str(adapter)}
    if provider == "openai":
        name = (served_names or {}).get(model_name)
        if not name:
            raise ConfigError(f"method tempo on model '{model_name}' needs methods.tempo.served_names.{model_name}")
        return {**model_config, "model": "openai/" + name.replace("{task}", task)}
    raise ConfigError(f"method tempo cannot run on model '{model_name}' ({model_config['model']}): no trainable weights")


register_method("tempo", runner=run_tempo, call_pattern=call_pattern)
