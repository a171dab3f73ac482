"""Look up a method implementation by its config name."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from anachron.errors import ConfigError

if TYPE_CHECKING:  # pragma: no cover
    from anachron.methods.pattern import CallPattern

#: Method names the workflow knows, mapped to "module:function".
METHODS = {
    "temporal_hint": "anachron.methods.temporal_hint:run_temporal_hint",
    "rag": "anachron.methods.rag:run_rag_enforced",
    "rag_unrestricted": "anachron.methods.rag:run_rag_unrestricted",
    "self_correction": "anachron.methods.supervised:run_self_correction",
    "timespec": "anachron.methods.supervised:run_timespec",
    "tempo": "anachron.methods.tempo:run_tempo",
}
#: Method names mapped to "module:function" of their call pattern (:mod:`anachron.methods.pattern`).
CALL_PATTERNS = {
    "temporal_hint": "anachron.methods.temporal_hint:call_pattern",
    "rag": "anachron.methods.rag:call_pattern",
    "rag_unrestricted": "anachron.methods.rag:call_pattern",
    "self_correction": "anachron.methods.supervised:self_correction_pattern",
    "timespec": "anachron.methods.supervised:timespec_pattern",
    "tempo": "anachron.methods.tempo:call_pattern",
}
#: Methods that search the date-stamped corpus (they get ``search`` and ``entity_validity``).
RETRIEVAL_METHODS = frozenset({"rag", "rag_unrestricted", "timespec"})
#: Methods with a supervisor (its model may be configured apart: methods.<m>.supervisor_model).
SUPERVISED_METHODS = frozenset({"self_correction", "timespec"})


def _resolve(table: dict[str, str], name: str) -> Callable:
    if name not in table:
        raise ConfigError(f"unknown method {name!r} (config key run.methods); known: {sorted(table)}")
    import importlib

    module, fn = table[name].split(":")
    return getattr(importlib.import_module(module), fn)


def get_call_pattern(name: str, settings: dict) -> "CallPattern":
    """The call pattern of method ``name`` for its config block ``settings``
    (:mod:`anachron.methods.pattern`); raise :class:`ConfigError` if unknown."""
    return _resolve(CALL_PATTERNS, name)(settings)


def get_method(name: str) -> Callable:
    """Return the runner for method ``name``; raise :class:`ConfigError` if unknown."""
    return _resolve(METHODS, name)
