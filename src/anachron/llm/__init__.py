"""LLM access: model specs, a content-addressed cache, providers and the cached client.

Typical use::

    spec = ModelSpec.from_config("smollm2", cfg["models"]["smollm2"])
    check_provider_ready(spec)                      # ConfigError before any work
    log = CallLog()
    client = LLMClient(spec, LLMCache("results/cache/llm"), log)
    results = client.complete_many([ChatRequest(messages=[...], response_schema=schema)])
    log.to_frame()                                  # one row per call

``openai`` and ``llama_cpp`` are imported only when a provider needs them. A ``mock/...`` model
(:class:`MockProvider`) needs neither and answers in milliseconds.
"""

from anachron.llm.cache import DECODING_PARAMS, LLMCache, cache_key, decoding_params
from anachron.llm.client import CALL_LOG_COLUMNS, CallLog, LLMClient
from anachron.llm.providers import (
    PROVIDERS,
    LocalLlamaProvider,
    MockProvider,
    OpenAICompatProvider,
    Provider,
    check_provider_ready,
    default_gguf_path,
    make_provider,
    schema_to_gbnf,
)
from anachron.llm.types import ChatRequest, ChatResult, ModelSpec, SchemaError

__all__ = [
    "CALL_LOG_COLUMNS",
    "DECODING_PARAMS",
    "CallLog",
    "ChatRequest",
    "ChatResult",
    "LLMCache",
    "LLMClient",
    "LocalLlamaProvider",
    "MockProvider",
    "ModelSpec",
    "OpenAICompatProvider",
    "PROVIDERS",
    "Provider",
    "SchemaError",
    "cache_key",
    "check_provider_ready",
    "decoding_params",
    "default_gguf_path",
    "make_provider",
    "schema_to_gbnf",
]
