"""Claims: rule-based categories and the two claim extractors.

A *claim* is one atomic factual statement taken from a completion's evidence list or its
reasoning. Each claim gets a category A1-A5 / B1-B2 of the temporal taxonomy
(:mod:`anachron.verify.taxonomy`).

Two extractors produce :class:`Claim` lists:

* :func:`extract_claims` (deterministic, no model): every evidence item, plus each
  reasoning sentence that carries a date, a number or a named event; categories by
  :func:`categorize`.
* :func:`extract_claims_llm` (a model, batched): the TimeSPEC claim-extraction step
  (App. I.3 structure, the project's own wording); an unusable answer falls back to the
  deterministic extractor, with the reason in the trace.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import re
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from anachron.dates import to_date
from anachron.llm.decode import decode_json
from anachron.llm.types import ChatRequest
from anachron.tasks.base import Task, generic_description
from anachron.tasks.registry import TASKS, all_tasks, find_task
from anachron.verify.citations import cited_in, split_sentences, strip_citations
from anachron.verify.dates import Period, find_periods, normalize_declared
from anachron.verify.taxonomy import (  # noqa: F401  (re-exported while callers move to taxonomy)
    ALWAYS_CLEAN,
    ALWAYS_LEAKED,
    CATEGORIES,
    CATEGORY_NAMES,
    EXTRACTOR_DETERMINISTIC,
    EXTRACTOR_LLM,
    VERIFIABLE,
    Claim,
)

if TYPE_CHECKING:
    import pandas as pd

# ---------------------------------------------------------------------------------------
# text features
# ---------------------------------------------------------------------------------------

#: Hedged or future-tense wording ("expected to", "likely", "will"): a claim so worded is no outcome.
HEDGE = re.compile(
    r"\b(expect(?:s|ed)? to|is expected|are expected|likely|unlikely|probably|(?-i:may)(?!\s+[0-9])|might|could|"
    r"would|should|will|won't|predict(?:s|ed)?|forecast(?:s|ed)? (?:that|to)|projected to|anticipate[sd]?|rumou?red|"
    r"speculat\w*|possib(?:le|ly)|potential(?:ly)?|chance|odds|probability)\b",
    re.I,
)
_FIRST_PERSON = re.compile(r"\b(I|I'm|I'd|we|We|my|My|our|Our|us)\b")
_RELATIVE_TIME = re.compile(
    r"\b(yesterday|today|tomorrow|recently|currently|this (?:week|month|quarter|year|season|term)|"
    r"last (?:week|month|quarter|year|season|term)|next (?:week|month|quarter|year|season|term)|"
    r"year-to-date|ytd|year-end|year end)\b"
    r"|\b(January|February|March|April|June|July|August|September|October|November|December)\b"
    r"|\bMay(?=\s+\d)",
    re.I,
)
# numerals that name things rather than measure them: masked before looking for a number
_NAME_NUMERALS = re.compile(
    r"S&P\s?500|S&P\s?400|S&P\s?600|Fortune\s?500|Russell\s?[0-9]{4}|Nasdaq[- ]100|Dow\s?30|COVID-19|SARS-CoV-2|"
    r"\b10-K(?:/A)?\b|\b10-Q\b|\b8-K\b|\bS-1\b|\b401\(k\)|\bForm\s+[0-9A-Z-]+|"
    r"§+\s?[0-9][0-9a-z().-]*|\b[0-9]+\s+U\.?S\.?C?\.?(?:\s+§*\s?[0-9]+)?|\bU\.?S\.?C\.?\s+§*\s?[0-9]+|"
    r"\b(?:Section|Sec\.|Rule|Article|Title|Amendment|Chapter|Docket|No\.)\s+[0-9][0-9a-z().-]*|"
    r"\b[0-9]+(?:st|nd|rd|th)\s+(?:Circuit|Amendment|Congress|District|Street|Avenue|Precinct)\b|"
    r"\bCase\s+No\.?\s*[0-9-]+|\b[0-9]{1,2}-[0-9]{3,5}\b",
    re.I,
)
_NUMBER = re.compile(
    r"[0-9]|\b(million|billion|trillion|percent|percentage points?|basis points?|bps)\b", re.I
)
_STATE_AS_OF = re.compile(r"\b(as of|at the end of|at year-end|at the close of|as at)\b", re.I)

_DEFINITION = re.compile(
    r"\b(?:is|are) defined as\b|\brefers? to\b|\bmeasures\s+(?:the|how|a|an|whether|what|its|their)\b"
    r"|\bis a measure of\b|\b(?:is|are) (?:calculated|computed) as\b|\bis the (?:ratio|sum|average|difference|"
    r"product|share|fraction) of\b|\bdivided by\b|\bby definition\b|\bmeans that\b|\bdenotes\b|\bformula\b"
    r"|\bis a (?:term|metric|statistic|doctrine|legal standard)\b"
    r"|\b(?:is|equals)\s+\$?\(?\s*[a-z]\w{0,3}\s*[-+*/^]\s*[a-z0-9(]|\s=\s",
    re.I,
)
_PUBLICATION = re.compile(
    r"\b(report(?:ed|s|ing)?|announce(?:d|s|ment|ments)?|filed|filing|filings|publish(?:ed|es)?|"
    r"release[ds]?|press release|10-K(?:/A)?|10-Q|8-K|said in a statement|statement|guidance|guided|"
    r"disclosed?|disclosure|earnings call|conference call|investor day|prospectus|proxy)\b",
    re.I,
)
_EVENT_VERB = re.compile(
    r"\b(acquir(?:ed|es|ing)|acquisition|bought|buys|purchas(?:ed|es)|sold|sells|merg(?:ed|es|er)|"
    r"sign(?:ed|s|ing)|re-signed|inked|launch(?:ed|es)|unveil(?:ed|s)|introduc(?:ed|es)|debut(?:ed|s)|"
    r"won|wins|defeated|beat|hired|fired|appointed|(?:was|were) named|resign(?:ed|s)|retir(?:ed|es)|"
    r"stepped down|elected|(?:was|were) traded|traded (?:to|for|away)|sued|lawsuit|settled|spun off|"
    r"went public|ipo|declared|defaulted|bankrupt(?:cy)?|recall(?:ed|s)|grounded|approv(?:ed|es)|"
    r"reject(?:ed|s)|vetoed|enacted|passed|invad(?:ed|es)|agreed|completed|closed (?:the|its|a) (?:deal|"
    r"acquisition|merger|sale|purchase)|began|started|ended|died|injur(?:ed|y)|underwent|drafted|waived|"
    r"extended|granted|denied|argued|heard|indicted|convicted|sentenced|fined|banned|imposed|lifted|"
    r"cut|raised|lowered|downgraded|upgraded|joined|departed|expanded|entered|exited|withdr(?:ew|awn)|"
    r"collapsed|shut down|laid off|layoffs|outbreak|struck|ruled|held|decided|reversed|affirmed|vacated|"
    r"remanded|upheld|struck down)\b",
    re.I,
)
_A5_LEADS = r"following|after|since|in the wake of|as a result of|in response to|because of|due to|in light of|subsequent to"
_A5_REACT = r"praised|criticized|criticised|welcomed|condemned|reacted to|responded to|celebrated|lamented|applauded|decried"


@functools.lru_cache(maxsize=None)
def _a5_regexes(nouns: str) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """The A5 patterns for outcome nouns ``nouns`` (a regex alternation): "following the <noun>"
    and "praised the <noun>"."""
    lead = re.compile(
        rf"\b(?:{_A5_LEADS})\s+(?:the|this|that|its|his|her|their|a)?\s*(?:[\w'-]+\s+){{0,3}}?(?:{nouns})\b"
        rf"|\bafter (?:sign|join)ing with\b|\bsince (?:sign|join)ing\b|\bsince the (?:contract|signing|deal|ruling|decision)\b",
        re.I,
    )
    react = re.compile(rf"\b(?:{_A5_REACT})\s+(?:the|this|that)\s+(?:[\w'-]+\s+){{0,2}}?(?:{nouns})\b", re.I)
    return lead, react


@functools.lru_cache(maxsize=None)
def _all_outcome_nouns(registered: tuple[Any, ...]) -> str:
    """Every registered task's outcome nouns, one alternation (A5 without a task in the context)."""
    del registered  # the cache key: the registry's entries
    return "|".join(sorted(set("|".join(t.outcome_nouns for t in all_tasks()).split("|"))))


#: Function words left out of a claim's content words.
STOP_WORDS = frozenset(
    "a an the of to in on at for by with and or but is are was were be been being its it this that these those "
    "as from into than then over under after before since during while about per his her their our your".split()
)


def norm_text(text: str) -> str:
    """Lower-cased, whitespace-collapsed text without trailing punctuation (the dedup key)."""
    return " ".join(text.lower().split()).strip(" .;:,!?")


def _masked(text: str) -> str:
    """``text`` with its time references and name-like numerals removed."""
    out = _NAME_NUMERALS.sub(" ", text)
    for p in find_periods(out):
        out = out.replace(p.text, " ")
    return out


def has_number(text: str) -> bool:
    """True if ``text`` states a quantity: a digit, or million/billion/percent/basis points,
    outside its dates and outside numerals that name things (S&P 500, 10-K, § 1983, 9th Circuit)."""
    return bool(_NUMBER.search(_masked(text)))


def time_references(text: str) -> list[Period]:
    """The dated periods :func:`anachron.verify.dates.find_periods` finds in ``text``."""
    return find_periods(text)


def has_time_ref(text: str) -> bool:
    """True if ``text`` refers to a time: a date, month, quarter, year, or a relative time word."""
    return bool(find_periods(text)) or bool(_RELATIVE_TIME.search(text))


def context_cutoff(context: Mapping[str, Any]) -> dt.date | None:
    """The ``cutoff_date`` of a categorisation context as a date (None when missing or not a date)."""
    return to_date(context.get("cutoff_date"))


def all_before(text: str, cutoff: dt.date | None) -> bool:
    """True if ``text`` has dated periods and every one ends on or before the cutoff (history)."""
    if cutoff is None:
        return False
    periods = find_periods(text)
    return bool(periods) and all(p.end <= cutoff for p in periods)


def periods_after(text: str, cutoff: dt.date | None, until: dt.date | None = None) -> list[Period]:
    """Periods of ``text`` that start after the cutoff (and on or before ``until`` if given)."""
    if cutoff is None:
        return []
    return [p for p in find_periods(text) if p.start > cutoff and (until is None or p.start <= until)]


def as_list(v: Any) -> list[str]:
    """A context value as a list of non-empty strings (None -> [], a string -> [it])."""
    if v is None:
        return []
    if isinstance(v, (list, tuple)):
        return [str(x) for x in v if x]
    return [str(v)] if v else []


def _a5(text: str, context: Mapping[str, Any], task: Task | None) -> str | None:
    """The A5 rule (a consequence of, or reaction to, the instance's outcome) or None."""
    nouns = task.outcome_nouns if task is not None else _all_outcome_nouns(tuple(TASKS.items()))
    lead, react = _a5_regexes(nouns)
    m = lead.search(text)
    rule = "A5:consequence-of-outcome" if m else None
    if m is None and react.search(text):
        rule = "A5:reaction-to-outcome"
    if rule is None or HEDGE.search(text):
        return None
    if all_before(text, context_cutoff(context)):
        return None
    if task is not None and not task.is_consequence(text, context):
        return None
    return rule


# ---------------------------------------------------------------------------------------
# categorize
# ---------------------------------------------------------------------------------------

#: The rules of :func:`categorize`, in the order they are tried (the first that fires wins).
RULE_ORDER = (
    "B2:definition",  # defines a term or formula, no time reference, no event verb
    "A4:<task>:...",  # the instance's own outcome (needs context["task"])
    "A5:consequence-of-outcome / A5:reaction-to-outcome",
    "A3:publication",  # reported / announced / filed / published / released / 10-K / guidance ...
    "A2:number / A2:state-as-of",  # a quantity (or a state 'as of' a date) without an event verb
    "A1:event-verb / A1:dated",  # an event verb, or any other dated statement
    "B1:background",  # no time reference, no number, no event
)


def categorize(text: str, context: Mapping[str, Any] | None = None) -> tuple[str, str]:
    """Category of one claim by deterministic rules; returns ``(category, rule)``.

    Rules are tried in the order of :data:`RULE_ORDER`; the first that fires wins:

    1. ``B2:definition`` — defines a term or formula ("is defined as", "refers to",
       "measures how ...", "divided by") with no time reference and no event verb.
    2. ``A4:<task>:...`` — the outcome of the instance itself (only with ``context["task"]``):
       the task's :meth:`~anachron.tasks.base.Task.outcome_rule` (each task package's
       ``claims`` module says what counts: a stock's move in the window, this case's ruling,
       the player's contract, the question's resolution). Hedged or future-tense statements
       ("could", "likely", "will") never fire.
    3. ``A5:...`` — a consequence of the outcome ("following the ruling", "after signing with",
       "as a result of the decision", "since the contract") or a reaction to it ("praised the
       ruling"), with the task's :attr:`~anachron.tasks.base.Task.outcome_nouns` (every
       registered task's without a task); not hedged, not when every date is before the
       cutoff, and not when the task's :meth:`~anachron.tasks.base.Task.is_consequence` says
       it follows from another outcome (a lower court's ruling, a previous team's contract, a
       crash before the window).
    4. ``A3:publication`` — reported, announced, filed, published, released, press release,
       10-K / 10-Q / 8-K, "said in a statement", guidance, disclosed, earnings call.
    5. ``A2:number`` — a quantity (money, percent, ratio, price, count, rank: a digit outside
       dates and name-like numerals, or million/billion/percent) and no event verb;
       ``A2:state-as-of`` — "as of <date>" without an event verb.
    6. ``A1:event-verb`` — an event verb (acquired, signed, launched, won, hired, merged, sued,
       elected, traded, ruled ...); ``A1:dated`` — any other statement with a time reference.
    7. ``B1:background`` — everything else: no time reference, no number, no event.

    Args:
        text: the claim.
        context: the task's grounding context (:meth:`~anachron.tasks.base.Task.grounding_context`)
            plus ``{"task": name}``. None, or a task the registry does not know: no A4 rule
            applies and A5 uses every registered task's outcome nouns.

    Taxonomy: TimeSPEC (Zhang et al. 2026b), as summarised in the TEMPO paper App. F.3, and
    the worked examples of its task-sensitivity probe (Table 4).
    """
    ctx: Mapping[str, Any] = context or {}
    text = " ".join(str(text).split())
    timed = has_time_ref(text)
    event = bool(_EVENT_VERB.search(text))
    if _DEFINITION.search(text) and not timed and not event:
        return "B2", "B2:definition"
    task = find_task(ctx.get("task"))
    if task is not None:
        rule = task.outcome_rule(text, ctx)
        if rule:
            return "A4", rule
    rule = _a5(text, ctx, task)
    if rule:
        return "A5", rule
    if _PUBLICATION.search(text):
        return "A3", "A3:publication"
    if not event and has_number(text):
        return "A2", "A2:number"
    if not event and timed and _STATE_AS_OF.search(text):
        return "A2", "A2:state-as-of"
    if event:
        return "A1", "A1:event-verb"
    if timed:
        return "A1", "A1:dated"
    return "B1", "B1:background"


# ---------------------------------------------------------------------------------------
# deterministic extractor
# ---------------------------------------------------------------------------------------

_NAME_LEADERS = frozenset(
    "the a an in on at after before since during while although however given this that these those its his her "
    "their our we i by for with as when if but and or so thus therefore also".split()
)


def has_named_event(sentence: str) -> bool:
    """True if ``sentence`` names something (a capitalised multi-word name, or a capitalised word
    that does not start the sentence) and has an event verb ("Chevron acquired Anadarko")."""
    if not _EVENT_VERB.search(sentence):
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
    return bool(_FIRST_PERSON.search(sentence) or HEDGE.search(sentence)) and not has_time_ref(sentence)


def _evidence_dicts(evidence: Sequence[Any] | None) -> list[dict[str, Any]]:
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
      stripped; skipped when its normalized text (:func:`norm_text`) equals an evidence fact or
      an earlier sentence, or when it is the model's own judgement (first person or hedged, no
      date, no citation). It takes the ``source_date`` of the evidence item it cites when it
      cites exactly one (known) item, else None.

    Categories by :func:`categorize` with ``context``. Never raises on odd input.
    """
    ctx: Mapping[str, Any] = context or {}
    items = _evidence_dicts(evidence)
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


# ---------------------------------------------------------------------------------------
# LLM extractor
# ---------------------------------------------------------------------------------------

#: Caps of the extraction answer (kept within llama.cpp's 1000 repetition bound).
MAX_CLAIMS = 30
MAX_CLAIM_CHARS = 300
MAX_REF_CHARS = 40
MAX_REASON_CHARS = 160


def extraction_schema(max_claims: int = MAX_CLAIMS) -> dict[str, Any]:
    """JSON schema of the extractor's answer ``{"claims": [...]}`` (llama.cpp-grammar safe:
    no backslash classes, every bound ≤ 1000)."""
    return {
        "type": "object",
        "properties": {
            "claims": {
                "type": "array",
                "maxItems": max_claims,
                "items": {
                    "type": "object",
                    "properties": {
                        "claim_id": {"type": "integer"},
                        "text": {"type": "string", "maxLength": MAX_CLAIM_CHARS},
                        "original_span": {"type": "string", "maxLength": MAX_CLAIM_CHARS},
                        "temporal_ref": {"type": "string", "maxLength": MAX_REF_CHARS},
                        "category": {"type": "string", "enum": list(CATEGORIES)},
                        "category_reason": {"type": "string", "maxLength": MAX_REASON_CHARS},
                    },
                    "required": ["claim_id", "text", "original_span", "temporal_ref", "category", "category_reason"],
                },
            }
        },
        "required": ["claims"],
    }


def _row_get(row: Any, key: str, default: Any = None) -> Any:
    try:
        v = row[key]
    except (KeyError, IndexError, TypeError):
        return default
    return default if v is None else v


def _row_inputs(row: Any) -> dict[str, Any]:
    inp = _row_get(row, "inputs", {})
    if isinstance(inp, str):
        try:
            inp = json.loads(inp)
        except ValueError:
            inp = {}
    return inp if isinstance(inp, dict) else {}


def describe_instance(task: Any, row: Any) -> tuple[str, str]:
    """``(task_description, target_event)`` for the extractor prompt, from the row's inputs only
    (fields the generator also saw; never the label): the task's
    :meth:`~anachron.tasks.base.Task.describe`. ``task`` is a Task or a task name; an unknown
    name gets a generic description."""
    if not isinstance(task, Task):
        name = str(getattr(task, "name", task) or "")
        task = find_task(name)
        if task is None:
            return generic_description(name)
    return task.describe(_row_inputs(row))


def _rationale_text(evidence: list[dict[str, Any]], reasoning: str) -> str:
    lines = ["Evidence list:"]
    lines += [f"[{e['id']}] {e['fact']}" for e in evidence] or ["(none)"]
    lines += ["", "Reasoning:", (reasoning or "").strip() or "(none)"]
    return "\n".join(lines)


def extraction_request(
    task: Any,
    row: Any,
    evidence: Sequence[Any] | None,
    reasoning: str | None,
    params: Mapping[str, Any] | None = None,
    *,
    max_claims: int = MAX_CLAIMS,
) -> ChatRequest:
    """The LLM claim-extraction request for one completion (TimeSPEC, TEMPO App. I.3 structure).

    One system and one user message: the task description, the target event, the cutoff,
    the categories with their meanings, the four requirements (comprehensive, faithful,
    self-contained, atomic), the exclusion of predictions / judgements / speculation, the
    evidence list (ids and facts, no dates) and the reasoning. The answer is constrained by
    :func:`extraction_schema`.

    Args:
        task: the :class:`~anachron.tasks.base.Task` (or its name).
        row: the instance row (``instance_id``, ``cutoff_date``, ``inputs``).
        evidence: the completion's evidence items; reasoning: its reasoning text.
        params: decoding parameters (only keys the provider knows).
        max_claims: ``maxItems`` of the claims array.
    """
    items = _evidence_dicts(evidence)
    task_desc, event = describe_instance(task, row)
    cutoff = _row_get(row, "cutoff_date", "")
    cats = "\n".join(f"- {c}: {CATEGORY_NAMES[c]}" for c in CATEGORIES)
    system = (
        "You break an analyst's written rationale into atomic factual claims and label each claim with a "
        "temporal category. You do not judge whether claims are true."
    )
    user = (
        f"Prediction task: {task_desc}\n"
        f"What is being predicted: {event}\n"
        f"Knowledge cutoff of the analyst: {cutoff}\n\n"
        "Write out every factual claim made in the rationale below.\n"
        "1. Cover everything: each factual assertion in the evidence list and in the reasoning.\n"
        "2. Stay faithful: keep the rationale's own figures, names and dates; add nothing.\n"
        "3. Make each claim readable on its own: replace pronouns with the names they stand for.\n"
        "4. Keep claims atomic: one checkable fact per claim; split sentences that state several.\n"
        "Leave out predictions, opinions, judgements and speculation about what will or might happen.\n\n"
        "Categories:\n"
        f"{cats}\n"
        "Group A (A1-A5) can be dated. A4 is any statement of the very outcome being predicted; A5 is anything "
        "that follows from that outcome. Group B is timeless: B1 stable background facts, B2 definitions.\n\n"
        "For each claim give: claim_id (1, 2, ...); text (the self-contained claim); original_span (the words "
        "of the rationale it comes from, copied exactly); temporal_ref (the date or period the claim refers to, "
        "as written, e.g. 2019-10-31, Q3 2019, March 2020, or an empty string if none); category (A1-A5, B1, B2); "
        "category_reason (a few words).\n\n"
        f"{_rationale_text(items, reasoning or '')}\n\n"
        'Answer with one JSON object only: {"claims": [{"claim_id": 1, "text": "...", "original_span": "...", '
        '"temporal_ref": "...", "category": "A1", "category_reason": "..."}]}'
    )
    return ChatRequest(
        messages=[{"role": "system", "content": system}, {"role": "user", "content": user}],
        params=dict(params or {}),
        response_schema=extraction_schema(max_claims),
        tag={"instance_id": _row_get(row, "instance_id", ""), "step": "extract_claims"},
    )


def _tokens(text: str) -> list[str]:
    return [w for w in re.findall(r"[a-z0-9]+(?:\.[0-9]+)?", text.lower()) if w not in STOP_WORDS]


def match_evidence(text: str, evidence: list[dict[str, Any]], min_overlap: float = 0.6) -> dict[str, Any] | None:
    """The evidence item a claim (or span) restates, or None.

    A match: the normalized texts contain one another, or at least ``min_overlap`` of the
    claim's content words (and at least two) appear in the fact and every number of the claim
    appears in the fact. The best-overlapping item wins.
    """
    key = norm_text(strip_citations(text))
    if not key:
        return None
    toks = set(_tokens(key))
    nums = {t for t in toks if t[0].isdigit()}
    best, best_score = None, 0.0
    for e in evidence:
        fkey = norm_text(e["fact"])
        ftoks = set(_tokens(fkey))
        if key in fkey or (fkey and fkey in key):
            score = 2.0
        elif toks and len(toks & ftoks) >= 2 and nums <= ftoks:
            score = len(toks & ftoks) / len(toks)
            if score < min_overlap:
                continue
        else:
            continue
        if score > best_score:
            best, best_score = e, score
    return best


def _category_of(raw: Any) -> str | None:
    m = re.match(r"\s*([AaBb])\s*([1-5])", str(raw or ""))
    if not m:
        return None
    cat = m[1].upper() + m[2]
    return cat if cat in CATEGORIES else None


def _cites_of_span(span: str, reasoning: str) -> tuple[int, ...]:
    key = norm_text(strip_citations(span))
    if not key:
        return ()
    for sentence in split_sentences(reasoning):
        if key in norm_text(strip_citations(sentence)):
            return cited_in(sentence)
    return ()


def parse_extraction(
    text: str | None,
    evidence: Sequence[Any] | None,
    reasoning: str | None,
    context: Mapping[str, Any] | None = None,
    *,
    cover_evidence: bool = True,
) -> tuple[list[Claim] | None, str | None]:
    """Claims from the LLM extractor's answer; ``(claims, None)`` or ``(None, reason)``. Never raises.

    Decoding: the whole text, a fenced block, the outermost brackets
    (:func:`~anachron.llm.decode.decode_json`).
    Each claim needs a non-empty ``text`` (placeholders and repeats are dropped). Its
    category is the LLM's when it is one of :data:`CATEGORIES` ("a1", "A1 - event" accepted),
    rule ``"llm: <category_reason>"``; otherwise :func:`categorize` decides and the rule
    records that the LLM's category was invalid.

    Dating: a claim whose ``original_span`` (or text) restates an evidence fact
    (:func:`match_evidence`) takes that item's id and ``source_date``; otherwise it is a
    reasoning claim dated by its ``temporal_ref`` when that parses as a date
    (:func:`~anachron.verify.dates.normalize_declared`), else by the single evidence item
    cited in the reasoning sentence holding its span, else undated.

    With ``cover_evidence`` an evidence item that no LLM claim restates is added as a
    deterministic claim (rule ``"... (evidence item not covered by the LLM extractor)"``), so
    that the LLM never silently drops a declared fact.

    Unusable: empty / not JSON / no ``claims`` list / no claim with text -> ``(None, reason)``.
    """
    ctx: Mapping[str, Any] = context or {}
    items = _evidence_dicts(evidence)
    decoded = decode_json(text, list, ("claims",))
    if decoded.value is None:
        return None, decoded.problem
    raw = decoded.value
    dates = {e["id"]: e["source_date"] for e in items}
    claims: list[Claim] = []
    seen: set[str] = set()
    covered: set[int] = set()
    for c in raw:
        if not isinstance(c, Mapping):
            continue
        ctext = " ".join(str(c.get("text") or "").split())
        if not ctext or not any(ch.isalnum() for ch in ctext):
            continue
        ctext = strip_citations(ctext)
        key = norm_text(ctext)
        if key in seen:
            continue
        seen.add(key)
        span = " ".join(str(c.get("original_span") or "").split()) or None
        tref = " ".join(str(c.get("temporal_ref") or "").split()) or None
        reason = " ".join(str(c.get("category_reason") or "").split())[:MAX_REASON_CHARS]
        cat = _category_of(c.get("category"))
        if cat is None:
            cat, rule = categorize(ctext, ctx)
            rule = f"{rule} (llm category {str(c.get('category'))[:20]!r} invalid)"
        else:
            rule = f"llm: {reason}" if reason else "llm"
        ev = (match_evidence(span, items) if span else None) or match_evidence(ctext, items)
        cites: tuple[int, ...] = ()
        if ev is not None:
            source, eid, declared = "evidence", ev["id"], ev["source_date"]
            covered.add(ev["id"])
        else:
            source, eid, declared = "reasoning", None, None
            if tref and normalize_declared(tref).status != "undated":
                declared = tref
            cites = _cites_of_span(span or ctext, reasoning or "")
            if declared is None:
                known = [k for k in cites if k in dates]
                if len(cites) == 1 and len(known) == 1:
                    declared = dates[known[0]]
        claims.append(
            Claim(text=ctext, source=source, evidence_id=eid, declared_date_raw=declared, category=cat,
                  category_rule=rule, extractor=EXTRACTOR_LLM, temporal_ref=tref, cited_ids=cites,
                  original_span=span)
        )
    if not claims:
        return None, "answer holds no usable claim"
    if cover_evidence:
        for item in items:
            if item["id"] in covered or norm_text(item["fact"]) in seen:
                continue
            seen.add(norm_text(item["fact"]))
            cat, rule = categorize(item["fact"], ctx)
            claims.append(
                Claim(text=item["fact"], source="evidence", evidence_id=item["id"],
                      declared_date_raw=item["source_date"], category=cat,
                      category_rule=f"{rule} (evidence item not covered by the LLM extractor)",
                      extractor=EXTRACTOR_DETERMINISTIC)
            )
    return claims, None


def _context_for(contexts: Any, i: int, row: Any, task_name: str) -> dict[str, Any]:
    ctx: Any = None
    if isinstance(contexts, Mapping):
        ctx = contexts.get(_row_get(row, "instance_id"))
    elif contexts is not None and i < len(contexts):
        ctx = contexts[i]
    out = dict(ctx or {})
    out.setdefault("task", task_name)
    out.setdefault("cutoff_date", _row_get(row, "cutoff_date"))
    return out


def extract_claims_llm(
    client: Any,
    task: Any,
    rows: Sequence[Any] | "pd.DataFrame",
    outputs: Sequence[tuple[Sequence[Any] | None, str | None]],
    params: Mapping[str, Any] | None = None,
    contexts: Sequence[Mapping[str, Any]] | Mapping[str, Mapping[str, Any]] | None = None,
    *,
    max_claims: int = MAX_CLAIMS,
    cover_evidence: bool = True,
    desc: str = "extract claims",
) -> list[tuple[list[Claim], dict[str, Any]]]:
    """LLM claim extraction for many completions in one ``client.complete_many`` batch.

    Args:
        client: an :class:`~anachron.llm.client.LLMClient` (anything with
            ``complete_many(requests, desc=...) -> list[ChatResult]``).
        task: the Task (or its name).
        rows: instance rows (a DataFrame or a list of rows / dicts), aligned with ``outputs``.
        outputs: ``(evidence, reasoning)`` per row.
        params: decoding parameters of the extraction calls.
        contexts: per-row categorization contexts (a list aligned with ``rows``, or a mapping
            ``instance_id -> context``); ``task`` and ``cutoff_date`` are filled in if missing.

    Returns:
        One ``(claims, trace)`` per row, in order. ``trace`` = ``{"step": "extract_claims",
        "extractor": "llm"|"deterministic", "reason": None|str, "cache_key": str|None,
        "n_claims": int}``. A row with nothing to extract makes no call (reason ``"nothing to
        extract"``); an LLM error or an unusable answer (:func:`parse_extraction`) falls back to
        :func:`extract_claims`, the reason recorded.
    """
    task_name = str(getattr(task, "name", task) or "")
    if hasattr(rows, "iterrows"):
        rows = [r for _, r in rows.iterrows()]  # type: ignore[union-attr]
    rows = list(rows)
    if len(rows) != len(outputs):
        raise ValueError(f"rows ({len(rows)}) and outputs ({len(outputs)}) differ in length")
    ctxs = [_context_for(contexts, i, row, task_name) for i, row in enumerate(rows)]
    todo: list[int] = []
    requests: list[ChatRequest] = []
    for i, (row, (evidence, reasoning)) in enumerate(zip(rows, outputs)):
        if _evidence_dicts(evidence) or (reasoning or "").strip():
            todo.append(i)
            requests.append(extraction_request(task, row, evidence, reasoning, params, max_claims=max_claims))
    results = client.complete_many(requests, desc=desc) if requests else []
    by_row = dict(zip(todo, results))
    out: list[tuple[list[Claim], dict[str, Any]]] = []
    for i, (evidence, reasoning) in enumerate(outputs):
        trace: dict[str, Any] = {"step": "extract_claims", "extractor": EXTRACTOR_LLM, "reason": None, "cache_key": None}
        res = by_row.get(i)
        claims: list[Claim] | None = None
        if res is None:
            trace.update(extractor=EXTRACTOR_DETERMINISTIC, reason="nothing to extract")
        else:
            trace["cache_key"] = res.cache_key or None
            if res.error is not None:
                trace["reason"] = f"llm error: {res.error}"
            else:
                claims, why = parse_extraction(res.text, evidence, reasoning, ctxs[i], cover_evidence=cover_evidence)
                trace["reason"] = why
        if claims is None:
            if trace["extractor"] == EXTRACTOR_LLM:
                trace["extractor"] = EXTRACTOR_DETERMINISTIC
                trace["reason"] = f"fallback to deterministic extractor: {trace['reason']}"
            claims = extract_claims(evidence, reasoning, ctxs[i])
        trace["n_claims"] = len(claims)
        out.append((claims, trace))
    return out
