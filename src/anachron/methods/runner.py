"""Run one method x model over one task's instances: the body of the ``run_method`` rule."""

from __future__ import annotations

import logging
import os
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from anachron import __version__
from anachron.config import stable_hash
from anachron.io import utc_now
from anachron.llm.cache import LLMCache
from anachron.llm.client import CallLog, LLMClient
from anachron.llm.types import ModelSpec
from anachron.methods.registry import RETRIEVAL_METHODS, get_method
from anachron.store.schema import PREDICTION_USABLE, RUN_COLUMNS, TOOL_CALL_COLUMNS
from anachron.tasks.registry import get_task

log = logging.getLogger(__name__)


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
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, dict[str, Any]]:
    """Run a method and return (run table, call log, tool-call log, run metadata).

    The run table has :data:`~anachron.store.schema.RUN_COLUMNS`; the call log one row
    per LLM call (cache hits included); the tool-call log one row per search call
    (:data:`~anachron.store.schema.TOOL_CALL_COLUMNS`; empty for methods that do not
    search); the metadata is one ``runs`` row.

    ``retrieval`` (for retrieval methods): ``{"index": dir, "entities": parquet,
    "backend": "bm25" | "live", "live": {...}}``.

    ``adapter`` (method ``tempo``): the trained adapter of the task (GGUF for a ``local/`` model),
    applied by :func:`anachron.methods.tempo.tempo_model_config`; ``method_config`` then may hold
    ``served_names`` (not passed to the method).
    """
    started = utc_now()
    task = get_task(task_name)
    method = get_method(method_name)
    method_config = dict(method_config)
    served_names = method_config.pop("served_names", None)
    if method_name == "tempo":
        from anachron.methods.tempo import tempo_model_config

        if adapter is None:
            raise ValueError("method tempo needs the trained adapter (rule train_tempo)")
        model_config = tempo_model_config(model_name, model_config, adapter, task_name, served_names)
    spec = ModelSpec(name=model_name, **model_config)
    chosen = sample_instances(instances, splits, sample, seed)
    log.info("%s/%s/%s: %d instances (splits %s, sample %s)", task_name, method_name, model_name, len(chosen), splits, sample)
    call_log = CallLog()
    client = LLMClient(spec, LLMCache(cache_dir), call_log)
    extra: dict[str, Any] = {}
    if method_name in RETRIEVAL_METHODS:
        from anachron.retrieval.backends import open_search

        extra = open_search(retrieval or {})
    out = method(chosen, task, client, params=dict(spec.params), **method_config, **extra)
    results, tool_calls = out if isinstance(out, tuple) else (out, pd.DataFrame(columns=TOOL_CALL_COLUMNS))
    rows = [res.to_row(row, task=task_name, method=method_name, model=model_name) for res, (_, row) in zip(results, chosen.iterrows())]
    run = pd.DataFrame(rows, columns=RUN_COLUMNS)
    calls = call_log.frame(task=task_name, method=method_name, model_key=model_name)
    n_hits = int(calls["cache_hit"].sum()) if len(calls) else 0
    meta = {
        "task": task_name,
        "method": method_name,
        "model": model_name,
        "model_id": spec.model,
        "knowledge_cutoff": spec.knowledge_cutoff,
        "config_hash": stable_hash({"model": model_config, "method": method_config, "splits": splits, "sample": sample, "seed": seed}),
        "code_version": code_version(),
        "started_at": started,
        "finished_at": utc_now(),
        "n_instances": len(run),
        "n_llm_calls": len(calls),
        "n_cache_hits": n_hits,
        "n_uncached_calls": len(calls) - n_hits,
        "parse_ok": int(run["parse_status"].isin(PREDICTION_USABLE).sum()),
        "n_tool_calls": len(tool_calls),
    }
    log.info("calls: %d (cache hits %d, uncached %d)", len(calls), n_hits, len(calls) - n_hits)
    return run, calls, tool_calls, meta
