"""The shared JSON output schema and its tolerant parser.

Every method asks the model for one JSON object (docs/methods.md#output)::

    {"evidence": [{"id": int, "fact": str, "source_date": "YYYY-MM-DD"}],
     "reasoning": str,
     "prediction": <task-specific>}

:func:`parse_output` never raises on model text. It decodes the first JSON object of
the answer with :func:`anachron.llm.decode.decode_json` (the whole text, the first fenced
code block, the outermost ``{...}`` span; a ``json_repair`` fix when none is strict JSON and the
text was not cut off), checks that the required keys are there and validates it with pydantic.
The result carries a ``parse_status`` (:class:`~anachron.tables.ParseStatus`, the one
enum of parse outcomes) so that parse failures are counted (parse rate) instead of crashing a run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from anachron.llm.decode import FROM_FENCE, FROM_REPAIR, FROM_SPAN, FROM_WHOLE, decode_json
from anachron.tables import EVIDENCE_USABLE, PREDICTION_USABLE, ParseStatus

#: Parse status of each :func:`~anachron.llm.decode.decode_json` source.
_STATUS_OF_SOURCE = {
    FROM_WHOLE: ParseStatus.OK,
    FROM_FENCE: ParseStatus.OK_FENCED,
    FROM_SPAN: ParseStatus.OK_BRACES,
    FROM_REPAIR: ParseStatus.REPAIRED,
}
#: Top-level keys every answer must have (the ``required`` list of :func:`output_schema`);
#: ``prediction`` may be written under one of the task's aliases.
REQUIRED_KEYS = ("evidence", "reasoning", "prediction")


class EvidenceItem(BaseModel):
    """One evidence item as the model wrote it (declared date unverified)."""

    model_config = ConfigDict(extra="ignore")
    id: int | None = None
    fact: str
    source_date: str | None = None

    @field_validator("fact")
    @classmethod
    def _strip(cls, v: str) -> str:
        v = v.strip()
        if not v:
            raise ValueError("empty fact")
        return v

    @field_validator("source_date", mode="before")
    @classmethod
    def _date_to_str(cls, v: Any) -> str | None:
        if v is None:
            return None
        return str(v).strip() or None


class ModelOutput(BaseModel):
    """The validated shape of a completion, before the task checks ``prediction``."""

    model_config = ConfigDict(extra="ignore")
    evidence: list[EvidenceItem] = Field(default_factory=list)
    reasoning: str = ""
    prediction: Any = None


@dataclass
class ParsedOutput:
    """Result of :func:`parse_output`.

    Attributes:
        status: a :class:`~anachron.tables.ParseStatus` (a ``str``).
        evidence: deduplicated evidence items (lower-cased fact text), in model order,
            renumbered only where the model gave no id.
        reasoning: the reasoning text ("" when unavailable).
        prediction: the task-validated prediction, or None.
        error: a short reason when the prediction is not usable.
        n_dropped: evidence items removed as repeats or placeholders.
    """

    status: ParseStatus
    evidence: list[EvidenceItem] = field(default_factory=list)
    reasoning: str = ""
    prediction: Any = None
    error: str | None = None
    n_dropped: int = 0

    @property
    def evidence_usable(self) -> bool:
        return self.status in EVIDENCE_USABLE

    @property
    def prediction_usable(self) -> bool:
        return self.status in PREDICTION_USABLE


def is_placeholder(fact: str) -> bool:
    """True for a "fact" with no letter or digit at all ("...", "-", "?"): a template echo, not a claim."""
    return not any(ch.isalnum() for ch in fact)


def dedup_evidence(items: list[EvidenceItem]) -> list[EvidenceItem]:
    """Drop repeated facts (lower-cased, whitespace-normalised; docs/methods.md#output) and placeholders.

    Placeholders (:func:`is_placeholder`) carry no claim to verify; how many were
    dropped is ``len(items) - len(result)`` minus the repeats, reported by
    :func:`parse_output` as ``n_dropped``.
    """
    seen: set[str] = set()
    out: list[EvidenceItem] = []
    for i, item in enumerate(items, start=1):
        norm = " ".join(item.fact.lower().split())
        if norm in seen or is_placeholder(norm):
            continue
        seen.add(norm)
        if item.id is None:
            item = item.model_copy(update={"id": i})
        out.append(item)
    return out


def parse_output(
    text: str | None,
    validate_prediction: Callable[[Any], Any] | None = None,
    aliases: tuple[str, ...] = (),
) -> ParsedOutput:
    """Parse a model's answer into evidence, reasoning and prediction; never raises.

    Args:
        text: the raw completion text (None or blank gives status ``empty``).
        validate_prediction: task hook; returns the cleaned prediction or raises
            ``ValueError`` (status becomes ``invalid_prediction``, evidence kept).
        aliases: other top-level keys accepted for ``prediction`` (e.g. ``ranking``,
            the field name in the TEMPO paper's stock prompt, App. I.1).

    Returns:
        A :class:`ParsedOutput`. Its status, checked in this order (docs/methods.md#output):
        ``empty``; ``duplicate_keys``; ``truncated``; ``not_json``; ``invalid`` (a key of
        :data:`REQUIRED_KEYS` missing, or a field of the wrong type); ``invalid_prediction``;
        else the source of the object (``ok``, ``ok_fenced``, ``ok_braces``, ``repaired``).
    """
    if text is None or not text.strip():
        return ParsedOutput(status=ParseStatus.EMPTY, error="empty completion")
    found = decode_json(text, dict)
    if found.duplicate_keys:
        return ParsedOutput(status=ParseStatus.DUPLICATE_KEYS, error=found.problem)
    if found.truncated:
        return ParsedOutput(status=ParseStatus.TRUNCATED, error=found.problem)
    if found.value is None:
        return ParsedOutput(status=ParseStatus.NOT_JSON, error="no JSON object found")
    decoded, status = found.value, _STATUS_OF_SOURCE[found.source]
    if decoded.get("prediction") is None:
        for key in aliases:
            if key in decoded:
                decoded["prediction"] = decoded[key]
                break
    missing = [k for k in REQUIRED_KEYS if k not in decoded]
    if missing:
        return ParsedOutput(status=ParseStatus.INVALID, error=f"missing required key(s): {', '.join(missing)}")
    try:
        model = ModelOutput.model_validate(decoded)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first.get("loc", ()))
        return ParsedOutput(status=ParseStatus.INVALID, error=f"{loc}: {first.get('msg')}")
    evidence = dedup_evidence(model.evidence)
    dropped = len(model.evidence) - len(evidence)
    if validate_prediction is None:
        return ParsedOutput(
            status=status, evidence=evidence, reasoning=model.reasoning, prediction=model.prediction, n_dropped=dropped
        )
    try:
        prediction = validate_prediction(model.prediction)
    except (ValueError, TypeError) as exc:
        return ParsedOutput(
            status=ParseStatus.INVALID_PREDICTION, evidence=evidence, reasoning=model.reasoning, error=str(exc)[:300],
            n_dropped=dropped,
        )
    return ParsedOutput(
        status=status, evidence=evidence, reasoning=model.reasoning, prediction=prediction, n_dropped=dropped
    )


def is_unit_interval(node: Any) -> bool:
    """True for a schema node that is a number bounded to [0, 1] inclusive (a probability)."""
    return (isinstance(node, dict) and node.get("type") == "number" and node.get("minimum") == 0
            and node.get("maximum") == 1 and "enum" not in node and "const" not in node)


def has_unit_interval(node: Any) -> bool:
    """True when ``schema`` holds a node of :func:`is_unit_interval` anywhere."""
    if is_unit_interval(node):
        return True
    if isinstance(node, dict):
        return any(has_unit_interval(v) for v in node.values())
    if isinstance(node, list):
        return any(has_unit_interval(v) for v in node)
    return False


def output_schema(prediction_schema: dict[str, Any], max_evidence: int = 10) -> dict[str, Any]:
    """JSON Schema of the shared output object, for grammar-constrained decoding.

    ``maxItems`` and ``maxLength`` keep small local models from repeating a fact or a
    sentence until the token limit (llama.cpp rejects bounds above 1000); a date
    ``pattern`` written with character classes (llama.cpp's converter mishandles backslash classes)
    keeps ``source_date`` a plausible ISO date.
    """
    return {
        "type": "object",
        "properties": {
            "evidence": {
                "type": "array",
                "minItems": 1,
                "maxItems": max_evidence,
                "items": {
                    "type": "object",
                    "properties": {
                        "id": {"type": "integer"},
                        "fact": {"type": "string", "maxLength": 200},
                        "source_date": {"type": "string", "pattern": "^(19|20)[0-9]{2}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$"},
                    },
                    "required": ["id", "fact", "source_date"],
                },
            },
            "reasoning": {"type": "string", "maxLength": 1000},
            "prediction": prediction_schema,
        },
        "required": list(REQUIRED_KEYS),
    }
