"""Forecast: the grounded checks: the question's own resolution (:class:`ResolutionGrounding`),
then the shared market checks (forecast questions are about prices, company figures and
index members too)."""

from __future__ import annotations

import datetime as dt
import logging
import os
import re
from typing import Any, Mapping

from anachron.tasks.forecast.wording import content, month_anchors, read_question, restates, says_yes
from anachron.verify.dates import find_periods, unquoted
from anachron.verify.features import LOOKING_BACK
from anachron.verify.layers.grounded import CompositeGrounding, GroundedVerdict
from anachron.verify.layers.rules import PROSPECTIVE, date_scopes
from anachron.verify.layers.market import market_checks
from anachron.words import HEDGE_FORWARD_LOOKING, PERFECT_NEGATED

log = logging.getLogger(__name__)


def make_forecast_grounding(inputs: Mapping[str, str | os.PathLike[str]]) -> CompositeGrounding:
    """:class:`ResolutionGrounding` first, then the market checks of whichever files ``inputs``
    names (:func:`~anachron.verify.layers.market.market_checks`)."""
    checks = [ResolutionGrounding(), *market_checks(inputs)]
    log.info("forecast grounding: %s", [type(c).__name__ for c in checks])
    return CompositeGrounding(checks)


_EXPLICIT_RESOLUTION = re.compile(
    r"\b(?:question|market|it)\s+(?:ultimately\s+|eventually\s+|finally\s+)?resolved\b|"
    r"\bresolved\s+(?:as\s+|to\s+)?(?:yes|no|positively|negatively|true|false|in\s+the\s+affirmative|in\s+the\s+negative)\b|"
    r"\bresolution\s*(?:was|:)\s*(?:yes|no|positive|negative)\b",
    re.I,
)
_OUTCOME_WORDS = re.compile(
    r"\b(?:end(?:ed|s|ing)?\s+up|turned\s+out|ultimately|eventually|in\s+the\s+end|final(?:ly)?|by\s+the\s+deadline|"
    r"at\s+(?:the\s+)?resolution|on\s+the\s+resolution\s+date|as\s+of\s+the\s+resolution\s+date)\b",
    re.I,
)
_REALISED = re.compile(
    r"\b(?:was|were|had|did|didn['’]t|won|lost|rose|fell|grew|hit|reached|became|closed|finished|ended|occurred|"
    r"happened|remained|stayed|exceeded|surpassed|passed|failed|declined|increased|decreased|dropped|climbed|"
    r"gained|came|went|saw|took|beat|defeated|released|launched|developed|approved|signed|elected|qualified|"
    r"cut|led|held|made|left|paid|sold|kept|met|ran|struck|shot|began|chose|spent|won|lost|"
    r"[a-z]{3,}ed)\b",
    re.I,
)


#: Words that state a negative outcome of whatever the question asks ("Canada lost in the quarter-finals").
_NEGATIVE_OUTCOME = re.compile(
    r"\b(?:lost|los(?:e|es|ing)|eliminated|failed|missed|fell\s+short|did\s+not|didn['’]t|never|no\s+longer|"
    r"(?:knocked|bowed|crashed|voted)\s+out|exited|ousted)\b",
    re.I,
)


#: The claim (outside quotes) gives an answer: "turned out to be yes", "resolved NO", "the answer
#: was no", "came out negative".
_ANSWER = re.compile(
    r"\b(?:resolved|resolves|resolution|answer(?:ed)?|outcome|result|turned\s+out|ended\s+up|came\s+out|was|is|proved|proven)\b"
    r"[^.;]{0,40}?\b(?:yes|no(?!\s+(?:longer|later|earlier|more|one|data|information|clear|date))|true|false|positive(?:ly)?|negative(?:ly)?|affirmative|in\s+the\s+negative|correct|incorrect)\b",
    re.I,
)
_QUOTE_SPANS = re.compile(r"\"([^\"]{12,})\"|“([^”]{12,})”|‘([^’]{12,})’")
#: A quoted question counts as the instance's own when it is its first this-many characters or more.
QUOTE_MIN_CHARS = 20


def _norm_q(text: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"[‘’]", "'", re.sub(r"[“”]", '"', text))).strip().lower()


_QUESTION_START = re.compile(r"^(?:will|what|which|who|how|when|is|are|does|do|did|has|have|according|by|in)\b", re.I)


def _quotes_question(fact: str, question: str) -> bool | None:
    """Whether ``fact`` quotes the instance's question.

    True: a quoted span that, without a trailing ellipsis, is the question's text or its first
    :data:`QUOTE_MIN_CHARS`+ characters (placeholders filled, whitespace and quote styles
    normalised). False: it quotes another question (a span that starts like a question or ends
    with "?" / an ellipsis). None: it quotes no question."""
    q = _norm_q(question)
    other = False
    for m in _QUOTE_SPANS.finditer(fact):
        raw = _norm_q(next(g for g in m.groups() if g))
        span = re.sub(r"\s*(?:\.\.\.|…)\s*$", "", raw).strip()
        if len(span) >= min(QUOTE_MIN_CHARS, len(q)) and q.startswith(span):
            return True
        if _QUESTION_START.match(span) or raw.endswith(("?", "...", "…")):
            other = True
    return False if other else None


class ResolutionGrounding:
    """Forecast task: a claim that states how the question itself resolved is the outcome (A4),
    leaked by definition and dated at the resolution date.

    The instance context (``ForecastTask.grounding_context``) gives ``question`` (placeholders
    filled), ``resolution_date``, ``resolved_to`` and ``cutoff_date``. The claim is read
    through :mod:`anachron.tasks.forecast.wording` (the question proper, stems, kinds of
    event, names, polarity). Conservative by design (planted clean claims must stay clean):
    the claim must

    * quote the question (its text, or its first 20+ characters before an ellipsis) and give
      an answer outside the quote ("The answer to \"Will ...?\" turned out to be no"): the
      outcome, whatever else the claim says; otherwise
    * share the question's subject: at least half of the question's names (capitalised words,
      tickers, quoted terms; at least one) and a share of at least ``min_overlap`` of the
      content tokens of the shorter of question and claim (at least two);
    * speak of the resolution itself: an explicit "resolved Yes/No", or outcome words ("ended
      up", "ultimately", "in the end", ...) or a year the question names that is not over by
      the cutoff, with a realised (past-tense) statement of the question's event or a negative
      outcome ("did not", "failed", "lost"); or a realised statement anchored at the question's
      horizon: a day or month, written with or without its year, that holds the resolution date
      or lies between the cutoff and it; or, with no time reference at all (none looking back:
      "last month"), a realised statement (not a state: "has never won") of the whole of the
      question's event (:func:`~anachron.tasks.forecast.wording.restates`, in other words too:
      "defeated" for "win", "cut" for "decreases") whose polarity
      (:func:`~anachron.tasks.forecast.wording.says_yes`: negations, the opposite kind of
      event) is the recorded resolution;
    * not be hedged or forward-looking ("will", "expected", "odds", ...; words inside quotation
      marks, such as a quoted question, do not count), and not be anchored
      only at a period that ended by the cutoff (that is history, not the resolution).
    """

    def __init__(self, min_overlap: float = 0.5):
        self.min_overlap = min_overlap

    def check(self, fact: str, instance: dict[str, Any]) -> GroundedVerdict | None:
        """Return a leaked A4 verdict at ``resolution_date`` when ``fact`` states the resolution."""
        q = read_question(str(instance.get("question") or ""))
        raw, question = q.raw, q.sentence
        res_raw = instance.get("resolution_date")
        if not question or not res_raw:
            return None
        resolution = dt.date.fromisoformat(str(res_raw)[:10])
        cutoff = dt.date.fromisoformat(str(instance["cutoff_date"])[:10]) if instance.get("cutoff_date") else None
        explicit = bool(_EXPLICIT_RESOLUTION.search(fact))
        quoted = _quotes_question(fact, raw)
        if quoted is not True and question != raw:
            quoted = _quotes_question(fact, question) or quoted
        if quoted is True and _ANSWER.search(unquoted(fact)):
            return self._verdict(resolution, instance, "quotes the question and states its answer")
        if quoted is False:
            return None  # the claim is about another, quoted question
        plain = unquoted(fact)
        if HEDGE_FORWARD_LOOKING.search(plain) and not explicit:
            return None
        q_words, f_words = q.tokens, content(fact)
        if not q_words or not f_words:
            return None
        ents = q.names
        if ents and len(ents & f_words) < max(1, (len(ents) + 1) // 2):
            return None
        shared = q_words & f_words
        overlap = len(shared) / min(len(q_words), len(f_words))
        if len(shared) < min(2, len(q_words)) or overlap < (self.min_overlap if not explicit else self.min_overlap / 2):
            return None
        periods = find_periods(fact)
        if periods:  # a deadline or schedule the claim names ("have until November 3 to register") is no horizon reached
            scopes = date_scopes(fact, [(p.pos, p.pos + len(p.text)) for p in periods])
            periods = [p for p, s in zip(periods, scopes) if s != PROSPECTIVE]
        dated = [*periods, *month_anchors(plain, resolution)]
        days = [p for p in dated if p.kind in ("day", "month")]
        horizon = any(p.start <= resolution <= p.end for p in days)
        between = cutoff is not None and any(cutoff < p.start and p.end <= resolution for p in days)
        open_years = {y for y in q.years if cutoff is None or dt.date(y, 12, 31) > cutoff}
        year_anchor = any(p.kind in ("year", "fiscal_year") and p.start.year in open_years for p in periods)
        history = bool(dated) and cutoff is not None and all(p.end <= cutoff for p in dated)
        if history and not explicit:
            return None
        realised = bool(_REALISED.search(fact))
        # the question's predicate (its content words that are not names) restated, or a negative outcome
        predicate = q_words - ents
        yes = says_yes(plain, predicate, f_words)
        says_predicate = not predicate or yes is not None or bool(_NEGATIVE_OUTCOME.search(fact))
        outcome_words = bool(_OUTCOME_WORDS.search(fact))
        if explicit or (realised and horizon) or (realised and says_predicate and (outcome_words or year_anchor or between)):
            return self._verdict(resolution, instance)
        resolved_to = instance.get("resolved_to")
        if (
            realised
            and not dated
            and not LOOKING_BACK.search(plain)
            and not PERFECT_NEGATED.search(plain)
            and yes is not None
            and resolved_to is not None
            and yes == bool(float(resolved_to))
            and restates(q, f_words)
        ):
            return self._verdict(resolution, instance, f"restates the question's event as {'happened' if yes else 'not happened'}")
        return None

    @staticmethod
    def _verdict(resolution: dt.date, instance: dict[str, Any], how: str = "") -> GroundedVerdict:
        outcome = instance.get("resolved_to")
        note = f"; recorded resolution {outcome}" if outcome is not None else ""
        how = f"; {how}" if how else ""
        return GroundedVerdict(
            resolution,
            f"states how the question resolved (resolution date {resolution}){how}{note}",
            outcome=True,
            category="A4",
        )
