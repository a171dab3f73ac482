"""Providers: the raw, uncached chat-completion backends, one module each, behind a registry.

* ``local/...`` — :class:`~anachron.llm.providers.llama_cpp.LocalLlamaProvider` runs a GGUF
  model in-process with llama-cpp-python and enforces a response JSON schema with a grammar.
* ``openai/...`` — :class:`~anachron.llm.providers.openai.OpenAICompatProvider` talks to any
  OpenAI-compatible ``/v1/chat/completions`` endpoint (vLLM, Ollama, llama.cpp server, hosted
  APIs) with its own retry loop and structured-output fallback.
* ``mock/...`` — :class:`~anachron.llm.providers.mock.MockProvider` answers from a script, by
  echo or with a minimal schema-valid JSON value, with configurable latency and failures.

:data:`PROVIDERS` maps the provider prefix of a ``provider/model-id`` string to its class;
:func:`make_provider` and :func:`check_provider_ready` dispatch through it. Shared pieces
(the :class:`Provider` protocol, :class:`BaseProvider`, parameters and seeds) live in
:mod:`anachron.llm.providers.base`.
"""

from __future__ import annotations

from anachron.errors import ConfigError
from anachron.llm.providers.base import BaseProvider, Provider, effective_params, error_text, sample_seed
from anachron.llm.providers.llama_cpp import LocalLlamaProvider, default_gguf_path, schema_to_gbnf
from anachron.llm.providers.mock import MockProvider
from anachron.llm.providers.openai import OpenAICompatProvider
from anachron.llm.types import ModelSpec

#: Provider prefix (the part of ``ModelSpec.model`` before the first "/") -> provider class;
#: its keys are :data:`anachron.llm.types.KNOWN_PROVIDERS` (which ``ModelSpec`` accepts).
PROVIDERS: dict[str, type[BaseProvider]] = {
    cls.prefix: cls for cls in (LocalLlamaProvider, OpenAICompatProvider, MockProvider)
}


def provider_class(spec: ModelSpec) -> type[BaseProvider]:
    """The registered class of ``spec``'s provider prefix.

    Raises:
        ConfigError: for a prefix not in :data:`PROVIDERS`, naming ``models.<name>.model``.
    """
    try:
        return PROVIDERS[spec.provider]
    except KeyError:
        raise ConfigError(
            f"model '{spec.name}': unknown provider {spec.provider!r} (config key models.{spec.name}.model); "
            f"known: {', '.join(PROVIDERS)}"
        ) from None


def make_provider(spec: ModelSpec) -> Provider:
    """The provider for ``spec``'s provider prefix (``local``, ``openai`` or ``mock``).

    Raises ``ConfigError`` for an unknown provider or what the provider's constructor checks
    (openai: a missing environment variable; mock: invalid options).
    """
    return provider_class(spec)(spec)


def check_provider_ready(spec: ModelSpec) -> None:
    """Fail early, with one clear message, if ``spec`` cannot run here.

    Dispatches to the provider's own check (``check_ready``): openai: both environment
    variables named by ``base_url_env`` and ``api_key_env`` are set and non-empty and the base
    URL starts with ``http://`` or ``https://``; local: llama-cpp-python is installed and the
    GGUF file exists; mock: always ready (valid options). Never includes a variable's value.

    Raises:
        ConfigError: listing every problem found, naming env vars and config keys.
    """
    provider_class(spec).check_ready(spec)


__all__ = [
    "PROVIDERS",
    "BaseProvider",
    "LocalLlamaProvider",
    "MockProvider",
    "OpenAICompatProvider",
    "Provider",
    "check_provider_ready",
    "default_gguf_path",
    "effective_params",
    "error_text",
    "make_provider",
    "provider_class",
    "sample_seed",
    "schema_to_gbnf",
]
