"""What one search call surfaced, judged against the instance's cutoff: the leak columns of
``tool_calls`` (docs/metrics.md#trace-metrics; Anachron v0 scorer).

:func:`score_call` derives a call's leak columns and its readable ``flag_reason`` from the hits,
so the retrieval methods and the tests share one definition; :mod:`anachron.metrics.traces`
aggregates them into TCLR, survivorship, restatement and query intent.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any, Iterable, Protocol, Sequence

from anachron.dates import to_date

#: Separator of the clauses of a ``flag_reason``.
REASON_SEP = "; "


class EntityValidityLike(Protocol):
    """What :func:`score_call` needs of an entity table (:class:`anachron.retrieval.search.EntityValidity`)."""

    def __contains__(self, entity: object) -> bool: ...

    def is_valid(self, entity: str, day: Any) -> bool: ...

    def spells(self, entity: str) -> list[tuple[str | None, str | None]]: ...


def published_after(hit: Any, cutoff: dt.date) -> bool:
    """True when ``hit.published_at`` is a day after ``cutoff`` (an undated hit is not "after")."""
    d = to_date(getattr(hit, "published_at", None))
    return d is not None and d > cutoff


def restated_id(hit: Any) -> str | None:
    """The doc id ``hit`` revises (``hit.restates``), or None (missing, NaN and blank all mean none)."""
    value = getattr(hit, "restates", None)
    return value.strip() or None if isinstance(value, str) else None


def _invalid_reason(entity: str, doc_id: str, cutoff: dt.date, spells: Sequence[tuple[str | None, str | None]]) -> str:
    """Why ``entity`` (not valid at ``cutoff``) is flagged: removed before, or not yet valid."""
    day = cutoff.isoformat()
    # Spells begun by the cutoff have all ended by then (the entity is not valid on ``day``).
    removed = [vt for vf, vt in spells if (vf is None or vf <= day) and vt is not None]
    later = [vf for vf, _ in spells if vf is not None and vf > day]
    if removed:
        again = f", valid again from {min(later)}" if later else ""
        return f"entity {entity} (doc {doc_id}) no longer valid at {day} (removed {max(removed)}{again})"
    if later:
        return f"entity {entity} (doc {doc_id}) not yet valid at {day} (valid from {min(later)})"
    return f"entity {entity} (doc {doc_id}) not valid at {day}"


def score_call(
    hits: Sequence[Any],
    cutoff: dt.date,
    *,
    consumed: Iterable[str] = (),
    validity: EntityValidityLike | None = None,
    query_intent: bool = False,
) -> dict[str, Any]:
    """The leak columns of one search call, as stored in ``tool_calls`` (JSON lists as strings).

    Args:
        hits: the call's results, in rank order; each has ``doc_id``, ``published_at`` (ISO day
            or None), ``entities`` (entity keys) and ``restates`` (doc id or None).
        cutoff: the instance's cutoff day.
        consumed: ids of documents that made it into the prompt (over all the run's calls).
        validity: the entity table; None means no survivorship check (no entity-bearing document).
        query_intent: whether the query names a time after the cutoff (adds a reason clause).

    Returns:
        ``returned``, ``consumed`` (the call's returned ids that are in ``consumed``),
        ``after_cutoff``, ``entity_docs`` (returned docs with an entity ``validity`` knows),
        ``invalid_entities`` (entities of returned docs not valid at the cutoff, first-seen
        order), ``restatements`` (returned docs published after the cutoff that revise another
        one, consumed or not) and ``flag_reason``: one clause per finding, joined with
        :data:`REASON_SEP` (document id, its date, the id a restatement revises, the entity and
        its validity bound), or None when the call is not flagged.
    """
    used = set(consumed)
    day = cutoff.isoformat()
    returned, kept, after, entity_docs, invalid, restated = [], [], [], [], [], []
    reasons: list[str] = []
    for h in hits:
        returned.append(h.doc_id)
        if h.doc_id in used:
            kept.append(h.doc_id)
        late = published_after(h, cutoff)
        prior = restated_id(h)
        when = str(to_date(getattr(h, "published_at", None)))
        if late:
            after.append(h.doc_id)
            if prior:
                restated.append(h.doc_id)
                reasons.append(f"restatement {h.doc_id} dated {when} > {day} revises {prior}")
            else:
                reasons.append(f"doc {h.doc_id} dated {when} > {day}")
        if validity is None:
            continue
        ents = list(getattr(h, "entities", ()) or ())
        if any(e in validity for e in ents):
            entity_docs.append(h.doc_id)
        for e in ents:
            if e not in invalid and not validity.is_valid(e, cutoff):
                invalid.append(e)
                reasons.append(_invalid_reason(e, h.doc_id, cutoff, validity.spells(e)))
    if query_intent:
        reasons.append(f"query names a time after {day}")
    return {
        "returned": json.dumps(returned),
        "consumed": json.dumps(kept),
        "after_cutoff": json.dumps(after),
        "entity_docs": json.dumps(entity_docs),
        "invalid_entities": json.dumps(invalid),
        "restatements": json.dumps(restated),
        "flag_reason": REASON_SEP.join(reasons) or None,
    }
