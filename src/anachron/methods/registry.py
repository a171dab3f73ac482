"""Look up a method implementation by its config name."""

from __future__ import annotations

from typing import Callable

from anachron.errors import ConfigError

#: Method names the workflow knows, mapped to "module:function".
METHODS = {
    "temporal_hint": "anachron.methods.temporal_hint:run_temporal_hint",
    "rag": "anachron.methods.rag:run_rag_enforced",
    "rag_unrestricted": "anachron.methods.rag:run_rag_unrestricted",
    "self_correction": "anachron.methods.supervised:run_self_correction",
    "timespec": "anachron.methods.supervised:run_timespec",
    "tempo": "anachron.methods.tempo:run_tempo",
}
#: Methods that search the date-stamped corpus (they get ``search`` and ``entity_validity``).
RETRIEVAL_METHODS = frozenset({"rag", "rag_unrestricted", "timespec"})
#: Methods with a supervisor (its model may be configured apart: methods.<m>.supervisor_model).
SUPERVISED_METHODS = frozenset({"self_correction", "timespec"})


def get_method(name: str) -> Callable:
    """Return the runner for method ``name``; raise :class:`ConfigError` if unknown."""
    if name not in METHODS:
        raise ConfigError(f"unknown method {name!r} (config key run.methods); known: {sorted(METHODS)}")
    import importlib

    module, fn = METHODS[name].split(":")
    return getattr(importlib.import_module(module), fn)
