"""The task interface and the three-step prompt every method shares.

A task turns one instance (a row of ``results/datasets/{task}.parquet``) into a
system/user prompt pair, a JSON schema for the ``prediction`` field, a validator
for the model's prediction, and a Perf score against the label.

The prompt structure follows the TEMPO paper (App. I.1): a strict temporal
constraint anchored to the cutoff date, an evidence-integrity rule, and three
steps (dated evidence, reasoning citing evidence by number, prediction). The
wording is the project's own.
"""

from __future__ import annotations

import json
import math
from abc import ABC, abstractmethod
from typing import Any, ClassVar

import pandas as pd

from anachron.store.schema import INSTANCE_COLUMNS  # noqa: F401 (the instance table's columns, DESIGN §3)


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
        ValueError: for booleans, None, non-numbers, NaN/inf, or values outside [0, 1]
            (llama.cpp's grammar does not enforce ``minimum``/``maximum``).
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

    DESIGN §3 (legal, forecast); TEMPO paper App. B.3.

    Raises:
        ValueError: for p outside [0, 1] or not finite, or y not 0/1.
    """
    p = validate_probability(probability)
    y = float(outcome)
    if y not in (0.0, 1.0):
        raise ValueError(f"outcome must be 0 or 1, got {outcome!r}")
    return 1.0 - (p - y) ** 2


class Task(ABC):
    """One prediction task (DESIGN §3). Subclasses are stateless."""

    name: ClassVar[str]
    #: Other JSON keys a model may use for the prediction (accepted by the parser).
    prediction_aliases: ClassVar[tuple[str, ...]] = ()

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


class ProbabilityTask(Task):
    """A task whose prediction is a probability in [0, 1] scored by :func:`brier_perf`."""

    def prediction_schema(self, row: pd.Series | dict[str, Any]) -> dict[str, Any]:
        # llama.cpp does not enforce minimum/maximum; validate_prediction checks the range.
        return {"type": "number", "minimum": 0, "maximum": 1}

    def validate_prediction(self, row: pd.Series | dict[str, Any], prediction: Any) -> float:
        return validate_probability(prediction)
