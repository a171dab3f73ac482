"""The methods the workflow knows, each registered once by the module that implements it.

A method is one module of this package (or of a plugin, docs/adding-a-method.md) that registers
itself with :func:`register_method`: its runner, its call pattern (:mod:`anachron.methods.pattern`,
what ``anachron estimate`` counts), whether it searches the dated corpus and whether it has a
supervisor. Everything else reads those facts here: the workflow's inputs and resources, the
config schema's list of methods, the runner and the estimate. The registry finds the methods by
importing every module of this package on first use (:func:`discover`), then the plugins named in
``ANACHRON_PLUGINS`` (:mod:`anachron.plugins`).
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Mapping

from anachron.errors import ConfigError
from anachron.plugins import load_env_plugins

if TYPE_CHECKING:  # pragma: no cover
    from anachron.methods.pattern import CallPattern

#: Modules of this package that hold no method (the shared machinery).
_INFRASTRUCTURE = frozenset({"base", "pattern", "registry", "runner"})


@dataclass(frozen=True)
class MethodSpec:
    """One registered method.

    Attributes:
        name: the config name (``run.methods``, the ``{method}`` wildcard).
        runner: ``(instances, task, client, *, params, **settings) -> list[MethodResult]``; a
            retrieving method also gets ``search`` and ``entity_validity``, a supervised one
            ``supervisor_client``.
        call_pattern: ``settings -> CallPattern``: the calls per instance for the estimate.
        retrieves: searches the date-stamped corpus (the workflow builds the corpus for it).
        supervised: has a supervisor (``methods.<name>.supervisor_model`` may name its model).
        config_schema: JSON Schema of ``methods.<name>`` when the package schema has no block for
            it; None: ``tasks`` and ``sample`` only (docs/adding-a-method.md).
    """

    name: str
    runner: Callable[..., Any]
    call_pattern: Callable[[Mapping[str, Any]], "CallPattern"]
    retrieves: bool = False
    supervised: bool = False
    config_schema: Mapping[str, Any] | None = None


#: name -> :class:`MethodSpec`, in registration order (filled by :func:`discover`).
METHODS: dict[str, MethodSpec] = {}
_DISCOVERED = False


def register_method(
    name: str,
    *,
    runner: Callable[..., Any],
    call_pattern: Callable[[Mapping[str, Any]], "CallPattern"],
    retrieves: bool = False,
    supervised: bool = False,
    config_schema: Mapping[str, Any] | None = None,
) -> MethodSpec:
    """Register (or replace) method ``name``; called once at the bottom of the method's module.

    Returns:
        The :class:`MethodSpec` stored in :data:`METHODS`.
    """
    spec = MethodSpec(name, runner, call_pattern, retrieves, supervised, config_schema)
    METHODS[name] = spec
    return spec


def discover() -> dict[str, MethodSpec]:
    """Import every method module of this package (once) and the plugins; return :data:`METHODS`."""
    global _DISCOVERED
    if not _DISCOVERED:
        _DISCOVERED = True
        import anachron.methods as package

        for info in pkgutil.iter_modules(package.__path__):
            if info.name not in _INFRASTRUCTURE and not info.name.startswith("_"):
                importlib.import_module(f"{package.__name__}.{info.name}")
    load_env_plugins()
    return METHODS


def method_names() -> list[str]:
    """The registered method names, in registration order."""
    return list(discover())


def get_spec(name: str) -> MethodSpec:
    """The :class:`MethodSpec` of ``name``.

    Raises:
        ConfigError: an unknown method (naming the config key and the known ones).
    """
    methods = discover()
    if name not in methods:
        raise ConfigError(f"unknown method {name!r} (config key run.methods); known: {sorted(methods)}")
    return methods[name]


def get_method(name: str) -> Callable[..., Any]:
    """The runner of method ``name``; raise :class:`ConfigError` if unknown."""
    return get_spec(name).runner


def get_call_pattern(name: str, settings: dict) -> "CallPattern":
    """The call pattern of method ``name`` for its config block ``settings``
    (:mod:`anachron.methods.pattern`); raise :class:`ConfigError` if unknown."""
    return get_spec(name).call_pattern(settings)


def retrieval_methods() -> frozenset[str]:
    """Methods that search the date-stamped corpus (they get ``search`` and ``entity_validity``)."""
    return frozenset(n for n, s in discover().items() if s.retrieves)


def supervised_methods() -> frozenset[str]:
    """Methods with a supervisor (its model may be configured apart: ``methods.<m>.supervisor_model``)."""
    return frozenset(n for n, s in discover().items() if s.supervised)
