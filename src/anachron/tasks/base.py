"""The task interface and the three-step prompt every method shares.

A task turns one instance (a row of ``results/datasets/{task}.parquet``) into a
system/user prompt pair, a JSON schema for the ``prediction`` field, a validator
for the model's prediction, and a Perf score against the label.

The prompt structure follows the TEMPO paper (App. I.1): a strict temporal
constraint anchored to the cutoff date, an evidence-integrity rule, and three
steps (dated evidence, reasoning citing evidence by number, prediction). The
wording is the project's own.

A task is a package ``anachron/tasks/<name>/`` whose :class:`Task` subclass owns
everything about it; the generic code (the workflow's input functions, the dataset
build and checks, the claim categoriser, the grounded verifier, calibration and RAG)
calls the hooks below through :mod:`anachron.tasks.registry` and never branches on a
task's name. Every hook but the four abstract methods has a default, so a new task
implements only what it has:

===========================================  ====================================================================
hook                                         used by
===========================================  ====================================================================
``check_config(block)``                      :func:`anachron.config.validate_config` (cross-checks)
``sources``                                  the fetch_source sources its dataset is built from
``dataset_inputs()``                         rule build_dataset's inputs (rules/common.smk)
``build(tables, ...)``                       :func:`anachron.tasks.build.build_task_dataset`
``overlap_problems(df)``                     :func:`anachron.tasks.checks.check_instances`
``describe(inputs)``                         the LLM claim extractor's prompt
``outcome_rule(text, ctx)``                  :func:`anachron.verify.categorize.categorize` (A4)
``outcome_nouns``, ``is_consequence``        :func:`anachron.verify.categorize.categorize` (A5)
``grounding_inputs(edgar=)``                 rules verify_claims and calibrate_verifier's inputs
``make_grounding(inputs)``                   rules verify_claims, calibrate_verifier, train_tempo (grounded layer)
``planter(...)``                             :func:`anachron.verify.calibration.plant.plant_claims` (calibration)
``rag_query_counts``, ``rag_query_aspects``  :mod:`anachron.methods.rag` (query count, fallback queries)
``neuter(row)``, ``data_begins``,            the probes (:mod:`anachron.tasks.probes`): entity neutering, date shift
``input_dates(row)``
===========================================  ====================================================================
"""

from __future__ import annotations

import json
import math
import os
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any, ClassVar, Mapping

import pandas as pd

from anachron.sources.paths import source_inputs
from anachron.tasks.neutering import Neutering, ProbeSkip
from anachron.verify.task_rules import generic_description
from anachron.tables import INSTANCE_COLUMNS  # noqa: F401 (the instance table's columns, docs/tasks.md)

if TYPE_CHECKING:  # pragma: no cover - typing only
    import numpy as np

    from anachron.verify.layers.grounded import Grounding
    from anachron.verify.calibration.planting import Planter, PlantInstance

#: Fallback RAG query templates of a task ("{s}": a subject of the instance, "{y}": the cutoff year).
DEFAULT_QUERY_ASPECTS = (
    "{s} {y}",
    "{s} news {y}",
    "{s} analysis {y}",
    "{s} background {y}",
    "{s} record {y}",
    "{s} developments {y}",
)


def instance_inputs(row: pd.Series | dict[str, Any]) -> dict[str, Any]:
    """Decode the ``inputs`` JSON of an instance row."""
    return json.loads(row["inputs"])


def instance_label(row: pd.Series | dict[str, Any]) -> dict[str, Any]:
    """Decode the ``label`` JSON of an instance row."""
    return json.loads(row["label"])


def three_step_system_prompt(*, role: str, goal: str, cutoff_date: str, date_hint: str, prediction_spec: str) -> str:
    """Build the shared system prompt.

    Args:
        role: who the model plays ("an equity analyst").
        goal: one sentence on what to predict.
        cutoff_date: ISO date; information dated after it must not be used.
        date_hint: task-specific guidance on which date is the announcement date.
        prediction_spec: what the ``prediction`` field must hold.
    """
    return (
        f"You are {role}. {goal}\n\n"
        f"TIME LIMIT ON KNOWLEDGE: you are working on {cutoff_date}. Use only information that was public "
        f"on or before {cutoff_date}. Anything reported, announced, traded or decided after {cutoff_date} "
        "is off limits, even if you happen to know it. When you cannot tell whether something was public by "
        "then, leave it out.\n\n"
        "HONEST EVIDENCE: every fact must be real. Never invent figures, dates or events; if you are unsure "
        "of an exact number, describe the fact without the number.\n\n"
        "Work in three steps.\n"
        "1. EVIDENCE: list the concrete facts you rely on, numbered from 1. Give each a source_date "
        "(YYYY-MM-DD): the day the fact first became public (press release, filing, report), not the end "
        f"of the period it describes. {date_hint}\n"
        "2. REASONING: one paragraph that cites every evidence item by its number in brackets, e.g. [1], "
        "right where it is used. Add no facts that are not in the evidence list.\n"
        f"3. PREDICTION: {prediction_spec}\n\n"
        'Answer with one JSON object and nothing else: {"evidence": [{"id": 1, "fact": "...", '
        '"source_date": "YYYY-MM-DD"}], "reasoning": "...", "prediction": ...}'
    )


def validate_probability(prediction: Any) -> float:
    """A probability in [0, 1] from a model's prediction (a number or a numeric string).

    Raises:
        ValueError: for booleans, None, non-numbers, NaN/inf, or values outside [0, 1] (the local
            model's grammar enforces the range, an OpenAI-compatible endpoint may not).
    """
    if isinstance(prediction, bool) or prediction is None:
        raise ValueError(f"probability must be a number, got {prediction!r}")
    if isinstance(prediction, str):
        try:
            prediction = float(prediction.strip())
        except ValueError as exc:
            raise ValueError(f"probability must be a number, got {prediction!r}") from exc
    try:
        p = float(prediction)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"probability must be a number, got {type(prediction).__name__}") from exc
    if not math.isfinite(p) or not 0.0 <= p <= 1.0:
        raise ValueError(f"probability must be in [0, 1], got {prediction!r}")
    return p


def brier_perf(probability: float, outcome: int | float | bool) -> float:
    """Perf of a probability for a binary outcome: ``1 - (p - y)^2`` (1 - Brier score), in [0, 1].

    docs/metrics.md#perf; TEMPO paper App. B.3.

    Raises:
        ValueError: for p outside [0, 1] or not finite, or y not 0/1.
    """
    p = validate_probability(probability)
    y = float(outcome)
    if y not in (0.0, 1.0):
        raise ValueError(f"outcome must be 0 or 1, got {outcome!r}")
    return 1.0 - (p - y) ** 2


class Task(ABC):
    """One prediction task (docs/tasks.md). Subclasses are stateless.

    The four abstract methods define prompting and scoring; the other hooks (see the module
    docstring) default to "nothing task-specific": no dataset inputs, no overlap check, no
    outcome rule, no grounded check, no planter, the default RAG query settings.
    """

    name: ClassVar[str]
    #: Other JSON keys a model may use for the prediction (accepted by the parser).
    prediction_aliases: ClassVar[tuple[str, ...]] = ()
    #: Sources (``anachron.sources.registry.SOURCES`` names) the dataset is built from; each
    #: becomes a ``tables`` entry of :meth:`build` (and its manifest a ``<name>_manifest`` input).
    sources: ClassVar[tuple[str, ...]] = ()
    #: Nouns naming this task's outcome, a regex alternation ("ruling|decision"): "following the
    #: <noun>" / "praised the <noun>" make a claim a consequence of the outcome (A5).
    outcome_nouns: ClassVar[str] = "outcome"
    #: RAG: ``(min, max)`` number of model-written search queries (TEMPO App. F.2 / I.2).
    rag_query_counts: ClassVar[tuple[int, int]] = (3, 6)
    #: RAG: fallback query templates, tried aspect by aspect over the instance's subjects.
    rag_query_aspects: ClassVar[tuple[str, ...]] = DEFAULT_QUERY_ASPECTS
    #: How the cutoff is chosen: the day before the outcome could first be known (docs/tasks.md);
    #: a label's own ``cutoff_rule`` key, where a task sets one, says it per instance.
    cutoff_rule: ClassVar[str] = "the day before the outcome could first be known"
    #: Input keys holding text others wrote (a case's facts, a question's background): the input
    #: audit reads them as evidence (:mod:`anachron.tasks.audit`). Default: none.
    audit_fields: ClassVar[tuple[str, ...]] = ()
    #: The first day the task's records cover (ISO date): the date-shift probe skips an instance whose
    #: moved cutoff falls before it (``shift_before_data``), where the grounded checks could not date a
    #: claim. None: no limit.
    data_begins: ClassVar[str | None] = None
    #: JSON Schema of the task's config block ``tasks.<name>``; None: its package's ``CONFIG_SCHEMA``
    #: (:func:`anachron.tasks.registry.task_config_schema`), or no settings.
    config_schema: ClassVar[dict[str, Any] | None] = None

    @abstractmethod
    def messages(self, row: pd.Series | dict[str, Any]) -> list[dict[str, str]]:
        """System and user messages for one instance."""

    @abstractmethod
    def prediction_schema(self, row: pd.Series | dict[str, Any]) -> dict[str, Any]:
        """JSON Schema of the ``prediction`` field for this instance."""

    @abstractmethod
    def validate_prediction(self, row: pd.Series | dict[str, Any], prediction: Any) -> Any:
        """Return the cleaned prediction; raise ``ValueError`` when it is unusable."""

    @abstractmethod
    def perf(self, row: pd.Series | dict[str, Any], prediction: Any) -> float:
        """Task performance in [0, 1] of a validated prediction against the label."""

    def entities(self, row: pd.Series | dict[str, Any]) -> dict[str, list[str]]:
        """Names that identify the instance's subjects (used by grounded verification)."""
        return {}

    def grounding_context(self, row: pd.Series | dict[str, Any]) -> dict[str, Any]:
        """What the grounded verifier layer needs to know about an instance (cutoff at least)."""
        return {"cutoff_date": row["cutoff_date"], **self.entities(row)}

    def input_dates(self, row: pd.Series | dict[str, Any]) -> list[str]:
        """ISO dates of the observations the prompt shows as data (a value "on 2024-07-12"), not as
        targets (a period to predict): the date-shift probe skips an instance whose moved cutoff falls
        before one of them (``shift_before_data``), since its prompt would show data from after
        "today". Default: none."""
        return []

    def neuter(self, row: pd.Series | dict[str, Any]) -> Neutering:
        """The instance with its entities anonymised, for the entity-neutered probe
        (:class:`~anachron.tasks.neutering.Neutering`; docs/metrics.md#probes).

        Raises:
            ProbeSkip: the instance cannot be neutered (its reason is recorded per instance);
                by default every instance: ``no_anonymiser``.
        """
        raise ProbeSkip("no_anonymiser", f"task {self.name!r} has no anonymiser")

    # -- dataset ---------------------------------------------------------------------------

    def check_config(self, task_config: dict[str, Any]) -> None:
        """Cross-checks of the task's validated config block (``tasks.<name>``) that the schema
        cannot express; called by :func:`anachron.config.validate_config`. Default: none.

        Raises:
            ConfigError: naming the offending key (``tasks.<name>...``).
        """

    def dataset_inputs(self) -> dict[str, str]:
        """Raw files rule build_dataset reads, by name (workflow-relative paths).

        Default: the table and manifest of every source in :attr:`sources`
        (``{"nba": "data/raw/nba/data.parquet", "nba_manifest": ".../manifest.json"}``).
        Names ending in ``_manifest`` are JSON manifests; every other file is a Parquet table.
        """
        return source_inputs(self.sources)

    def build(
        self, tables: Mapping[str, pd.DataFrame], task_config: dict[str, Any], *, knowledge_cutoffs: dict[str, str]
    ) -> tuple[pd.DataFrame, pd.DataFrame]:
        """Build the instance table; returns ``(instances, exclusions)``.

        Args:
            tables: every non-manifest input of :meth:`dataset_inputs`, read from Parquet.
            task_config: the task's block of the validated config (``tasks.<name>``).
            knowledge_cutoffs: model name -> ISO knowledge cutoff of every configured model.

        Returns:
            ``instances`` with :data:`INSTANCE_COLUMNS`; ``exclusions``, one row per dropped
            record (a ``reason`` column is counted in the manifest).

        Raises:
            NotImplementedError: the task has no dataset builder.
        """
        raise NotImplementedError(f"task {self.name!r} has no dataset builder")

    def overlap_problems(self, instances: pd.DataFrame) -> list[str]:
        """Task-specific train/eval overlap violations of an instance table (default: none)."""
        return []

    def audit_across(self, instances: pd.DataFrame) -> list[dict[str, Any]]:
        """Input-audit findings across instances (one dict per finding, with the keys of
        :data:`anachron.tasks.audit.AUDIT_COLUMNS`), such as an outcome stated in another
        instance's input available at the same cutoff. Default: none."""
        return []

    # -- claims ----------------------------------------------------------------------------

    def describe(self, inputs: dict[str, Any]) -> tuple[str, str]:
        """``(task_description, target_event)`` for the LLM claim extractor's prompt, from the
        instance's decoded ``inputs`` only (what the generator saw; never the label)."""
        return generic_description(self.name)

    def outcome_rule(self, text: str, context: Mapping[str, Any]) -> str | None:
        """The ``A4:<task>:...`` rule when claim ``text`` states this instance's own outcome, else None.

        ``context`` is :meth:`grounding_context` plus ``{"task": <this task>}``. Default: no A4 rule.
        """
        return None

    def is_consequence(self, text: str, context: Mapping[str, Any]) -> bool:
        """Whether a claim that the generic A5 patterns matched ("following the ruling, ...")
        follows from this instance's outcome, not from another one (a lower court's ruling, a
        previous team's contract). Default: True."""
        return True

    # -- verification ----------------------------------------------------------------------

    def grounding_inputs(self, *, edgar: bool) -> dict[str, str]:
        """Point-in-time data files the grounded checks read, by name (workflow-relative paths).

        ``edgar``: whether EDGAR company facts are enabled (config ``sources.edgar``).
        Default: none. Calibration plants from the union of the configured tasks' files.
        """
        return {}

    def make_grounding(self, inputs: Mapping[str, str | os.PathLike[str]]) -> Grounding | None:
        """The grounded checks (``check(fact, context) -> GroundedVerdict | None``) built from
        the files of :meth:`grounding_inputs` (a missing file drops its check); None: none."""
        return None

    def has_planter(self) -> bool:
        """Whether the task plants calibration claims (overrides :meth:`planter`); a task that does not
        is left out of the verifier's calibration (rule calibrate_verifier logs it)."""
        return type(self).planter is not Task.planter

    def planter(
        self,
        instances: list[PlantInstance],
        data: Mapping[str, pd.DataFrame],
        rng: np.random.Generator,
        frames: list[str],
        *,
        all_instances: pd.DataFrame,
    ) -> Planter | None:
        """The calibration planter of claims of known truth (:class:`anachron.verify.calibration.planting.Planter`).

        Args:
            instances: the eval and control instances to plant on.
            data: the point-in-time tables of the configured tasks' :meth:`grounding_inputs`.
            rng: the planting's random generator; frames: real evidence openers to reuse.
            all_instances: the whole dataset (a pool of other contracts, decisions, ...).

        Returns:
            A planter, or None when the task plants nothing (calibration then rejects it).
        """
        return None


class ProbabilityTask(Task):
    """A task whose prediction is a probability in [0, 1] scored by :func:`brier_perf`."""

    def prediction_schema(self, row: pd.Series | dict[str, Any]) -> dict[str, Any]:
        # the local grammar holds it to [0, 1] (schema_to_gbnf); validate_prediction checks the range for every provider.
        return {"type": "number", "minimum": 0, "maximum": 1}

    def validate_prediction(self, row: pd.Series | dict[str, Any], prediction: Any) -> float:
        return validate_probability(prediction)
