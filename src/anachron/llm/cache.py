"""Content-addressed cache of LLM completions.

A call's key is the SHA-256 of the canonical JSON of exactly: provider, model id,
messages, decoding parameters, response schema (plus the order of its properties,
which shapes generation), sample index and, for a model run with a LoRA adapter, the adapter's
content digest (absent otherwise, so keys of plain models never changed). Anything else
(retry and timeout settings, concurrency, the endpoint URL, the API key, the
request's ``tag``) is left out, so re-running with other operational settings
hits the same entries, and dict key order never changes a key.

Entries are one JSON file per key at ``<root>/<key[:2]>/<key>.json``, written
atomically (temp file + rename), so concurrent processes may share a cache.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from pathlib import Path
from typing import Any

from anachron.io import write_json
from anachron.llm.structured import has_unit_interval

log = logging.getLogger(__name__)

#: Parameters that change what the model generates: part of the cache key and sent to the model.
FLOAT_PARAMS = frozenset(
    {"temperature", "top_p", "min_p", "typical_p", "repeat_penalty", "presence_penalty", "frequency_penalty"}
)
INT_PARAMS = frozenset({"max_tokens", "seed", "top_k"})
DECODING_PARAMS = FLOAT_PARAMS | INT_PARAMS | frozenset({"stop"})

#: Operational settings that may appear next to decoding parameters but never change the output.
OPERATIONAL_PARAMS = frozenset(
    {
        "max_retries",
        "retries",
        "timeout",
        "timeout_s",
        "request_timeout",
        "concurrency",
        "retry_base_delay_s",
        "retry_max_delay_s",
        "n_threads",
        "n_ctx",
    }
)

_KEY_RE = re.compile(r"^[0-9a-f]{64}$")

#: Record fields that would carry secrets or endpoint details; ``LLMCache.put`` refuses them.
_FORBIDDEN_FIELDS = frozenset({"api_key", "authorization", "base_url", "headers", "token"})


def decoding_params(params: dict[str, Any] | None) -> dict[str, Any]:
    """Return the decoding parameters of ``params`` in canonical form.

    Keeps the keys in :data:`DECODING_PARAMS` (``None`` values dropped), coerces
    floats/ints (so ``temperature=0`` and ``0.0`` are the same) and turns a string
    ``stop`` into a one-element list. Keys in :data:`OPERATIONAL_PARAMS` are dropped.

    Raises:
        ValueError: for any other key, so that an unknown parameter is neither silently
            sent to the model nor silently left out of the cache key.
    """
    out: dict[str, Any] = {}
    for k, v in (params or {}).items():
        if k in OPERATIONAL_PARAMS:
            continue
        if k not in DECODING_PARAMS:
            raise ValueError(
                f"unknown decoding parameter {k!r}; known: {', '.join(sorted(DECODING_PARAMS))}"
            )
        if v is None:
            continue
        if k in FLOAT_PARAMS:
            out[k] = float(v)
        elif k in INT_PARAMS:
            if isinstance(v, bool) or int(v) != v:
                raise ValueError(f"decoding parameter {k!r} must be an integer, got {v!r}")
            out[k] = int(v)
        else:  # stop
            stops = [v] if isinstance(v, str) else list(v)
            if stops:
                out[k] = [str(s) for s in stops]
    return out


def canonical_json(obj: Any) -> str:
    """Serialize ``obj`` as canonical JSON: sorted keys, no whitespace, UTF-8 characters kept."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def schema_property_order(schema: Any, path: str = "$") -> list[list[Any]]:
    """Where a schema's ``properties`` appear and in what order: ``[[json_path, [names...]], ...]``.

    Canonical JSON sorts keys, but property order is meaningful for generation (local
    grammars and most structured-output engines emit properties in schema order, e.g.
    ``reasoning`` before ``prediction``), so the cache key records it separately.
    """
    out: list[list[Any]] = []
    if isinstance(schema, dict):
        props = schema.get("properties")
        if isinstance(props, dict):
            out.append([path, list(props)])
        for k, v in schema.items():
            out.extend(schema_property_order(v, f"{path}.{k}"))
    elif isinstance(schema, list):
        for i, v in enumerate(schema):
            out.extend(schema_property_order(v, f"{path}[{i}]"))
    return out


#: The ``mock:`` options that decide a mock model's answer (the others only delay or fail calls).
MOCK_ANSWER_OPTIONS = ("answers", "echo")


def answer_settings(provider: str, mock: dict[str, Any] | None) -> dict[str, Any] | None:
    """The settings of a model entry, besides its decoding parameters, that change the answer it
    gives: for a ``mock/...`` model its scripted ``answers`` and ``echo`` when set; None otherwise."""
    if provider != "mock" or not mock:
        return None
    out = {k: mock[k] for k in MOCK_ANSWER_OPTIONS if mock.get(k) not in (None, False)}
    # scripted answers built in code (a result object) enter the key by their repr
    return json.loads(json.dumps(out, default=repr)) if out else None


def cache_key(
    provider: str,
    model: str,
    messages: list[dict[str, Any]],
    params: dict[str, Any] | None,
    response_schema: dict[str, Any] | None,
    sample_index: int = 0,
    adapter: str | None = None,
    variant: dict[str, Any] | None = None,
) -> str:
    """Content address of one chat completion: 64 lowercase hex characters (SHA-256).

    Args:
        provider: ``"local"``, ``"openai"`` or ``"mock"``.
        model: the model id without the provider prefix.
        messages: chat messages; key order inside each message does not matter.
        params: decoding parameters; filtered and normalized by :func:`decoding_params`,
            so operational settings (retries, timeout, concurrency) never change the key.
        response_schema: JSON Schema dict or ``None``; key order does not matter, except the
            order of names inside ``properties`` (see :func:`schema_property_order`).
        sample_index: index of the independent sample (0, 1, ...).
        adapter: content digest of the LoRA adapter applied to the model (``"sha256:<hex>"``), or
            ``None`` for the plain model; only a non-``None`` value enters the payload, so keys
            without an adapter are the same as before adapters existed.
        variant: the model's other settings that change its answers (a mock model's scripted
            ``answers`` and ``echo``: :func:`answer_settings`), or ``None``; like ``adapter``, only
            a non-empty value enters the payload.

    Raises:
        ValueError: on an unknown parameter (see :func:`decoding_params`) or a non-JSON value.
    """
    payload = {
        "v": 1,
        "provider": provider,
        "model": model,
        "messages": messages,
        "params": decoding_params(params),
        "response_schema": response_schema,
        "schema_property_order": schema_property_order(response_schema),
        "sample_index": int(sample_index),
    }
    if provider == "local" and has_unit_interval(response_schema):
        # the grammar enforces [0, 1] since this entered the key: answers decoded without it are not reused
        payload["grammar"] = "unit-interval"
    if adapter is not None:
        payload["adapter"] = adapter
    if variant:
        payload["variant"] = variant
    return hashlib.sha256(canonical_json(payload).encode("utf-8")).hexdigest()


class LLMCache:
    """Directory of cached completions, one JSON file per cache key.

    Layout: ``<root_dir>/<key[:2]>/<key>.json``. Safe to share between processes:
    every write is atomic (temp file in the same directory, then ``os.replace``), so a
    reader sees either no entry or a complete one; two writers of one key both write a
    complete record of the same request and the last rename wins.
    """

    def __init__(self, root_dir: str | Path) -> None:
        """Use (and create lazily) the cache directory ``root_dir``."""
        self.root = Path(root_dir)

    def path_for(self, key: str) -> Path:
        """File path of ``key``. Raises ``ValueError`` if ``key`` is not a 64-hex SHA-256."""
        if not _KEY_RE.match(key):
            raise ValueError(f"not a cache key: {key!r}")
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        """The record stored under ``key``, or ``None`` when absent.

        An unreadable or corrupt entry is logged and treated as absent (it will be rewritten).
        """
        path = self.path_for(key)
        try:
            with open(path, encoding="utf-8") as fh:
                record = json.load(fh)
        except FileNotFoundError:
            return None
        except (OSError, json.JSONDecodeError) as exc:
            log.warning("ignoring unreadable cache entry %s: %s", path, exc)
            return None
        if not isinstance(record, dict):
            log.warning("ignoring malformed cache entry %s", path)
            return None
        return record

    def put(self, key: str, record: dict[str, Any]) -> None:
        """Store ``record`` (a JSON-serializable dict) under ``key``, atomically.

        Raises:
            ValueError: if ``key`` is malformed or ``record`` has a field that could hold a
                secret or endpoint detail (``api_key``, ``authorization``, ``base_url``,
                ``headers``, ``token``).
        """
        bad = _FORBIDDEN_FIELDS.intersection(record)
        if bad:
            raise ValueError(f"refusing to cache fields that may hold secrets: {sorted(bad)}")
        write_json(self.path_for(key), record)

    def __contains__(self, key: str) -> bool:
        return self.path_for(key).exists()

    def __len__(self) -> int:
        """Number of entries (walks the directory)."""
        if not self.root.exists():
            return 0
        return sum(1 for _ in self.root.glob("??/*.json"))
