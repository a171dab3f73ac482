"""Run one method x model over one task's instances: the body of the ``run_method`` rule."""

from __future__ import annotations

import json
import logging
import os
import subprocess
from pathlib import Path
from typing import Any, Iterable, Mapping

import numpy as np
import pandas as pd

from anachron import __version__
from anachron.io import stable_hash
from anachron.io import utc_now
from anachron.llm.cache import LLMCache
from anachron.errors import EndpointError
from anachron.llm.client import CallLog, LLMClient
from anachron.llm.endpoints import EndpointLimits, endpoint_env, endpoint_label, endpoint_limits
from anachron.llm.slots import endpoint_gates, shared_endpoint_gates
from anachron.llm.types import ModelSpec
from anachron.logs import mask_secrets
from anachron.methods.registry import get_spec
from anachron.variants import split_variant
from anachron.tables import PREDICTION_USABLE, RUN_COLUMNS, TOOL_CALL_COLUMNS
from anachron.tasks.registry import get_task

log = logging.getLogger(__name__)

#: Where under the cache directory the endpoints' shared lock files live.
LIMITS_DIR = ".limits"

#: Default of config key ``run.max_failed_share``: the share of a run's uncached calls that may
#: still fail after their retries before the run fails.
DEFAULT_MAX_FAILED_SHARE = 0.02


def sample_instances(instances: pd.DataFrame, splits: list[str], n: int | None, seed: int) -> pd.DataFrame:
    """A fixed, seeded sample of at most ``n`` instances per split (all if ``n`` is None).

    The sample depends only on the instance ids, ``n`` and ``seed``, so every method
    and model of a run sees the same instances (needed for paired comparisons), and
    samples are nested: the first ``n`` of one seeded permutation, so a smaller sample
    is a subset of a larger one. Rows come back sorted by instance id.
    """
    parts = []
    for split in splits:
        part = instances[instances["split"] == split].sort_values("instance_id")
        if n is not None and len(part) > n:
            rng = np.random.default_rng(seed)
            idx = np.sort(rng.permutation(len(part))[:n])
            part = part.iloc[idx]
        parts.append(part)
    if not parts:
        return instances.iloc[0:0]
    return pd.concat(parts).sort_values("instance_id").reset_index(drop=True)


def code_version() -> str:
    """Package version plus the git commit of the working tree, when there is one."""
    try:
        sha = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, timeout=5,
            cwd=Path(__file__).resolve().parent,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        sha = ""
    return f"{__version__}+{sha}" if sha else __version__


def run_method(
    instances: pd.DataFrame,
    *,
    task_name: str,
    method_name: str,
    model_name: str,
    model_config: dict[str, Any],
    method_config: dict[str, Any],
    cache_dir: str | os.PathLike[str],
    splits: list[str],
    sample: int | None,
    seed: int,
    retrieval: dict[str, Any] | None = None,
    adapter: str | None = None,
    max_failed_share: float = DEFAULT_MAX_FAILED_SHARE,
    retry_token: str = "",
    endpoints: Mapping[str, Mapping[str, Any]] | None = None,
    probe_instances: pd.DataFrame | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, dict[str, Any]]:
    """Run a method and return (run table, call log, tool-call log, run metadata).

    The run table has :data:`~anachron.tables.RUN_COLUMNS`; the call log one row
    per LLM call (cache hits included); the tool-call log one row per search call
    (:data:`~anachron.tables.TOOL_CALL_COLUMNS`; empty for methods that do not
    search); the metadata is one ``runs`` row, with the failure counts of
    :func:`call_failures`, ``n_attempts`` (requests sent, retries included), ``endpoint`` (the
    model's base-URL variable name for an ``openai/`` model, else None) and ``retry_token``.

    ``retrieval`` (for retrieval methods): ``{"index": dir, "entities": parquet,
    "backend": "bm25" | "live", "live": {...}}``.

    ``adapter`` (method ``tempo``): the trained adapter of the task (GGUF for a ``local/`` model),
    applied by :func:`anachron.methods.tempo.tempo_model_config`; ``method_config`` then may hold
    ``served_names`` (not passed to the method).

    Failures (docs/running.md#endpoints): calls that still fail after their retries are counted,
    not raised, up to ``max_failed_share`` of the uncached calls (config ``run.max_failed_share``).

    Endpoint limits: ``endpoints`` is the config's ``endpoints`` block (base-URL variable ->
    ``{concurrency, requests_per_minute}``). Each provider call to a listed endpoint holds one of
    its ``concurrency`` slots and takes one of its rate tokens, shared with every other process using
    the same ``cache_dir`` (lock files under ``<cache_dir>/.limits/<variable>``;
    :class:`~anachron.llm.slots.EndpointGate`), so jobs running at once share the endpoint call by
    call: one job alone may use all of it. The model's and the supervisor's ``concurrency`` are
    capped at the endpoint's.
    ``retry_token`` is stored in the metadata as is (see :func:`retry_param`).

    Probe runs (``method_name`` ``<method>@<probe>``, :mod:`anachron.plan`): the sample is drawn from
    ``instances`` as for the method itself (so it is the same instances, or a nested subset), then each
    sampled row is replaced by its row of ``probe_instances`` (the probe dataset,
    :mod:`anachron.tasks.probes`); a sampled instance the probe dataset lacks was skipped there, with its
    reason in the probe's record, and is left out of the run.

    Raises:
        EndpointError: more than ``max_failed_share`` of the uncached calls failed (the message
            names the models, their endpoints, the counts and the first errors; completed calls
            stay cached, so a re-run continues where this one stopped).
    """
    started = utc_now()
    task = get_task(task_name)
    base_method, probe = split_variant(method_name)
    method_spec = get_spec(base_method)
    method = method_spec.runner
    method_config = dict(method_config)
    served_names = method_config.pop("served_names", None)
    if probe is not None and probe_instances is None:
        raise ValueError(f"probe run {method_name} needs the probe's instances (rule probe_dataset)")
    if base_method == "tempo":
        from anachron.methods.tempo import tempo_model_config

        if adapter is None:
            raise ValueError("method tempo needs the trained adapter (rule train_tempo)")
        model_config = tempo_model_config(model_name, model_config, adapter, task_name, served_names)
    config_hash = stable_hash({"model": model_config, "method": method_config, "splits": splits, "sample": sample, "seed": seed})
    spec = ModelSpec(name=model_name, **model_config)
    supervisor = method_config.get("supervisor_model")
    sup_spec = ModelSpec(**supervisor) if supervisor else None
    specs = [spec] + ([sup_spec] if sup_spec is not None else [])
    limits = endpoint_limits(endpoints)
    spec = _capped(spec, limits)
    if sup_spec is not None:
        method_config["supervisor_model"] = {**supervisor, "concurrency": _capped(sup_spec, limits).concurrency}
    used = {endpoint_env(s) for s in specs} & set(limits)
    gates = endpoint_gates({env: limits[env] for env in used}, Path(cache_dir) / LIMITS_DIR)
    for env, gate in gates.items():
        log.info("endpoint %s: %r, shared with every job using %s", env, gate, gate.directory)
    chosen = sample_instances(instances, splits, sample, seed)
    if probe is not None:
        changed = probe_instances.set_index("instance_id", drop=False)
        kept = [i for i in chosen["instance_id"] if i in changed.index]
        log.info("probe %s: %d of %d sampled instances (the others were skipped: the probe's records say why)",
                 probe, len(kept), len(chosen))
        chosen = changed.loc[kept].reset_index(drop=True)
    log.info("%s/%s/%s: %d instances (splits %s, sample %s)", task_name, method_name, model_name, len(chosen), splits, sample)
    call_log = CallLog()
    with shared_endpoint_gates(gates):
        client = LLMClient(spec, LLMCache(cache_dir), call_log)
        extra: dict[str, Any] = {}
        if method_spec.retrieves:
            from anachron.retrieval.backends import open_search

            extra = open_search(retrieval or {})
        out = method(chosen, task, client, params=dict(spec.params), **method_config, **extra)
    results, tool_calls = out if isinstance(out, tuple) else (out, pd.DataFrame(columns=TOOL_CALL_COLUMNS))
    rows = [res.to_row(row, task=task_name, method=method_name, model=model_name) for res, (_, row) in zip(results, chosen.iterrows())]
    run = pd.DataFrame(rows, columns=RUN_COLUMNS)
    calls = call_log.frame(task=task_name, method=method_name, model_key=model_name)
    n_hits = int(calls["cache_hit"].sum()) if len(calls) else 0
    failures = call_failures(calls)
    meta = {
        "task": task_name,
        "method": method_name,
        "model": model_name,
        "model_id": spec.model,
        "knowledge_cutoff": spec.knowledge_cutoff,
        "config_hash": config_hash,
        "code_version": code_version(),
        "started_at": started,
        "finished_at": utc_now(),
        "n_instances": len(run),
        "n_llm_calls": len(calls),
        "n_cache_hits": n_hits,
        "n_uncached_calls": len(calls) - n_hits,
        "n_attempts": int(calls["attempts"].sum()) if len(calls) else 0,
        "parse_ok": int(run["parse_status"].isin(PREDICTION_USABLE).sum()),
        "n_tool_calls": len(tool_calls),
        "endpoint": endpoint_env(spec),
        "retry_token": retry_token,
        **{k: v for k, v in failures.items() if k != "errors"},
        "first_error": failures["errors"][0] if failures["errors"] else None,
    }
    log.info(
        "calls: %d (cache hits %d, uncached %d, failed %d, attempts %d)",
        len(calls), n_hits, len(calls) - n_hits, failures["n_failed_calls"], meta["n_attempts"],
    )
    if failures["failed_share"] > max_failed_share:
        raise EndpointError(failure_message(meta, failures, {s.name: s for s in specs}, calls, max_failed_share))
    if failures["n_failed_calls"]:
        log.warning("%d call(s) failed after retries (%s); the next `snakemake` run retries them",
                    failures["n_failed_calls"], failures["errors"][0])
    return run, calls, tool_calls, meta


def _capped(spec: ModelSpec, limits: Mapping[str, EndpointLimits]) -> ModelSpec:
    """``spec`` with its ``concurrency`` capped at its endpoint's (unchanged without a limit)."""
    env = endpoint_env(spec)
    if env is None or env not in limits or spec.concurrency <= limits[env].concurrency:
        return spec
    return spec.model_copy(update={"concurrency": int(limits[env].concurrency)})


#: Errors quoted in a failure message at most, and characters of each.
_ERRORS_SHOWN, _ERROR_CHARS = 3, 300


def _failed_rows(calls: pd.DataFrame) -> pd.DataFrame:
    if not len(calls):
        return calls
    return calls[calls["error"].notna() & ~calls["cache_hit"].astype(bool)]


def call_failures(calls: pd.DataFrame) -> dict[str, Any]:
    """Failure counts of a call log (:class:`~anachron.llm.client.CallLog` frame).

    Returns a dict: ``n_failed_calls`` (provider calls whose final result, after retries, has an
    error), ``n_failed_instances`` (distinct ``instance_id`` tags among them), ``failed_share``
    (failed / uncached calls; 0.0 without uncached calls) and ``errors`` (the distinct error texts in
    call order, at most three, each cut at 300 characters, credentials masked).
    """
    failed = _failed_rows(calls)
    uncached = int((~calls["cache_hit"].astype(bool)).sum()) if len(calls) else 0
    instances = failed["instance_id"].dropna().nunique() if "instance_id" in failed.columns else 0
    errors = [mask_secrets(e[:_ERROR_CHARS]) for e in dict.fromkeys(failed["error"].astype(str))][:_ERRORS_SHOWN] if len(failed) else []
    return {
        "n_failed_calls": len(failed),
        "n_failed_instances": int(instances),
        "failed_share": len(failed) / uncached if uncached else 0.0,
        "errors": errors,
    }


def failure_message(
    meta: Mapping[str, Any],
    failures: Mapping[str, Any],
    specs: Mapping[str, ModelSpec],
    calls: pd.DataFrame,
    max_failed_share: float,
) -> str:
    """The message of a run whose failed share exceeds ``max_failed_share``: the run, the counts,
    per failing model its id and endpoint (variable and ``scheme://host:port``), the first errors, and
    that a re-run continues from the cache."""
    run = f"{meta['task']}/{meta['method']}/{meta['model']}"
    lines = [
        f"run {run}: {failures['n_failed_calls']} of {meta['n_uncached_calls']} uncached LLM calls failed after retries "
        f"({failures['failed_share']:.1%}, above run.max_failed_share {max_failed_share:.1%}); "
        f"{failures['n_failed_instances']} instance(s) affected."
    ]
    for name, n in _failed_rows(calls)["model_name"].value_counts(sort=False).items():
        spec = specs.get(str(name))
        where = (endpoint_label(spec) if spec is not None else None) or "no endpoint (runs in-process)"
        model_id = spec.model if spec is not None else "?"
        lines.append(f"  model '{name}' ({model_id}), endpoint {where}: {n} failed call(s)")
    lines.append("  first errors:")
    lines.extend(f"    - {e}" for e in failures["errors"])
    lines.append(
        "Completed calls are cached: once the endpoint answers again, re-running `snakemake` continues from the "
        "cache and sends only the calls that are missing."
    )
    return "\n".join(lines)


#: Keys of a run's metadata that :func:`retry_param` reads (the run's retry state).
RETRY_STATE_KEYS = ("n_failed_calls", "finished_at", "retry_token")


def retry_state_path(meta_path: str | os.PathLike[str]) -> Path:
    """Where the retry state of the run with metadata ``meta_path`` lives: ``<run>.retry.json`` next
    to ``<run>.meta.json``. It is no Snakemake output, so it outlives the removal of the outputs when
    the job re-runs (a re-run job is re-planned in a fresh process after its outputs are gone, and
    must still see the state that triggered it)."""
    path = Path(meta_path)
    name = path.name[: -len(".meta.json")] if path.name.endswith(".meta.json") else path.stem
    return path.with_name(name + ".retry.json")


def retry_param(state_path: str | os.PathLike[str]) -> str:
    """The ``retry`` param of rule run_method, from the run's retry state (docs/running.md#endpoints):
    a JSON file with :data:`RETRY_STATE_KEYS` (the run's metadata, or its copy at
    :func:`retry_state_path`).

    ``""`` without a readable file; ``"retry:<finished_at>"`` when the last run had failed calls;
    else the ``retry_token`` that run was given (``""`` when absent). Snakemake re-runs a job whose
    params changed, so the next ``snakemake`` run retries exactly the runs with failed calls, once:
    the re-run stores the token it got, and without failures the value stays the same, so nothing
    re-runs a third time.
    """
    path = Path(state_path)
    if not path.is_file():
        return ""
    try:
        state = json.loads(path.read_text())
    except (OSError, ValueError):
        return ""
    if not isinstance(state, dict):
        return ""
    if state.get("n_failed_calls"):
        return f"retry:{state.get('finished_at', '')}"
    return str(state.get("retry_token") or "")


def failed_runs_summary(meta_paths: Iterable[str | os.PathLike[str]]) -> str | None:
    """One block for the terminal listing the runs (existing metadata files among ``meta_paths``)
    that finished with failed calls below the threshold, or None when there are none."""
    rows = []
    for p in meta_paths:
        path = Path(p)
        if not path.is_file():
            continue
        try:
            meta = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if meta.get("n_failed_calls"):
            rows.append(meta)
    if not rows:
        return None
    lines = [f"anachron: {len(rows)} run(s) finished with LLM calls that failed after retries (their instances have no answer):"]
    for m in rows:
        where = f", endpoint {m['endpoint']}" if m.get("endpoint") else ""
        lines.append(
            f"  {m['task']}/{m['method']}/{m['model']}: {m['n_failed_calls']} of {m.get('n_uncached_calls', '?')} uncached "
            f"calls, {m.get('n_failed_instances', '?')} instance(s){where}; first error: {m.get('first_error')}"
        )
    lines.append("The next `snakemake` run re-runs exactly these runs (completed calls come from the cache).")
    return "\n".join(lines)
