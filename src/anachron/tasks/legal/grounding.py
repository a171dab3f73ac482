"""Legal: the grounded check of the decision being predicted (:class:`DecisionGrounding`) and
the courts below the Supreme Court (:data:`LOWER_COURT`, shared with the outcome rules)."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from anachron.names import name_in, names_in
from anachron.verify.layers.grounded import GroundedVerdict

_DECISION_WORDS = re.compile(
    r"\b(ruled|held|decided|reversed|affirmed|vacated|remanded|sided with|struck down|upheld|"
    r"dissent(?:ed|ing)?|opinion of the court|\d-\d (?:vote|decision|ruling))\b",
    re.I,
)


STATES = (
    "Alabama|Alaska|Arizona|Arkansas|California|Colorado|Connecticut|Delaware|Florida|Georgia|Hawai[iʻ']?i|Idaho|"
    "Illinois|Indiana|Iowa|Kansas|Kentucky|Louisiana|Maine|Maryland|Massachusetts|Michigan|Minnesota|Mississippi|"
    "Missouri|Montana|Nebraska|Nevada|New\\s+Hampshire|New\\s+Jersey|New\\s+Mexico|New\\s+York|North\\s+Carolina|"
    "North\\s+Dakota|Ohio|Oklahoma|Oregon|Pennsylvania|Rhode\\s+Island|South\\s+Carolina|South\\s+Dakota|Tennessee|"
    "Texas|Utah|Vermont|Virginia|Washington|West\\s+Virginia|Wisconsin|Wyoming|Puerto\\s+Rico|Guam|"
    "District\\s+of\\s+Columbia|D\\.C\\.|State"
)
#: Courts below the U.S. Supreme Court: federal circuits and district courts, specialised
#: federal courts, and every state court ("the Colorado Supreme Court", "the Supreme Court of
#: Alabama", "the state appellate court", "the New York Court of Appeals").
LOWER_COURT = re.compile(
    rf"\b(?:(?:{STATES})(?:['’]s)?\s+(?:Supreme|Superior|High|Appellate|Appeals|Trial|District|Circuit|Family|Chancery)\s+Court"
    rf"|(?:Supreme|Superior|High)\s+Court\s+of\s+(?:the\s+State\s+of\s+|the\s+Commonwealth\s+of\s+)?(?:{STATES})"
    rf"|(?:{STATES})\s+Court\s+of\s+(?:Criminal\s+)?Appeals"
    r"|circuit(?:\s+court)?|courts?\s+of\s+(?:criminal\s+|civil\s+|special\s+)?appeals?|appeals?\s+courts?|appellate\s+(?:courts?|division|panel)"
    r"|district\s+courts?|trial\s+courts?|trial\s+judge|state\s+(?:supreme\s+|high\s+|highest\s+)?courts?|state['’]s\s+(?:highest|high|top)\s+court"
    r"|lower\s+courts?|bankruptcy\s+(?:court|judge|appellate\s+panel)|tax\s+court|court\s+of\s+(?:federal\s+)?claims"
    r"|court\s+of\s+international\s+trade|superior\s+courts?|magistrate(?:\s+judge)?|en\s+banc\s+court|three-judge\s+(?:district\s+)?court"
    r"|(?:the\s+)?(?:First|Second|Third|Fourth|Fifth|Sixth|Seventh|Eighth|Ninth|Tenth|Eleventh|D\.C\.|Federal)\s+Circuit)\b",
    re.I,
)
#: The U.S. Supreme Court ("the Court" with a capital C in a Supreme Court case). Matched after
#: lower courts are masked, so "the Supreme Court of Alabama" is not it.
_SUPREME = re.compile(
    r"\b(?:U\.?S\.?\s+Supreme\s+Court|United\s+States\s+Supreme\s+Court|(?i:the)\s+Supreme\s+Court|Supreme\s+Court\s+of\s+the\s+United\s+States"
    r"|Supreme\s+Court|(?<!of\s)Justices?(?!\s+Department)|SCOTUS|(?i:the)\s+(?:high\s+)?Court|(?i:the)\s+nation['’]s\s+(?:highest|top)\s+court|(?i:the)\s+high\s+court)\b"
)


class DecisionGrounding:
    """Grounded checks for the legal task: a claim that states how the case was decided.

    The context (``LegalTask.grounding_context``) gives ``case_name``, ``petitioner``,
    ``respondent`` and ``decision_date``. A claim naming the case or a party together with
    decision language ("ruled", "reversed", "affirmed", "a 5-4 decision", ...) states the
    outcome (A4): leaked, dated at the decision date. Naming only a party (an agency, a
    state) needs the Supreme Court named too.

    Rulings of lower courts are the case's history, not its outcome: each decision verb is
    given a subject, the court named by "by the ..." after it (passive) or else the nearest
    court named before it in the same sentence. A claim whose every decision verb has a lower
    court as subject ("Before the case reached the Supreme Court, the Sixth Circuit had ruled
    against ...", "the Supreme Court of Alabama ruled ...", "the state appellate court held
    ...") is not the outcome, even when the Supreme Court is named elsewhere. Lower courts
    are federal circuits, district and specialised courts and every state court
    (:data:`LOWER_COURT`); "the Supreme Court" is the U.S. Supreme Court only once state
    supreme courts are masked.
    """

    def check(self, fact: str, instance: dict[str, Any]) -> GroundedVerdict | None:
        """A leaked A4 verdict dated at the decision when ``fact`` states this case's ruling, else None."""
        verbs = list(_DECISION_WORDS.finditer(fact))
        if not verbs:
            return None
        courts = _court_mentions(fact)
        supreme = any(kind == "supreme" for _, _, kind in courts)
        subjects = [_verb_subject(fact, v, courts) for v in verbs]
        if subjects and all(s == "lower" for s in subjects):
            return None  # only lower courts rule here: history
        if name_in(fact, instance.get("case_name") or ""):
            if not any(s == "supreme" for s in subjects) and not supreme and any(k == "lower" for _, _, k in courts):
                return None
        elif not (supreme and names_in(fact, [instance.get("petitioner") or "", instance.get("respondent") or ""])):
            return None
        day = dt.date.fromisoformat(instance["decision_date"])
        return GroundedVerdict(day, f"states the Court's decision in this case (decided {day})", outcome=True, category="A4")


def _court_mentions(fact: str) -> list[tuple[int, int, str]]:
    """(start, end, "lower"|"supreme") of every court named in ``fact``, lower courts first
    (their spans are masked before the Supreme Court is looked for)."""
    out: list[tuple[int, int, str]] = []
    masked = fact
    for m in LOWER_COURT.finditer(fact):
        out.append((m.start(), m.end(), "lower"))
        masked = masked[: m.start()] + " " * (m.end() - m.start()) + masked[m.end() :]
    for m in _SUPREME.finditer(masked):
        out.append((m.start(), m.end(), "supreme"))
    return sorted(out)


_CLAUSE_BREAK = re.compile(r"[.;]\s|\b(?:but|while|whereas|although|then|and\s+then|before|after)\b", re.I)


def _verb_subject(fact: str, verb: re.Match[str], courts: list[tuple[int, int, str]]) -> str | None:
    """The kind of court that is the subject of one decision verb, or None if none is named.

    Passive "decided ... by the <court>" takes the court after "by" (within 80 characters,
    same clause); otherwise the nearest court that ends before the verb, provided no clause
    break ("but", "before", "; ") separates them.
    """
    after = fact[verb.end() : verb.end() + 80]
    by = re.search(r"\bby\s+(?:the\s+|a\s+)?", after)
    if by and not _CLAUSE_BREAK.search(after[: by.start()]):
        pos = verb.end() + by.end()
        for s, _, kind in courts:
            if pos - 4 <= s <= pos + 12:
                return kind
    before = [(s, e, k) for s, e, k in courts if e <= verb.start()]
    if before:
        s, e, kind = before[-1]
        if not _CLAUSE_BREAK.search(fact[e : verb.start()]):
            return kind
    return None
