"""The deterministic claim extractor (no model): :func:`extract_claims`.

Every evidence item, plus each reasoning sentence that carries a date, a number or a named
event, becomes a :class:`~anachron.verify.taxonomy.Claim`; categories by
:func:`~anachron.verify.categorize.categorize`.
"""

from __future__ import annotations

import re
from typing import Any, Mapping, Sequence

from anachron.verify.categorize import EVENT_VERB, categorize
from anachron.verify.citations import cited_in, split_sentences, strip_citations
from anachron.verify.features import has_number, has_time_ref, norm_text
from anachron.verify.taxonomy import EXTRACTOR_DETERMINISTIC, Claim
from anachron.words import HEDGE_SPECULATIVE

_FIRST_PERSON = re.compile(r"\b(I|I'm|I'd|we|We|my|My|our|Our|us)\b")
_NAME_LEADERS = frozenset(
    "the a an in on at after before since during while although however given this that these those its his her "
    "their our we i by for with as when if but and or so thus therefore also".split()
)


def has_named_event(sentence: str) -> bool:
    """True if ``sentence`` names something (a capitalised multi-word name, or a capitalised word
    that does not start the sentence) and has an event verb ("Chevron acquired Anadarko")."""
    if not EVENT_VERB.search(sentence):
        return False
    tokens = re.findall(r"[A-Za-z][\w&'.-]*", sentence)
    run = 0
    for i, tok in enumerate(tokens):
        cap = tok[0].isupper() and tok != "I"
        if cap and i == 0 and tok.lower() in _NAME_LEADERS:
            cap = False
        if cap:
            run += 1
            if run >= 2 or i > 0:
                return True
        elif tok.lower() in {"of", "&", "and", "v.", "de"} and run:
            continue
        else:
            run = 0
    return False


def _is_judgement(sentence: str) -> bool:
    """The model's own judgement (first person or hedged) with no date: not a factual claim."""
    return bool(_FIRST_PERSON.search(sentence) or HEDGE_SPECULATIVE.search(sentence)) and not has_time_ref(sentence)


def evidence_dicts(evidence: Sequence[Any] | None) -> list[dict[str, Any]]:
    """A completion's evidence items (dicts or ``EvidenceItem`` objects) as ``{"id", "fact",
    "source_date"}`` dicts: the id defaults to the 1-based position, the date is a str or None;
    placeholder facts (no letter or digit) and non-mappings are skipped."""
    out = []
    for k, item in enumerate(evidence or [], start=1):
        if hasattr(item, "model_dump"):
            item = item.model_dump()
        if not isinstance(item, Mapping):
            continue
        fact = str(item.get("fact") or "").strip()
        if not fact or not any(ch.isalnum() for ch in fact):
            continue
        eid = item.get("id")
        try:
            eid = int(eid) if eid is not None else k
        except (TypeError, ValueError):
            eid = k
        sd = item.get("source_date")
        out.append({"id": eid, "fact": fact, "source_date": None if sd is None else str(sd)})
    return out


def _reasoning_claims(
    reasoning: str, evidence: list[dict[str, Any]], context: Mapping[str, Any], seen: set[str]
) -> list[Claim]:
    dates = {e["id"]: e["source_date"] for e in evidence}
    out = []
    for sentence in split_sentences(reasoning):
        text = strip_citations(sentence)
        key = norm_text(text)
        if not key or key in seen or not any(ch.isalnum() for ch in key):
            continue
        if not (has_time_ref(text) or has_number(text) or has_named_event(text)):
            continue
        cites = cited_in(sentence)
        if _is_judgement(text) and not cites:
            continue
        seen.add(key)
        known = [c for c in cites if c in dates]
        declared = dates[known[0]] if len(known) == 1 and len(cites) == 1 else None
        cat, rule = categorize(text, context)
        out.append(
            Claim(text=text, source="reasoning", evidence_id=None, declared_date_raw=declared, category=cat,
                  category_rule=rule, extractor=EXTRACTOR_DETERMINISTIC, cited_ids=cites)
        )
    return out


def extract_claims(
    evidence: Sequence[Any] | None, reasoning: str | None, context: Mapping[str, Any] | None = None
) -> list[Claim]:
    """Deterministic claim extraction (no model).

    * Each evidence item (``{"id", "fact", "source_date"}`` dicts or ``EvidenceItem``s) gives one
      claim with ``source="evidence"``, its id and ``declared_date_raw = source_date``.
      Placeholder facts (no letter or digit) and repeats are skipped.
    * Each reasoning sentence (:func:`~anachron.verify.citations.split_sentences`) that carries a date, a number or a named
      event (:func:`has_named_event`) gives one claim with ``source="reasoning"``: citations
      stripped; skipped when its normalized text (:func:`~anachron.verify.features.norm_text`)
      equals an evidence fact or an earlier sentence, or when it is the model's own judgement
      (first person or hedged, no date, no citation). It takes the ``source_date`` of the evidence item it cites when it
      cites exactly one (known) item, else None.

    Categories by :func:`~anachron.verify.categorize.categorize` with ``context``. Never raises on odd input.
    """
    ctx: Mapping[str, Any] = context or {}
    items = evidence_dicts(evidence)
    seen: set[str] = set()
    claims: list[Claim] = []
    for item in items:
        key = norm_text(item["fact"])
        if key in seen:
            continue
        seen.add(key)
        cat, rule = categorize(item["fact"], ctx)
        claims.append(
            Claim(text=item["fact"], source="evidence", evidence_id=item["id"], declared_date_raw=item["source_date"],
                  category=cat, category_rule=rule, extractor=EXTRACTOR_DETERMINISTIC)
        )
    claims.extend(_reasoning_claims(reasoning or "", items, ctx, seen))
    return claims
