"""The claim taxonomy: the seven categories and the :class:`Claim` record.

A *claim* is one atomic factual statement taken from a completion's evidence list or its
reasoning. Each claim gets a category of the temporal taxonomy of TimeSPEC (Zhang et al.
2026b; used by the TEMPO paper, App. F.3 "Phase 2: Supervisor" and App. I.3; docs/verification.md#taxonomy):

==== ======================== =====================================================
A1   discrete event           verified by date ("Chevron acquired Anadarko")
A2   state / measurement      verified by date ("XOM's 2019 revenue was $265B")
A3   publication              verified by date ("Apple reported Q4 results")
A4   outcome of the instance  always leaked (the answer being predicted)
A5   consequence of outcome   always leaked ("following the ruling, ...")
B1   background               always clean ("the Supreme Court has nine justices")
B2   definitional             always clean ("the Brier score is (p - o)^2")
==== ======================== =====================================================

The rules that assign categories are in :mod:`anachron.verify.categorize`, the extractors that
produce claims in :mod:`anachron.verify.extract`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

#: The seven categories, in taxonomy order.
CATEGORIES = ("A1", "A2", "A3", "A4", "A5", "B1", "B2")
#: One-line meaning of each category (also shown to the LLM extractor).
CATEGORY_NAMES = {
    "A1": "discrete event",
    "A2": "state or measurement",
    "A3": "publication or announcement",
    "A4": "outcome of the instance itself",
    "A5": "consequence of the outcome",
    "B1": "background",
    "B2": "definitional",
}
#: Categories that are leaked by definition (the outcome and what follows from it).
ALWAYS_LEAKED = frozenset({"A4", "A5"})
#: Categories that are clean by definition (time-invariant).
ALWAYS_CLEAN = frozenset({"B1", "B2"})
#: Categories whose availability date must be verified.
VERIFIABLE = frozenset({"A1", "A2", "A3"})

EXTRACTOR_DETERMINISTIC = "deterministic"
EXTRACTOR_LLM = "llm"


@dataclass
class Claim:
    """One atomic claim.

    Attributes:
        text: the claim text (citations stripped).
        source: ``"evidence"`` (from an evidence item, or an LLM claim matched to one) or
            ``"reasoning"``.
        evidence_id: id of the evidence item the claim came from; None for reasoning-only claims.
        declared_date_raw: the date the model declared for it, as written: the evidence item's
            ``source_date``; for a reasoning claim the ``source_date`` of the single evidence item
            it cites, or the LLM's ``temporal_ref`` when that parses as a date; else None.
        category: one of :data:`CATEGORIES`.
        category_rule: the :func:`~anachron.verify.categorize.categorize` rule that fired, or ``"llm: <reason>"``.
        extractor: ``"deterministic"`` or ``"llm"``.
        temporal_ref: the time reference the LLM extractor gave (None from the deterministic one).
        cited_ids: evidence ids cited as [k] by the reasoning sentence (reasoning claims only).
        original_span: the LLM's verbatim span (None from the deterministic extractor).
    """

    text: str
    source: str
    evidence_id: int | None
    declared_date_raw: str | None
    category: str
    category_rule: str
    extractor: str
    temporal_ref: str | None = None
    cited_ids: tuple[int, ...] = ()
    original_span: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable dict of all fields (``cited_ids`` as a list)."""
        d = asdict(self)
        d["cited_ids"] = list(self.cited_ids)
        return d
