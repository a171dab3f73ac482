"""The forecast task's dataset: binary ForecastBench questions and how they resolved.

Definition (docs/tasks.md#forecast): binary ForecastBench questions (single questions;
combination questions are dropped by the source reader); cutoff = the question set's freeze
date; label = ``resolved_to`` (0 or 1, final resolutions only). The label also says which
vintage of the series decided it (``label_vintage``, ``revised_value``: see "Labels as first
published" in :mod:`anachron.sources.forecastbench`); a source table without those columns
(written before they existed) gives ``revised_value`` True for fred and dbnomics rows, False
otherwise, and ``label_vintage`` null.

Instances: one per (question, resolution date). Dataset-sourced questions (acled, dbnomics,
fred, wikipedia, yfinance) are asked at several horizons; each resolved horizon is its own
forecast, as ForecastBench scores them (config ``horizons`` may keep only the earliest or the
latest). Placeholders ``{resolution_date}`` and ``{forecast_due_date}`` in the question text are
filled in. For market questions (manifold, metaculus, polymarket, infer) the resolution date
is the day the market settled, which would hint at the outcome, so the prompt does not show it.

Split (treatment vs control), from the configured models' knowledge cutoffs (``lo`` = the
earliest, ``hi`` = the latest):

* resolution date <= lo -> ``eval`` (treatment: every model may have seen the outcome);
* freeze date > hi -> ``control`` (no model can have seen the outcome);
* otherwise excluded (``between_knowledge_cutoffs``).

Instances share the columns of every task: ``instance_id, task, split, cutoff_date, inputs,
label, provenance`` (``inputs``, ``label`` and ``provenance`` are JSON strings).
"""

from __future__ import annotations

import hashlib
import html
import json
import logging
import re
from typing import Any, Mapping

import numpy as np
import pandas as pd

from anachron.dates import to_iso
from anachron.frames import is_na, is_null, text_or_empty, text_or_none
from anachron.sources.base import check_columns
from anachron.sources.forecastbench.alfred import KEY_ENV
from anachron.sources.forecastbench.vintage import REVISABLE_SOURCES
from anachron.tasks.base import INSTANCE_COLUMNS

log = logging.getLogger(__name__)

TASK = "forecast"
#: Source table the builder reads (``data/raw/forecastbench/data.parquet``).
SOURCE_TABLE = "forecastbench"
EXCLUSION_COLUMNS = ["question_id", "source", "question_set", "resolution_date", "reason", "detail"]
REQUIRED_COLUMNS = [
    "question_id",
    "source",
    "question",
    "background",
    "resolution_criteria",
    "freeze_date",
    "resolution_date",
    "resolved_to",
    "question_set",
    "url",
]

#: Exclusion reasons (the ``reason`` column of the exclusions frame).
REASON_SOURCE = "source_not_selected"
REASON_UNRESOLVED = "unresolved"
REASON_NON_BINARY = "non_binary_resolution"
REASON_BAD_DATE = "bad_date"
REASON_RESOLVED_BY_FREEZE = "resolved_by_freeze_date"
REASON_DUPLICATE = "duplicate"
REASON_HORIZON = "horizon_not_selected"
REASON_BETWEEN = "between_knowledge_cutoffs"

HORIZONS = ("all", "earliest", "latest")
TRUNCATION_MARK = " [...]"

#: JSON Schema (draft 2020-12) of the ``tasks.forecast`` config block.
CONFIG_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "tasks.forecast",
    "description": "ForecastBench binary questions (docs/tasks.md#forecast): cutoff = freeze date, label = resolved_to.",
    "type": "object",
    "additionalProperties": False,
    "default": {},
    "properties": {
        "question_sets": {
            "description": (
                "ForecastBench question-set files to read (YYYY-MM-DD-llm.json or -human.json); each round's "
                "YYYY-MM-DD_resolution_set.json is read with it. Used by fetch_forecastbench."
            ),
            "type": "array",
            "items": {"type": "string", "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}-[A-Za-z0-9_]+[.]json$"},
            "minItems": 1,
            "uniqueItems": True,
            "default": ["2024-07-21-human.json", "2025-10-26-llm.json"],
        },
        "fred_key_env": {
            "description": (
                "Name of the environment variable holding a FRED API key (the key itself never goes in config). "
                "When it is set, a live fetch re-resolves FRED questions on values as first published (ALFRED); "
                "null: never. Used by fetch_forecastbench."
            ),
            "type": ["string", "null"],
            "default": KEY_ENV,
        },
        "base_url": {
            "description": "Raw-file root of the ForecastBench datasets repository, for live fetches.",
            "type": "string",
            "default": "https://raw.githubusercontent.com/forecastingresearch/forecastbench-datasets/main/datasets",
        },
        "sources": {
            "description": "ForecastBench question sources to keep (e.g. [manifold, fred]); null keeps all.",
            "type": ["array", "null"],
            "items": {"type": "string", "pattern": "^[a-z0-9_]+$"},
            "default": None,
        },
        "horizons": {
            "description": (
                "Dataset questions resolve at several dates: 'all' makes one instance per resolved date "
                "(as ForecastBench scores them), 'earliest' / 'latest' keep one per question."
            ),
            "type": "string",
            "enum": list(HORIZONS),
            "default": "all",
        },
        "background_max_chars": {
            "description": "Background text shown in the prompt is cut to this many characters (0 = none shown).",
            "type": "integer",
            "minimum": 0,
            "default": 1200,
        },
        "show_freeze_value": {
            "description": "Show the value at the freeze date (market price or latest data point) in the prompt.",
            "type": "boolean",
            "default": True,
        },
    },
}


def _defaults(task_config: Mapping[str, Any] | None) -> dict[str, Any]:
    cfg = {k: v["default"] for k, v in CONFIG_SCHEMA["properties"].items()}
    unknown = sorted(set(task_config or {}) - set(cfg))
    if unknown:
        raise ValueError(f"tasks.forecast: unknown key(s) {unknown}; known: {sorted(cfg)}")
    cfg.update(task_config or {})
    if cfg["horizons"] not in HORIZONS:
        raise ValueError(f"tasks.forecast.horizons must be one of {HORIZONS}, got {cfg['horizons']!r}")
    n = cfg["background_max_chars"]
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise ValueError(f"tasks.forecast.background_max_chars must be a non-negative integer, got {n!r}")
    return cfg


_HTML_TAG = re.compile(r"</?(?:p|a|div|br|span|ul|ol|li|strong|em|b|i|h[1-6]|table|tr|td|blockquote)\b[^>]*>", re.I)


def plain_text(text: str) -> str:
    """Text with HTML markup removed (when it has any) and blank runs collapsed.

    ForecastBench backgrounds from some sources (INFER, a few FRED series) are HTML; the
    prompt shows them as plain text. Text without HTML tags keeps its characters
    (a ``<`` in "x < 5" is not markup); whitespace-only lines and runs of blank lines shrink.
    """
    if _HTML_TAG.search(text):
        import lxml.html

        try:
            text = lxml.html.fragment_fromstring(text, create_parent="div").text_content()
        except Exception:  # malformed markup: drop tags with the pattern instead
            text = html.unescape(_HTML_TAG.sub(" ", text))
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


def truncate(text: str, max_chars: int) -> str:
    """``text`` stripped and cut to at most ``max_chars`` characters, at a word boundary when
    one is near, with a ``" [...]"`` mark when cut (the mark counts toward the limit)."""
    text = text.strip()
    if len(text) <= max_chars:
        return text
    if max_chars <= len(TRUNCATION_MARK):
        return text[:max_chars]
    cut = text[: max_chars - len(TRUNCATION_MARK)]
    space = cut.rfind(" ")
    if space >= 0.8 * len(cut):
        cut = cut[:space]
    return cut.rstrip() + TRUNCATION_MARK


def fill_placeholders(text: str, *, resolution_date: str, forecast_due_date: str | None) -> str:
    """Replace ForecastBench's ``{resolution_date}`` and ``{forecast_due_date}`` placeholders."""
    out = text.replace("{resolution_date}", resolution_date)
    if forecast_due_date:
        out = out.replace("{forecast_due_date}", forecast_due_date)
    return out


def knowledge_cutoff_bounds(knowledge_cutoffs: Mapping[str, str]) -> tuple[str, str]:
    """``(earliest, latest)`` ISO knowledge cutoff of the configured models.

    Raises ``ValueError`` when the mapping is empty or a cutoff is not an ISO date.
    """
    if not knowledge_cutoffs:
        raise ValueError("forecast: knowledge_cutoffs is empty; the split needs every configured model's knowledge cutoff")
    days = {}
    for model, kc in knowledge_cutoffs.items():
        day = to_iso(kc, lenient=True, utc=True)
        if day is None:
            raise ValueError(f"forecast: knowledge cutoff {kc!r} of model {model!r} is not an ISO date YYYY-MM-DD")
        days[model] = day
    return min(days.values()), max(days.values())


def assign_split(freeze_date: str, resolution_date: str, lo: str, hi: str) -> str | None:
    """``"eval"`` if resolved on/before ``lo``; ``"control"`` if frozen after ``hi``; else None.

    All arguments are ISO dates; ``lo``/``hi`` are the earliest/latest model knowledge cutoffs.
    """
    if resolution_date <= lo:
        return "eval"
    if freeze_date > hi:
        return "control"
    return None


def _instance_id(due: str, source: str, question_id: str, resolution_date: str) -> str:
    digest = hashlib.sha256(f"{source}\x1f{question_id}".encode("utf-8")).hexdigest()[:12]
    return f"{TASK}-{due}-{source}-{digest}-{resolution_date}"


def build_forecast_instances(
    tables: Mapping[str, pd.DataFrame],
    task_config: Mapping[str, Any] | None,
    *,
    knowledge_cutoffs: Mapping[str, str],
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Build forecast instances from the joined ForecastBench table; return ``(instances, exclusions)``.

    Args:
        tables: ``{"forecastbench": frame}`` as from :func:`anachron.sources.forecastbench.fetch`
            (one row per single question and resolution date).
        task_config: the ``tasks.forecast`` block (:data:`CONFIG_SCHEMA`; missing keys take
            their defaults).
        knowledge_cutoffs: configured model name -> ISO knowledge cutoff.

    Rows are excluded, in this order, with a reason: ``source_not_selected`` (config
    ``sources``), ``unresolved`` (``resolved`` False), ``non_binary_resolution`` (resolved_to
    not 0/1), ``bad_date`` (freeze or resolution date unparseable), ``resolved_by_freeze_date``
    (resolution date on/before the freeze date: the outcome was known at the cutoff),
    ``duplicate`` (same due date, source, id and resolution date), ``horizon_not_selected``
    (config ``horizons``), ``between_knowledge_cutoffs`` (see the module docstring).

    Returns:
        ``instances`` with :data:`INSTANCE_COLUMNS` (all str): ``instance_id``
        (``forecast-<due date>-<source>-<12 hex of sha256(source, id)>-<resolution date>``),
        ``task`` "forecast", ``split`` eval/control, ``cutoff_date`` = freeze date (ISO),
        ``inputs`` (JSON: question, background, resolution_criteria, market_resolution_criteria,
        source, question_type, freeze_date, forecast_due_date, resolution_date (dataset questions
        only, else null), freeze_value, freeze_value_explanation, show_freeze_value), ``label``
        (JSON: resolved_to 0/1, resolution_date, revised_value, label_vintage), ``provenance``
        (JSON: question_id, source, question_set, resolution_set, url, freeze_datetime,
        forecast_due_date, horizon_days, knowledge_cutoff_min/max, split_rule); sorted by instance id. ``exclusions`` with
        :data:`EXCLUSION_COLUMNS` (all str).

    Raises:
        KeyError: when ``tables`` has no ``"forecastbench"`` table.
        SourceError: when the table lacks a required column (named).
        ValueError: for an empty or malformed ``knowledge_cutoffs`` or a bad config value.
    """
    if SOURCE_TABLE not in tables:
        raise KeyError(f"forecast: tables has no {SOURCE_TABLE!r} table (got {sorted(tables)})")
    df = tables[SOURCE_TABLE]
    check_columns(df, REQUIRED_COLUMNS, f"{SOURCE_TABLE} table")
    cfg = _defaults(task_config)
    lo, hi = knowledge_cutoff_bounds(knowledge_cutoffs)
    keep_sources = None if cfg["sources"] is None else set(cfg["sources"])

    exclusions: list[dict[str, str]] = []
    candidates: list[dict[str, Any]] = []
    seen: set[tuple[str, str, str, str]] = set()

    def exclude(r: dict[str, Any], reason: str, detail: str) -> None:
        exclusions.append(
            {
                "question_id": text_or_empty(r.get("question_id")),
                "source": text_or_empty(r.get("source")),
                "question_set": text_or_empty(r.get("question_set")),
                "resolution_date": text_or_empty(r.get("resolution_date")),
                "reason": reason,
                "detail": detail,
            }
        )

    records = df.to_dict("records")
    for r in records:
        source = text_or_empty(r["source"])
        if keep_sources is not None and source not in keep_sources:
            exclude(r, REASON_SOURCE, f"source {source!r} not in tasks.forecast.sources")
            continue
        resolved = r.get("resolved", True)
        if not is_null(resolved) and not bool(resolved):
            exclude(r, REASON_UNRESOLVED, f"not resolved as of the resolution set (current value {r['resolved_to']})")
            continue
        try:
            y = float(r["resolved_to"])
        except (TypeError, ValueError):
            y = float("nan")
        if y not in (0.0, 1.0):
            exclude(r, REASON_NON_BINARY, f"resolved_to {r['resolved_to']!r} is not 0 or 1")
            continue
        freeze = to_iso(r["freeze_date"], lenient=True, utc=True)
        resolution = to_iso(r["resolution_date"], lenient=True, utc=True)
        if freeze is None or resolution is None:
            exclude(r, REASON_BAD_DATE, f"freeze_date {r['freeze_date']!r} / resolution_date {r['resolution_date']!r} not a date")
            continue
        if resolution <= freeze:
            exclude(r, REASON_RESOLVED_BY_FREEZE, f"resolved {resolution}, on or before the freeze date {freeze}")
            continue
        due = to_iso(r.get("forecast_due_date"), lenient=True, utc=True) or freeze
        key = (due, source, text_or_empty(r["question_id"]), resolution)
        if key in seen:
            exclude(r, REASON_DUPLICATE, f"second row for {key}")
            continue
        seen.add(key)
        candidates.append({**r, "_y": int(y), "_freeze": freeze, "_resolution": resolution, "_due": due})

    if cfg["horizons"] != "all":
        by_question: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
        for c in candidates:
            by_question.setdefault((c["_due"], text_or_empty(c["source"]), text_or_empty(c["question_id"])), []).append(c)
        kept = []
        for group in by_question.values():
            group = sorted(group, key=lambda c: c["_resolution"])
            chosen = group[0] if cfg["horizons"] == "earliest" else group[-1]
            kept.append(chosen)
            for c in group:
                if c is not chosen:
                    exclude(c, REASON_HORIZON, f"horizons={cfg['horizons']}: kept resolution date {chosen['_resolution']}")
        candidates = kept

    rows = []
    for c in candidates:
        split = assign_split(c["_freeze"], c["_resolution"], lo, hi)
        if split is None:
            exclude(
                c,
                REASON_BETWEEN,
                f"between model knowledge cutoffs: resolved {c['_resolution']} after the earliest cutoff {lo}, "
                f"frozen {c['_freeze']} on or before the latest cutoff {hi}",
            )
            continue
        rows.append(_instance_row(c, split, cfg, lo, hi))

    instances = pd.DataFrame(rows, columns=INSTANCE_COLUMNS)
    instances = instances.sort_values("instance_id", kind="mergesort").reset_index(drop=True)
    for col in INSTANCE_COLUMNS:
        instances[col] = instances[col].astype("str")
    dup = instances["instance_id"][instances["instance_id"].duplicated()].tolist()
    if dup:  # pragma: no cover - duplicates are excluded above; a hash collision would land here
        raise ValueError(f"forecast: duplicate instance ids {dup[:3]}")
    excl = pd.DataFrame(exclusions, columns=EXCLUSION_COLUMNS).astype("str")
    log.info(
        "forecast: %d instances (%s); %d excluded (%s); knowledge cutoffs %s..%s",
        len(instances),
        instances["split"].value_counts().to_dict(),
        len(excl),
        excl["reason"].value_counts().to_dict(),
        lo,
        hi,
    )
    return instances, excl


def _label_vintage(c: Mapping[str, Any]) -> dict[str, Any]:
    """``revised_value`` and ``label_vintage`` of a source row; missing (an older table): derived
    from the source name, and null."""
    revised = c.get("revised_value")
    if is_na(revised):
        revised = text_or_empty(c.get("source")) in REVISABLE_SOURCES
    return {"revised_value": bool(revised), "label_vintage": text_or_none(c.get("label_vintage"), is_na)}


def _instance_row(c: dict[str, Any], split: str, cfg: dict[str, Any], lo: str, hi: str) -> dict[str, str]:
    due, freeze, resolution = c["_due"], c["_freeze"], c["_resolution"]
    is_dataset = text_or_empty(c.get("question_type")) == "dataset" or "{resolution_date}" in text_or_empty(c["question"])

    def fill(text: Any) -> str:
        return fill_placeholders(text_or_empty(text), resolution_date=resolution, forecast_due_date=due).strip()

    inputs = {
        "question": fill(c["question"]),
        "background": truncate(plain_text(fill(c["background"])), int(cfg["background_max_chars"])),
        "resolution_criteria": fill(c["resolution_criteria"]),
        "market_resolution_criteria": (
            truncate(plain_text(fill(c.get("market_resolution_criteria"))), int(cfg["background_max_chars"]))
            if text_or_none(c.get("market_resolution_criteria"))
            else None
        ),
        "source": text_or_empty(c["source"]),
        "question_type": "dataset" if is_dataset else "market",
        "freeze_date": freeze,
        "forecast_due_date": due,
        # a market's settlement day hints at its outcome: shown only where the question asks about that date
        "resolution_date": resolution if is_dataset else None,
        "freeze_value": text_or_none(c.get("freeze_value")),
        "freeze_value_explanation": text_or_none(c.get("freeze_value_explanation")),
        "show_freeze_value": bool(cfg["show_freeze_value"]),
    }
    label = {"resolved_to": c["_y"], "resolution_date": resolution, **_label_vintage(c)}
    provenance = {
        "question_id": text_or_empty(c["question_id"]),
        "source": text_or_empty(c["source"]),
        "question_set": text_or_empty(c["question_set"]),
        "resolution_set": text_or_none(c.get("resolution_set")),
        "url": text_or_empty(c["url"]),
        "freeze_datetime": text_or_none(c.get("freeze_datetime")),
        "forecast_due_date": due,
        "horizon_days": (pd.Timestamp(resolution) - pd.Timestamp(freeze)).days,
        "knowledge_cutoff_min": lo,
        "knowledge_cutoff_max": hi,
        "split_rule": "eval: resolved on/before the earliest knowledge cutoff; control: frozen after the latest",
    }
    return {
        "instance_id": _instance_id(due, text_or_empty(c["source"]), text_or_empty(c["question_id"]), resolution),
        "task": TASK,
        "split": split,
        "cutoff_date": freeze,
        "inputs": json.dumps(inputs, ensure_ascii=False),
        "label": json.dumps(label, ensure_ascii=False),
        "provenance": json.dumps(provenance, ensure_ascii=False, sort_keys=True),
    }
