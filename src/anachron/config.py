"""Configuration: schema validation with defaults, cross-checks, and model specs.

The JSON Schema is package data, ``anachron/schemas/config.schema.yaml``, so the
workflow and ``anachron schema`` read the same file from a checkout or an installed
package; it is the one place that lists every key, its type, default and meaning.
:func:`validate_config` fills in the defaults and raises
:class:`~anachron.errors.ConfigError` naming the offending key. :func:`check_ready`
runs the checks that must pass before any job starts (model endpoints and keys, local
model files).
"""

from __future__ import annotations

import copy
import importlib
import os
from pathlib import Path
from typing import Any, Mapping

import jsonschema
import yaml

from anachron.errors import ConfigError
from anachron.plugins import use_plugins
from anachron.tasks.registry import find_task

SCHEMA_PATH = Path(__file__).resolve().parent / "schemas" / "config.schema.yaml"
SNAPSHOT_ENV = "ANACHRON_SNAPSHOT_DIR"


SCHEMA_REF = "x-anachron-schema"


def _as_block(schema: Mapping[str, Any] | None) -> dict[str, Any]:
    """A module's JSON Schema as a config block: a copy without ``$schema``, default ``{}``;
    None: a block that takes no keys."""
    if schema is None:
        return {"type": "object", "additionalProperties": False, "default": {}, "properties": {}}
    block = copy.deepcopy(dict(schema))
    block.pop("$schema", None)
    block.setdefault("default", {})
    return block


def _resolve_refs(node: Any) -> Any:
    """Replace ``{x-anachron-schema: "module:ATTR"}`` nodes by that module attribute (a dict)."""
    if isinstance(node, dict):
        if SCHEMA_REF in node:
            module, attr = node[SCHEMA_REF].split(":")
            return _resolve_refs(_as_block(getattr(importlib.import_module(module), attr)))
        return {k: _resolve_refs(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_resolve_refs(v) for v in node]
    return node


REGISTRY_KEY = "x-anachron-registry"
ENUM_KEY = "x-anachron-enum"


def _method_block(schema: Mapping[str, Any] | None) -> dict[str, Any]:
    """The block of a registered method the package schema does not describe."""
    if schema is not None:
        return _as_block(schema)
    tasks = {"type": ["array", "null"], "items": {"type": "string", ENUM_KEY: "tasks"}, "default": None,
             "description": "Tasks this method runs on (null = every task in run.tasks)."}
    sample = {"type": ["integer", "null"], "minimum": 1, "default": None,
              "description": "Instances per split for this method (null = run.sample)."}
    return {"type": "object", "additionalProperties": False, "default": {}, "properties": {"tasks": tasks, "sample": sample}}


def _registry_blocks(kind: str, have: Mapping[str, Any]) -> dict[str, Any]:
    """The config blocks of every registered task / method / source (``x-anachron-registry``)."""
    if kind == "tasks":
        from anachron.tasks.registry import task_config_schema, task_names

        return {name: _resolve_refs(_as_block(task_config_schema(name))) for name in task_names()}
    if kind == "methods":
        from anachron.methods.registry import discover

        return {name: have.get(name) or _method_block(spec.config_schema) for name, spec in discover().items()}
    if kind == "sources":
        from anachron.sources.registry import registered_sources

        return {name: have.get(name) or {"type": "object", "default": {}} for name in registered_sources()}
    raise ValueError(f"unknown {REGISTRY_KEY}: {kind!r}")


def _fill_registries(node: Any, names: dict[str, list[str]]) -> Any:
    """Fill ``x-anachron-registry`` blocks and ``x-anachron-enum`` lists from the registries."""
    if isinstance(node, dict):
        node = {k: _fill_registries(v, names) for k, v in node.items()}
        if REGISTRY_KEY in node:
            kind = node.pop(REGISTRY_KEY)
            have = dict(node.get("properties", {}))
            blocks = _registry_blocks(kind, have)
            node["properties"] = {**{k: v for k, v in have.items() if k in blocks}, **blocks}
            node = _fill_registries(node, names)
        if ENUM_KEY in node:
            kind = node.pop(ENUM_KEY)
            if kind not in names:
                from anachron.methods.registry import method_names
                from anachron.tasks.registry import task_names

                names.update(tasks=task_names(), methods=method_names())
            node["enum"] = list(names[kind])
        return node
    if isinstance(node, list):
        return [_fill_registries(v, names) for v in node]
    return node


def load_schema(path: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """Load the config JSON Schema (YAML), with the per-task, per-method and per-source blocks merged in.

    Blocks written as ``{x-anachron-schema: "module:ATTR"}`` are taken from the module that
    implements the task or source, so each block has one definition, next to its code. A block
    marked ``x-anachron-registry: tasks|methods|sources`` gets one property per registered task
    (its package's ``CONFIG_SCHEMA``), method or source; a list marked ``x-anachron-enum:
    tasks|methods`` takes the registered names, so a new task folder or method module needs no
    line here (docs/adding-a-task.md).
    """
    return _fill_registries(_resolve_refs(yaml.safe_load(Path(path or SCHEMA_PATH).read_text())), {})


def _with_defaults(validator_cls: type) -> type:
    validate_props = validator_cls.VALIDATORS["properties"]

    def set_defaults(validator, properties, instance, schema):  # noqa: ANN001
        if isinstance(instance, dict):
            for prop, sub in properties.items():
                if "default" in sub and prop not in instance:
                    instance[prop] = copy.deepcopy(sub["default"])
        yield from validate_props(validator, properties, instance, schema)

    return jsonschema.validators.extend(validator_cls, {"properties": set_defaults})


def _key_path(error: jsonschema.ValidationError) -> str:
    parts = [str(p) for p in error.absolute_path]
    return ".".join(parts) if parts else "(top level)"


def validate_config(config: dict[str, Any], schema_path: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """Validate ``config`` in place against the schema, filling defaults; return it.

    Raises:
        ConfigError: naming the key (dotted path) and what is wrong, for an unknown key,
            a wrong type, a bad value, or a failed cross-check (a model in ``run.models``
            that ``models`` does not define, a task's own check of its block,
            :meth:`~anachron.tasks.base.Task.check_config`: a stock window whose end is not
            after its start; a ``prices`` entry for a model that ``models`` does not define).
    """
    plugins = config.get("plugins") or []
    if not isinstance(plugins, list) or not all(isinstance(p, str) for p in plugins):
        raise ConfigError(f"config key plugins: a list of module names, got {plugins!r}")
    use_plugins(plugins)
    schema = load_schema(schema_path)
    validator = _with_defaults(jsonschema.Draft202012Validator)(schema)
    errors = sorted(validator.iter_errors(config), key=lambda e: (len(list(e.absolute_path)), str(e.absolute_path)))
    if errors:
        e = errors[0]
        if e.validator == "additionalProperties":
            allowed = sorted(e.schema.get("properties", {}))
            msg = f"{e.message}; allowed keys here: {allowed}" if allowed else e.message
        else:
            msg = e.message
        raise ConfigError(f"config key {_key_path(e)}: {msg}")
    env_snapshot = os.environ.get(SNAPSHOT_ENV)
    if env_snapshot:
        config["snapshot_dir"] = env_snapshot
    for m in config["run"]["models"]:
        if m not in config["models"]:
            raise ConfigError(f"config key run.models: model {m!r} is not defined under `models` (have {sorted(config['models'])})")
    for t in config["run"]["sample"]:
        if t not in config["run"]["tasks"] and t not in config["tasks"]:
            raise ConfigError(f"config key run.sample.{t}: unknown task {t!r}")
    for name, block in config["tasks"].items():
        task = find_task(name)
        if task is not None:
            task.check_config(block)
    for key, name in auxiliary_models(config).items():
        if name not in config["models"]:
            raise ConfigError(f"config key {key}: model {name!r} is not defined under `models` (have {sorted(config['models'])})")
    for name in config["prices"]:
        if name not in config["models"]:
            raise ConfigError(f"config key prices.{name}: model {name!r} is not defined under `models` (have {sorted(config['models'])})")
    verify = config["verify"]
    if ("llm" in verify["layers"] or verify["extractor"] == "llm") and not verify["model"]:
        raise ConfigError(
            "config key verify.model: the llm verifier layer and the llm claim extractor need a verifier model "
            "(a key of `models`); or use verify.layers [grounded, rules] and verify.extractor: deterministic"
        )
    for i, layers in enumerate(config["calibration"]["layer_sets"]):
        if "llm" in layers and not verify["model"]:
            raise ConfigError(f"config key calibration.layer_sets.{i}: the llm layer needs verify.model")
    return config


def auxiliary_models(config: dict[str, Any]) -> dict[str, str]:
    """Models used besides run.models: the verifier and each supervised method's supervisor.

    Returns ``{config key: model name}`` for every one that is set.
    """
    out = {}
    if config["verify"].get("model"):
        out["verify.model"] = config["verify"]["model"]
    for method, block in config["methods"].items():
        if method in config["run"]["methods"] and block.get("supervisor_model"):
            out[f"methods.{method}.supervisor_model"] = block["supervisor_model"]
    return out


def load_config(path: str | os.PathLike[str], overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    """Read a YAML config file, apply top-level ``overrides`` and validate it."""
    config = yaml.safe_load(Path(path).read_text()) or {}
    config.update(overrides or {})
    return validate_config(config)


def model_spec(config: dict[str, Any], name: str):
    """The :class:`~anachron.llm.types.ModelSpec` of model ``name`` in a validated config."""
    from anachron.llm.types import ModelSpec

    m = config["models"][name]
    return ModelSpec(name=name, **m)


def check_ready(config: dict[str, Any]) -> None:
    """Fail before any job starts if a configured model or source cannot be used.

    Raises:
        ConfigError: one message per problem found (missing environment variable for an
            endpoint's key or URL, missing local model file, live EDGAR without a
            User-Agent); secrets are never printed.
    """
    from anachron.llm.providers import check_provider_ready

    problems = []
    if config["sources"]["edgar"]["enabled"] is True and not snapshot_dir(config) and not _sec_user_agent():
        problems.append(
            "live SEC EDGAR fetching needs a User-Agent with a contact e-mail: set ANACHRON_SEC_USER_AGENT "
            "(e.g. 'Jane Doe research jane@example.org'), or set sources.edgar.enabled: false, "
            "or point snapshot_dir at a snapshot"
        )
    for name in dict.fromkeys([*config["run"]["models"], *auxiliary_models(config).values()]):
        try:
            check_provider_ready(model_spec(config, name))
        except ConfigError as exc:
            problems.append(str(exc))
    if "tempo" in config["run"]["methods"]:
        problems.extend(training_problems(config))
    if problems:
        raise ConfigError("\n".join(problems))


def training_problems(config: dict[str, Any]) -> list[str]:
    """What stops TEMPO training (method ``tempo`` in run.methods) before any job starts.

    The ``train`` extra must be installed and the ``training`` settings must fit together; an ``openai/`` model needs ``models.<m>.hf_path`` (the
    weights to train, a local directory) and ``methods.tempo.served_names.<m>`` (the adapter's name
    on the endpoint); a ``local/`` model trains on the weights exported from its GGUF.
    """
    from anachron.training.extra import training_extra_problems
    from anachron.training.trainer import TrainSettings

    problems = list(training_extra_problems())
    try:
        TrainSettings.from_config(config["training"])
    except ValueError as exc:
        problems.append(str(exc))
    served = config["methods"].get("tempo", {}).get("served_names", {})
    for name in config["run"]["models"]:
        m = config["models"][name]
        provider = m["model"].split("/", 1)[0]
        if provider == "openai":
            if not m.get("hf_path"):
                problems.append(f"method tempo trains model '{name}' from local weights: set models.{name}.hf_path")
            elif not Path(m["hf_path"]).expanduser().is_dir():
                problems.append(f"models.{name}.hf_path: no directory {m['hf_path']}")
            if name not in served:
                problems.append(f"method tempo on model '{name}' needs methods.tempo.served_names.{name} (the adapter's name on the endpoint)")
        elif provider == "mock":
            problems.append(f"method tempo cannot train the mock model '{name}' (no weights)")
    return problems


def _sec_user_agent() -> str:
    return os.environ.get("ANACHRON_SEC_USER_AGENT", "").strip()


def edgar_enabled(config: dict[str, Any]) -> bool:
    """Whether the workflow imports SEC EDGAR facts: ``sources.edgar.enabled``, where null
    (auto) means "when reading a snapshot or when a SEC User-Agent is configured"."""
    enabled = config["sources"]["edgar"]["enabled"]
    if enabled is None:
        return bool(snapshot_dir(config) or _sec_user_agent())
    return bool(enabled)


def snapshot_dir(config: dict[str, Any]) -> Path | None:
    """The configured snapshot directory as a resolved path, or None for live fetching."""
    s = config.get("snapshot_dir")
    return Path(s).expanduser().resolve() if s else None
