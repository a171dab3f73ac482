"""The declared schema of ``results/results.duckdb``: every table's columns, in order, with DuckDB types.

This module is the one home of the column lists. The code that produces a table's rows
imports its list from here (``INSTANCE_COLUMNS`` for the task datasets, ``RUN_COLUMNS`` for
the method runs, ``CLAIM_COLUMNS`` for the verifier, ...), and :mod:`anachron.store.load`
creates every table from its declaration before it inserts the rows, so an empty table keeps
its columns and no type depends on what pandas infers from the data.

Types: ``VARCHAR`` for text, ids and ISO dates (``YYYY-MM-DD``; timestamps ISO-8601 UTC) and
for JSON documents stored as text (``inputs``, ``label``, ``evidence``, ``trace``, the JSON
lists of ``tool_calls``); ``BIGINT`` for counts, indices and token numbers; ``DOUBLE`` for
rates, scores, Shapley values, latencies and interval bounds; ``BOOLEAN`` for flags. A value
the producer did not have is NULL (a rate without a denominator, a failed call's token counts).

Tables (docs/results.md): :data:`TABLES`; view ``main_table`` (:data:`MAIN_TABLE_VIEW`).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

VARCHAR = "VARCHAR"
BIGINT = "BIGINT"
DOUBLE = "DOUBLE"
BOOLEAN = "BOOLEAN"

Columns = tuple[tuple[str, str], ...]


def _names(columns: Columns) -> list[str]:
    return [c for c, _ in columns]


@dataclass(frozen=True)
class Table:
    """One declared table: its name, a one-line description and its ``(column, DuckDB type)`` pairs."""

    name: str
    doc: str
    columns: Columns

    @property
    def names(self) -> list[str]:
        """The column names, in table order."""
        return _names(self.columns)

    def create_sql(self) -> str:
        """The ``CREATE TABLE`` statement of the declared columns."""
        cols = ", ".join(f'"{c}" {t}' for c, t in self.columns)
        return f"CREATE TABLE {self.name} ({cols})"


class ParseStatus(StrEnum):
    """Values of ``parse_status`` (tables ``completions``, ``instance_scores``; docs/methods.md#output),
    set by :func:`anachron.llm.structured.parse_output`, best first.

    Members (stored value: meaning):

    * ``ok``: the whole answer is strict JSON of the output shape, prediction accepted;
    * ``ok_fenced``: the same, found in a Markdown code fence;
    * ``ok_braces``: the same, found between the first ``{`` and the last ``}`` of prose;
    * ``repaired``: no candidate was strict JSON; the ``json_repair`` library fixed slips
      (trailing commas, single quotes, comments, a mismatched bracket) and the result has the
      output shape with an accepted prediction;
    * ``invalid_prediction``: the object has the output shape, the task rejected the prediction's
      value (evidence and reasoning still usable);
    * ``invalid``: a JSON object without the output shape: ``{}``, a required key
      (``evidence``, ``reasoning``, ``prediction`` or a task alias of it) missing, or a field of the
      wrong type (was ``schema_error``); retried once;
    * ``duplicate_keys``: some object of the answer repeats a key, so which value is meant is
      ambiguous; rejected, retried once;
    * ``truncated``: no strict JSON, and the text ends inside a JSON value (an open string or
      bracket): cut off, never repaired into a shorter answer; retried once with a larger token limit;
    * ``not_json``: no JSON object at all (nor a repairable one);
    * ``empty``: no text (the call failed or the model said nothing).
    """

    OK = "ok"
    OK_FENCED = "ok_fenced"
    OK_BRACES = "ok_braces"
    REPAIRED = "repaired"
    INVALID_PREDICTION = "invalid_prediction"
    INVALID = "invalid"
    DUPLICATE_KEYS = "duplicate_keys"
    TRUNCATED = "truncated"
    NOT_JSON = "not_json"
    EMPTY = "empty"


#: Statuses whose prediction is scored (Perf) and that count as parsed (parse rate).
PREDICTION_USABLE = frozenset({ParseStatus.OK, ParseStatus.OK_FENCED, ParseStatus.OK_BRACES, ParseStatus.REPAIRED})
#: Statuses whose evidence and reasoning are scored (OLR, Cov): the prediction-usable ones and
#: ``invalid_prediction``.
EVIDENCE_USABLE = PREDICTION_USABLE | {ParseStatus.INVALID_PREDICTION}
#: Statuses a method asks again once (:func:`anachron.methods.base.complete_and_parse`):
#: ``truncated`` with a larger token limit, ``invalid`` and ``duplicate_keys`` as a new sample.
RETRIED = frozenset({ParseStatus.TRUNCATED, ParseStatus.INVALID, ParseStatus.DUPLICATE_KEYS})

#: Values of ``verdict`` (tables ``claims``, ``planted_claims``; docs/verification.md#verdict): only
#: ``leaked`` has ``leaked`` True; ``undated`` (no usable date) and ``ambiguous`` (a date interval
#: that straddles the cutoff) are counted apart and counted as leaked by the strict OLR.
VERDICT_LEAKED = "leaked"
VERDICT_CLEAN = "clean"
VERDICT_UNDATED = "undated"
VERDICT_AMBIGUOUS = "ambiguous"
VERDICTS = (VERDICT_LEAKED, VERDICT_CLEAN, VERDICT_UNDATED, VERDICT_AMBIGUOUS)

#: Run keys every per-run table starts with.
_RUN_KEYS: Columns = (("task", VARCHAR), ("method", VARCHAR), ("model", VARCHAR))

INSTANCES = Table(
    "instances",
    "One point-in-time instance per row (``results/datasets/{task}.parquet``; docs/tasks.md); "
    "``inputs``, ``label`` and ``provenance`` are JSON documents.",
    (
        ("instance_id", VARCHAR),
        ("task", VARCHAR),
        ("split", VARCHAR),
        ("cutoff_date", VARCHAR),
        ("inputs", VARCHAR),
        ("label", VARCHAR),
        ("provenance", VARCHAR),
        ("input_audit", VARCHAR),
    ),
)

RUNS = Table(
    "runs",
    "One row per task x method x model run: its metadata JSON (``results/runs/.../{model}.meta.json``), "
    "columns in the JSON's (sorted) key order.",
    (
        ("code_version", VARCHAR),
        ("config_hash", VARCHAR),
        ("endpoint", VARCHAR),
        ("failed_share", DOUBLE),
        ("finished_at", VARCHAR),
        ("first_error", VARCHAR),
        ("knowledge_cutoff", VARCHAR),
        ("method", VARCHAR),
        ("model", VARCHAR),
        ("model_id", VARCHAR),
        ("n_attempts", BIGINT),
        ("n_cache_hits", BIGINT),
        ("n_failed_calls", BIGINT),
        ("n_failed_instances", BIGINT),
        ("n_instances", BIGINT),
        ("n_llm_calls", BIGINT),
        ("n_tool_calls", BIGINT),
        ("n_uncached_calls", BIGINT),
        ("parse_ok", BIGINT),
        ("retry_token", VARCHAR),
        ("started_at", VARCHAR),
        ("task", VARCHAR),
    ),
)

#: Fields of one LLM call record (:class:`anachron.llm.client.CallLog`), in order.
_CALL_LOG: Columns = (
    ("call_id", VARCHAR),
    ("cache_key", VARCHAR),
    ("model_name", VARCHAR),
    ("model", VARCHAR),
    ("provider", VARCHAR),
    ("sample_index", BIGINT),
    ("prompt_tokens", BIGINT),
    ("completion_tokens", BIGINT),
    ("latency_s", DOUBLE),
    ("cache_hit", BOOLEAN),
    ("attempts", BIGINT),
    ("error", VARCHAR),
    ("finish_reason", VARCHAR),
    ("started_at", VARCHAR),
)

LLM_CALLS = Table(
    "llm_calls",
    "One row per LLM call, cache hits included: the run's, the verifier's and the Shapley value calls. "
    "``model_key`` is the configured model name; the call record's fields follow, then the request tags "
    "(``instance_id``, ``step``; the plausibility verifier's ``cutoff_date`` and ``n_items``; ``retry``: the parse "
    "status that made this call a retry of the step, null for a first call). ``cost_usd``: what the call's prompt and "
    "completion tokens cost at the configured price of ``model_name`` (config key ``prices``; :mod:`anachron.cost`), "
    "also for cache hits; NULL when the model has no price or a token count is unknown.",
    (
        ("task", VARCHAR),
        ("method", VARCHAR),
        ("model_key", VARCHAR),
        *_CALL_LOG,
        ("instance_id", VARCHAR),
        ("step", VARCHAR),
        ("cutoff_date", VARCHAR),
        ("n_items", BIGINT),
        ("retry", VARCHAR),
        ("cost_usd", DOUBLE),
    ),
)

COMPLETIONS = Table(
    "completions",
    "One row per instance of a run (``results/runs/{task}/{method}/{model}.parquet``): the final "
    "completion, its parse, evidence / prediction / trace as JSON.",
    (
        ("instance_id", VARCHAR),
        *_RUN_KEYS,
        ("split", VARCHAR),
        ("cutoff_date", VARCHAR),
        ("completion", VARCHAR),
        ("finish_reason", VARCHAR),
        ("llm_error", VARCHAR),
        ("parse_status", VARCHAR),
        ("parse_error", VARCHAR),
        ("evidence", VARCHAR),
        ("n_evidence_dropped", BIGINT),
        ("reasoning", VARCHAR),
        ("prediction", VARCHAR),
        ("n_llm_calls", BIGINT),
        ("trace", VARCHAR),
    ),
)

CLAIMS = Table(
    "claims",
    "One row per claim of a usable completion with the verifier's verdict (docs/verification.md).",
    (
        *_RUN_KEYS,
        ("instance_id", VARCHAR),
        ("claim_id", VARCHAR),
        ("source", VARCHAR),
        ("evidence_id", BIGINT),
        ("fact", VARCHAR),
        ("declared_date_raw", VARCHAR),
        ("declared_date", VARCHAR),
        ("date_status", VARCHAR),
        ("date_rule", VARCHAR),
        ("effective_date", VARCHAR),
        ("cutoff_date", VARCHAR),
        ("category", VARCHAR),
        ("category_rule", VARCHAR),
        ("extractor", VARCHAR),
        ("leaked", BOOLEAN),
        ("verdict", VARCHAR),
        ("layer", VARCHAR),
        ("reason", VARCHAR),
        ("cited", BOOLEAN),
        ("declared_only", BOOLEAN),
    ),
)

TOOL_CALLS = Table(
    "tool_calls",
    "One row per search call of a retrieval method; ``returned``, ``consumed``, ``after_cutoff``, "
    "``entity_docs``, ``invalid_entities`` and ``restatements`` are JSON lists of document ids / entities; "
    "``flag_reason`` says in words why the call is flagged (NULL when it is not) "
    "(:func:`anachron.metrics.traces.score_call`).",
    (
        *_RUN_KEYS,
        ("instance_id", VARCHAR),
        ("seq", BIGINT),
        ("query", VARCHAR),
        ("mode", VARCHAR),
        ("cutoff_date", VARCHAR),
        ("returned", VARCHAR),
        ("consumed", VARCHAR),
        ("after_cutoff", VARCHAR),
        ("invalid_entities", VARCHAR),
        ("restatements", VARCHAR),
        ("query_intent_after_cutoff", BOOLEAN),
        ("error", VARCHAR),
        ("entity_docs", VARCHAR),
        ("flag_reason", VARCHAR),
    ),
)

INSTANCE_SCORES = Table(
    "instance_scores",
    "Per-instance OLR (and strict OLR), Perf, Cov and parse status of a run, with the claim counts by verdict "
    "(:func:`anachron.metrics.core.instance_scores`).",
    (
        *_RUN_KEYS,
        ("split", VARCHAR),
        ("instance_id", VARCHAR),
        ("parse_status", VARCHAR),
        ("parsed", BOOLEAN),
        ("n_claims", BIGINT),
        ("n_leaked", BIGINT),
        ("n_undated", BIGINT),
        ("n_ambiguous", BIGINT),
        ("n_declared_only", BIGINT),
        ("n_reasoning_claims", BIGINT),
        ("n_reasoning_leaked", BIGINT),
        ("olr", DOUBLE),
        ("olr_strict", DOUBLE),
        ("perf", DOUBLE),
        ("n_evidence", BIGINT),
        ("n_cited", BIGINT),
        ("cov", DOUBLE),
    ),
)

TRACE_SCORES = Table(
    "trace_scores",
    "Per-instance TCLR, survivorship, restatement and query intent of a retrieval run "
    "(:func:`anachron.metrics.traces.trace_instance_scores`).",
    (
        *_RUN_KEYS,
        ("split", VARCHAR),
        ("instance_id", VARCHAR),
        ("n_calls", BIGINT),
        ("n_errors", BIGINT),
        ("n_entity_calls", BIGINT),
        ("tclr", DOUBLE),
        ("survivorship", DOUBLE),
        ("restatement", DOUBLE),
        ("query_intent", DOUBLE),
    ),
)

CLAIM_SHAPLEY = Table(
    "claim_shapley",
    "The Shapley value φ of every attributed claim and its rank by |φ| (:mod:`anachron.attribution.shapley`).",
    (
        *_RUN_KEYS,
        ("split", VARCHAR),
        ("instance_id", VARCHAR),
        ("claim_id", VARCHAR),
        ("source", VARCHAR),
        ("fact", VARCHAR),
        ("leaked", BOOLEAN),
        ("phi", DOUBLE),
        ("abs_rank", BIGINT),
    ),
)

SHAPLEY = Table(
    "shapley",
    "Per attributed instance: Shapley-DCLR, Top-1/3/5, the estimator, model calls and budget.",
    (
        *_RUN_KEYS,
        ("split", VARCHAR),
        ("instance_id", VARCHAR),
        ("n_claims", BIGINT),
        ("n_leaked", BIGINT),
        ("estimator", VARCHAR),
        ("n_calls", BIGINT),
        ("budget", BIGINT),
        ("n_failed", BIGINT),
        ("v_empty", DOUBLE),
        ("v_all", DOUBLE),
        ("dclr", DOUBLE),
        ("top1", DOUBLE),
        ("top3", DOUBLE),
        ("top5", DOUBLE),
        ("exact_mae", DOUBLE),
    ),
)

CLEAN_SCORES = Table(
    "clean_scores",
    "Leakage-adjusted Perf per answer (:mod:`anachron.attribution.clean`; docs/metrics.md#leakage-adjusted-perf): "
    "the prediction asked again in the closed world without the leaked (strictly: not verified clean) evidence. "
    "``status``: unparsed, kept (no such claim: perf_clean = perf), asked, empty_evidence (asked with no fact), "
    "invalid_answer.",
    (
        *_RUN_KEYS,
        ("split", VARCHAR),
        ("instance_id", VARCHAR),
        ("n_evidence", BIGINT),
        ("n_leaked", BIGINT),
        ("n_strict", BIGINT),
        ("n_kept", BIGINT),
        ("n_kept_strict", BIGINT),
        ("perf", DOUBLE),
        ("perf_clean", DOUBLE),
        ("perf_clean_strict", DOUBLE),
        ("status", VARCHAR),
        ("status_strict", VARCHAR),
    ),
)

PROBE_SCORES = Table(
    "probe_scores",
    "One row per instance of a probe run, paired with the method's own answer (rule score_probe; "
    "docs/metrics.md#probes). ``method`` is the probed method, ``probe`` neutered or date_shift; ``status``: paired, "
    "skipped (the probe could not be built: ``reason``), not_sampled (no answer of the method itself). "
    "``reidentified``: the neutered answer names a real entity (``reid_forms``); ``prediction_changed``: the "
    "date-shifted answer's prediction differs from the method's.",
    (
        *_RUN_KEYS,
        ("probe", VARCHAR),
        ("split", VARCHAR),
        ("instance_id", VARCHAR),
        ("status", VARCHAR),
        ("reason", VARCHAR),
        ("cutoff_date", VARCHAR),
        ("probe_cutoff_date", VARCHAR),
        ("parsed", BOOLEAN),
        ("parsed_probe", BOOLEAN),
        ("perf", DOUBLE),
        ("perf_probe", DOUBLE),
        ("olr", DOUBLE),
        ("olr_probe", DOUBLE),
        ("prediction_changed", BOOLEAN),
        ("reidentified", BOOLEAN),
        ("reid_forms", VARCHAR),
    ),
)

CALIBRATION = Table(
    "calibration",
    "Verifier recall / false-positive rate on planted claims per task, layer set, kind and style, "
    "with Wilson 95% intervals (:func:`anachron.verify.calibration.summarize_calibration`).",
    (
        ("task", VARCHAR),
        ("layers", VARCHAR),
        ("kind", VARCHAR),
        ("style", VARCHAR),
        ("metric", VARCHAR),
        ("n", BIGINT),
        ("n_flagged", BIGINT),
        ("n_undated", BIGINT),
        ("n_ambiguous", BIGINT),
        ("n_declared_only", BIGINT),
        ("rate", DOUBLE),
        ("ci_low", DOUBLE),
        ("ci_high", DOUBLE),
    ),
)

#: Columns of a planted claim (:func:`anachron.verify.calibration.plant_claims`).
_PLANTED: Columns = (
    ("task", VARCHAR),
    ("instance_id", VARCHAR),
    ("cutoff_date", VARCHAR),
    ("fact", VARCHAR),
    ("declared_date_raw", VARCHAR),
    ("kind", VARCHAR),
    ("style", VARCHAR),
    ("truth_leaked", BOOLEAN),
    ("truth_date", VARCHAR),
)

PLANTED_CLAIMS = Table(
    "planted_claims",
    "The planted claims, one block of rows per layer set, with the verifier's answer "
    "(:func:`anachron.verify.calibration.verify_planted`).",
    (
        *_PLANTED,
        ("layers", VARCHAR),
        ("leaked", BOOLEAN),
        ("verdict", VARCHAR),
        ("layer", VARCHAR),
        ("reason", VARCHAR),
        ("effective_date", VARCHAR),
        ("declared_only", BOOLEAN),
        ("flagged", BOOLEAN),
        ("correct", BOOLEAN),
    ),
)

METRICS = Table(
    "metrics",
    "Every aggregate per task x method x model x split with its bootstrap CI and n: OLR and strict OLR, Perf, "
    "Cov, parse, undated, ambiguous and declared-only rates, the trace metrics and Shapley-DCLR / Top-K "
    "(docs/metrics.md).",
    (
        *_RUN_KEYS,
        ("split", VARCHAR),
        ("metric", VARCHAR),
        ("value", DOUBLE),
        ("ci_low", DOUBLE),
        ("ci_high", DOUBLE),
        ("n", BIGINT),
    ),
)

TRAINING_LOG = Table(
    "training_log",
    "TEMPO training, one row per (model, task, step) (rule train_tempo; docs/methods.md#tempo): the step's reward "
    "statistics (groups, fraction in performance mode, mean strict leak count, mean and sd of the reward, parse "
    "failures and near misses), the trainer's loss / KL / learning rate, and at validation steps the greedy validation OLR, strict "
    "OLR, Perf, Cov and parse rate (step 0: the base model). ``checkpoint`` is 'base', or 'best' where the adapter "
    "kept as best was saved.",
    (
        ("model", VARCHAR),
        ("task", VARCHAR),
        ("step", BIGINT),
        ("n_groups", BIGINT),
        ("n_failed_groups", BIGINT),
        ("perf_mode_fraction", DOUBLE),
        ("mean_leak", DOUBLE),
        ("mean_reward", DOUBLE),
        ("reward_std", DOUBLE),
        ("parse_fail_rate", DOUBLE),
        ("near_miss_rate", DOUBLE),
        ("no_evidence_rate", DOUBLE),
        ("loss", DOUBLE),
        ("kl", DOUBLE),
        ("learning_rate", DOUBLE),
        ("val_n", BIGINT),
        ("val_olr", DOUBLE),
        ("val_olr_strict", DOUBLE),
        ("val_perf", DOUBLE),
        ("val_cov", DOUBLE),
        ("val_parse_rate", DOUBLE),
        ("val_mean_leak", DOUBLE),
        ("checkpoint", VARCHAR),
        ("wall_s", DOUBLE),
    ),
)

#: Every table of ``results.duckdb``, in creation order.
SCHEMA: dict[str, Table] = {
    t.name: t
    for t in (
        INSTANCES,
        RUNS,
        LLM_CALLS,
        COMPLETIONS,
        CLAIMS,
        TOOL_CALLS,
        INSTANCE_SCORES,
        TRACE_SCORES,
        CLAIM_SHAPLEY,
        SHAPLEY,
        CLEAN_SCORES,
        PROBE_SCORES,
        CALIBRATION,
        PLANTED_CLAIMS,
        TRAINING_LOG,
        METRICS,
    )
}
TABLES = tuple(SCHEMA)

# The column lists the producers import.
#: The input audit's column of the instance table: a JSON list of findings, ``[]`` when clean
#: (:mod:`anachron.tasks.audit`, docs/tasks.md#input-audit).
AUDIT_COLUMN = "input_audit"
#: Columns every task's dataset builder returns (docs/tasks.md#instances); the stored instance
#: table adds :data:`AUDIT_COLUMN`.
INSTANCE_COLUMNS = [c for c in INSTANCES.names if c != AUDIT_COLUMN]
#: Keys of a run's metadata JSON (one ``runs`` row).
RUN_META_COLUMNS = RUNS.names
#: Fields of a :class:`~anachron.llm.client.CallLog` record, in order; tag fields follow.
CALL_LOG_COLUMNS = _names(_CALL_LOG)
#: A method run's rows (``results/runs/{task}/{method}/{model}.parquet``; table ``completions``).
RUN_COLUMNS = COMPLETIONS.names
CLAIM_COLUMNS = CLAIMS.names
#: One row per search call (the ``tool_calls`` table). JSON-list columns are JSON strings.
TOOL_CALL_COLUMNS = TOOL_CALLS.names
SCORE_COLUMNS = INSTANCE_SCORES.names
TRACE_SCORE_COLUMNS = TRACE_SCORES.names
PHI_COLUMNS = CLAIM_SHAPLEY.names
SHAPLEY_COLUMNS = SHAPLEY.names
CLEAN_SCORE_COLUMNS = CLEAN_SCORES.names
PROBE_SCORE_COLUMNS = PROBE_SCORES.names
CALIBRATION_COLUMNS = CALIBRATION.names
PLANTED_COLUMNS = _names(_PLANTED)
METRIC_COLUMNS = METRICS.names

#: The SELECT of the ``main_table`` view: the ``metrics`` rows of OLR, strict OLR, declared-only
#: rate, Perf, perf_clean, perf_leak_share, Cov and parse rate side by side, one row per task x
#: method x model x split (the report tables :mod:`anachron.report.tables.main` and ``control``
#: select from it too). Probe runs (method ``<method>@<probe>``) are left out: their numbers are the
#: probes table's (:mod:`anachron.report.tables.probes`).
MAIN_TABLE_SELECT = """
SELECT task, method, model, split,
       max(n) FILTER (WHERE metric = 'parse_rate') AS n,
       max(value) FILTER (WHERE metric = 'olr') AS olr,
       max(ci_low) FILTER (WHERE metric = 'olr') AS olr_ci_low,
       max(ci_high) FILTER (WHERE metric = 'olr') AS olr_ci_high,
       max(n) FILTER (WHERE metric = 'olr') AS olr_n,
       max(value) FILTER (WHERE metric = 'olr_strict') AS olr_strict,
       max(ci_low) FILTER (WHERE metric = 'olr_strict') AS olr_strict_ci_low,
       max(ci_high) FILTER (WHERE metric = 'olr_strict') AS olr_strict_ci_high,
       max(value) FILTER (WHERE metric = 'declared_only_rate') AS declared_only_rate,
       max(ci_low) FILTER (WHERE metric = 'declared_only_rate') AS declared_only_rate_ci_low,
       max(ci_high) FILTER (WHERE metric = 'declared_only_rate') AS declared_only_rate_ci_high,
       max(value) FILTER (WHERE metric = 'perf') AS perf,
       max(ci_low) FILTER (WHERE metric = 'perf') AS perf_ci_low,
       max(ci_high) FILTER (WHERE metric = 'perf') AS perf_ci_high,
       max(n) FILTER (WHERE metric = 'perf') AS perf_n,
       max(value) FILTER (WHERE metric = 'perf_clean') AS perf_clean,
       max(ci_low) FILTER (WHERE metric = 'perf_clean') AS perf_clean_ci_low,
       max(ci_high) FILTER (WHERE metric = 'perf_clean') AS perf_clean_ci_high,
       max(n) FILTER (WHERE metric = 'perf_clean') AS perf_clean_n,
       max(value) FILTER (WHERE metric = 'perf_leak_share') AS perf_leak_share,
       max(ci_low) FILTER (WHERE metric = 'perf_leak_share') AS perf_leak_share_ci_low,
       max(ci_high) FILTER (WHERE metric = 'perf_leak_share') AS perf_leak_share_ci_high,
       max(value) FILTER (WHERE metric = 'cov') AS cov,
       max(value) FILTER (WHERE metric = 'parse_rate') AS parse_rate,
       max(value) FILTER (WHERE metric = 'undated_rate') AS undated_rate,
       max(value) FILTER (WHERE metric = 'ambiguous_rate') AS ambiguous_rate
FROM metrics
WHERE method NOT LIKE '%@%'
GROUP BY task, method, model, split
ORDER BY task, method, model, split
"""
MAIN_TABLE_VIEW = "CREATE VIEW main_table AS" + MAIN_TABLE_SELECT
#: Columns of a TEMPO training log (``results/training/{model}/{task}/log.parquet``).
TRAINING_LOG_COLUMNS = TRAINING_LOG.names
