"""``anachron estimate``: the instances, LLM calls, searches, tokens and cost of a config, before it runs.

What is counted, per task x method x model (docs/running.md#estimate):

* **instances**: the config's sample (``run.sample``, ``methods.<m>.sample``, ``run.splits``) drawn
  from the built dataset ``{datasets}/{task}.parquet`` exactly as rule run_method draws it
  (:func:`anachron.methods.runner.sample_instances`). Without a dataset the count comes from the
  config alone: an upper bound (the stock windows' ``n``, or the sample cap per split) or unknown.
* **LLM calls** of the run (stage ``run``), from the method's call pattern
  (:mod:`anachron.methods.pattern`), of the verifier (stage ``verify``: the llm claim extractor and the
  llm layer of rule verify_claims), of the Shapley attributions (stage ``shapley``) and of the
  verifier's calibration (stage ``calibration``, llm layer sets only).
* **searches**: the search calls the run logs as tool calls (at most ``queries_max`` per instance), and
  apart, the searches that date claims (TimeSPEC's supervisor, the verifier's corpus layer).
* **tokens**: prompt tokens measured on the prompts the methods build for the first
  :attr:`Assumptions.sample_rows` sampled instances of each task (characters / :data:`CHARS_PER_TOKEN`
  plus :data:`MESSAGE_TOKENS` per message; what the model will have written is stood in for by
  :func:`~anachron.methods.pattern.placeholder_facts`); completion tokens: the call's ``max_tokens``
  times :attr:`Assumptions.completion_share` (1: the upper bound).
* **cost**: the tokens at the config's prices (:func:`anachron.cost.model_prices`); unknown (None)
  for a model without a price.

What depends on the models' answers is an :class:`Assumptions` field, printed with the estimate.
After a run, :func:`compare` sets the estimate beside what ``results.duckdb`` recorded.

The package: :mod:`~anachron.estimate.counting` (the instances, calls, tokens and cost of a config:
:func:`estimate`, :func:`summarize`), :mod:`~anachron.estimate.comparison` (after a run, the estimate
beside what ``results.duckdb`` recorded: :func:`actual_usage`, :func:`compare`) and
:mod:`~anachron.estimate.command` (the ``anachron estimate`` subcommand). The names below are
re-exported here.
"""

from __future__ import annotations

from anachron.estimate.command import HELP, add_estimate_parser, cmd_estimate
from anachron.estimate.comparison import actual_usage, compare
from anachron.estimate.counting import (
    CHARS_PER_TOKEN,
    MESSAGE_TOKENS,
    NUMERIC,
    REAL_KINDS,
    STEP_COLUMNS,
    SUMMARY_COLUMNS,
    TEMPLATE_KINDS,
    Assumptions,
    Estimate,
    Instances,
    batched_calls,
    config_instances,
    estimate,
    max_tokens,
    prompt_tokens,
    read_dataset,
    retry_factor,
    run_instances,
    summarize,
    totals,
)

__all__ = [
    "CHARS_PER_TOKEN",
    "HELP",
    "MESSAGE_TOKENS",
    "NUMERIC",
    "REAL_KINDS",
    "STEP_COLUMNS",
    "SUMMARY_COLUMNS",
    "TEMPLATE_KINDS",
    "Assumptions",
    "Estimate",
    "Instances",
    "actual_usage",
    "add_estimate_parser",
    "batched_calls",
    "cmd_estimate",
    "compare",
    "config_instances",
    "estimate",
    "max_tokens",
    "prompt_tokens",
    "read_dataset",
    "retry_factor",
    "run_instances",
    "summarize",
    "totals",
]
