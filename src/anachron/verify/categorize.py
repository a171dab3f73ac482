"""The claim categoriser: :func:`categorize` assigns a category of the temporal taxonomy
(:mod:`anachron.verify.taxonomy`) by deterministic rules.

The generic rules (definitions, publications, quantities, event verbs) are here; the rules for
the instance's own outcome (A4) and its consequences (A5) come from the task the caller puts in
the context (``context["task"]``, :class:`~anachron.verify.task_rules.TaskRules`: each task
package's ``claims`` module, built on :mod:`anachron.verify.features`).
"""

from __future__ import annotations

import functools
import re
from typing import Any, Mapping

from anachron.verify.task_rules import GENERIC_OUTCOME_NOUNS, TaskRules, context_task
from anachron.verify.features import all_before, context_cutoff, has_number, has_time_ref
from anachron.words import HEDGE_SPECULATIVE

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
#: Event verbs (acquired, signed, launched, won, ruled ...): an A1 claim, and what makes a named event.
EVENT_VERB = re.compile(
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


def _a5(text: str, context: Mapping[str, Any], task: TaskRules | None) -> str | None:
    """The A5 rule (a consequence of, or reaction to, the instance's outcome) or None."""
    nouns = task.outcome_nouns if task is not None else GENERIC_OUTCOME_NOUNS
    lead, react = _a5_regexes(nouns)
    m = lead.search(text)
    rule = "A5:consequence-of-outcome" if m else None
    if m is None and react.search(text):
        rule = "A5:reaction-to-outcome"
    if rule is None or HEDGE_SPECULATIVE.search(text):
        return None
    if all_before(text, context_cutoff(context)):
        return None
    if task is not None and not task.is_consequence(text, context):
        return None
    return rule


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
       ruling"), with the task's :attr:`~anachron.tasks.base.Task.outcome_nouns` (without a
       task, only :data:`~anachron.verify.task_rules.GENERIC_OUTCOME_NOUNS`); not hedged, not when every date is before the
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
            plus ``{"task": <the Task>}``. None, or no ``task``: no A4 rule applies and A5 uses
            only the generic outcome nouns.

    Raises:
        TypeError: ``context["task"]`` is a name rather than the task (:func:`~anachron.verify.task_rules.context_task`).

    Taxonomy: TimeSPEC (Zhang et al. 2026b), as summarised in the TEMPO paper App. F.3, and
    the worked examples of its task-sensitivity probe (Table 4).
    """
    ctx: Mapping[str, Any] = context or {}
    text = " ".join(str(text).split())
    timed = has_time_ref(text)
    event = bool(EVENT_VERB.search(text))
    if _DEFINITION.search(text) and not timed and not event:
        return "B2", "B2:definition"
    task = context_task(ctx)
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
