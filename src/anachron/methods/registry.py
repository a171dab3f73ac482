"""Look up a method implementation by its config name."""

from __future__ import annotations

from typing import Callable

from anachron.errors import ConfigError

#: Method names the workflow knows, mapped to "module:function".
METHODS = {
    "temporal_hint": "anachron.methods.temporal_hint:run_temporal_hint",
    "rag": "anachron.methods.rag:run_rag_enforced",
    "rag_unrestricted": "anachron.methods.rag:run_rag_unrestricted",
}
#: Methods that search the date-stamped corpus (they get ``search`` and ``entity_validity``).
RETRIEVAL_METHODS = frozenset({"rag", "rag_unrestricted"})


def get_method(name: str) -> Callable:
    """Return the runner for method ``name``; raise :class:`ConfigError` if unknown."""
    if name not in METHODS:
        raise ConfigError(f"unknown method {name!r} (config key run.methods); known: {sorted(METHODS)}")
    import importlib

    module, fn = METHODS[name].split(":")
    return getattr(importlib.import_module(module), fn)
