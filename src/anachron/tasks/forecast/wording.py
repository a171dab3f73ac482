"""Forecast: how a claim's wording relates to the instance's question.

The grounded resolution check (:class:`anachron.tasks.forecast.grounding.ResolutionGrounding`)
reads a claim through these:

* :func:`question_sentence`: the question proper (its first sentence, without a "[tag]");
* :func:`content`: stemmed content words, with words of one kind of event mapped to one
  token (:data:`EVENT_KINDS`: "cut", "lowered", "decreases" -> ``~down``; "defeated", "won" ->
  ``~win``) and rate steps written as one token ("25 bps", "a quarter-point" -> ``#0.25pp``),
  so that a paraphrase shares the question's words;
* :func:`names`: the question's names (capitalised words, quoted terms; months are times, not
  names), and :func:`restates`: whether a claim restates all of the question's event;
* :func:`says_yes`: whether a claim states the question's event as happened (True), as not
  happened (False: "did not", "failed to", "never", or the opposite kind of event, "lost" for
  "win") or neither (None: it does not state the question's event);
* :func:`month_anchors`: the months a claim names without a year, placed on the calendar of
  the question (the latest such month that begins on or before the resolution date).
"""

from __future__ import annotations

import calendar
import datetime as dt
import functools
import re
from dataclasses import dataclass

from anachron.verify.dates import Period, find_periods
from anachron.verify.features import stem as _features_stem
from anachron.verify.features import yearless_months
from anachron.words import QUESTION_STOP_WORDS

#: Where the core of a question ends ("Will X win the election | in 2026?"): its adjuncts of time
#: and manner begin.
_ADJUNCT = re.compile(
    r"\s(?:by|at|before|after|in|on|during|for|between|as|than|from|until|within|over|under|with|without|"
    r"compared|according)\s|[?,;(]",
    re.I,
)
#: Words whose absence from the question's names is no loss: question and auxiliary words.
_QUESTION_WORDS = frozenset("will what which who how when is are does do did has have according by in if".split())

#: Suffixes a stem loses (longest first; the stem keeps 3+ letters): "nomination" / "nominee"
#: -> "nomin", "election" / "elected" -> "elect", "presidential" -> "president".
_SUFFIXES = (
    "ations", "ation", "ments", "ment", "ities", "ity", "ings", "ing", "ions", "ion", "ials", "ial", "ees", "ee",
    "ed", "es", "s", "e",
)

#: Kinds of event, each by the words of it (stemmed by :func:`stem` when looked up): words of
#: one kind share a token, so a paraphrase matches the question ("cut" for "decreases",
#: "defeated" for "win"). ``~up``/``~down`` and ``~win``/``~lose`` are opposites.
EVENT_KINDS: dict[str, tuple[str, ...]] = {
    "~win": ("win", "won", "victory", "victorious", "defeat", "beat", "prevail", "clinch", "triumph", "capture"),
    "~lose": ("lose", "lost", "loss", "eliminated", "concede", "ousted"),
    "~up": ("increase", "raise", "hike", "rise", "rose", "climb", "grow", "grew", "gain", "exceed", "surpass",
            "top", "topped", "jump", "surge", "higher", "greater", "above", "warmer", "stronger", "advance"),
    "~down": ("decrease", "cut", "lower", "reduce", "decline", "drop", "dropped", "fall", "fell", "slash", "ease",
              "shrink", "plunge", "below", "weaker", "cooler", "smaller", "fewer"),
    "~nominee": ("nominee", "nomination", "nominated"),
    "~announce": ("announce", "unveil", "launch", "release", "introduce", "debut", "reveal", "publish", "show"),
    "~leave": ("retire", "retirement", "resign", "resignation", "quit", "leave", "left", "depart", "departure",
               "exit", "oust", "removed", "removal"),
    "~agree": ("agree", "agreement", "sign", "deal", "accord", "pact", "truce"),
    "~happen": ("occur", "happen"),
    "~delay": ("delay", "postpone", "postponement"),
    "~create": ("create", "creation", "found", "establish", "formed"),
    "~retain": ("retain", "defend", "repeat", "keep", "kept", "remain", "stay", "stayed", "continue"),
}
#: The kinds of event that are the opposite of each kind (keeping a title is not losing it).
OPPOSITE: dict[str, frozenset[str]] = {
    "~win": frozenset({"~lose"}), "~lose": frozenset({"~win", "~retain"}), "~up": frozenset({"~down"}),
    "~down": frozenset({"~up"}), "~retain": frozenset({"~lose", "~leave"}), "~leave": frozenset({"~retain"}),
}

#: Rate steps: "25 bps", "25 basis points", "0.25 percentage point", "a quarter-point", "half a point".
_RATE_STEP = re.compile(
    r"\b(\d+(?:\.\d+)?)\s*(?:bps?|basis[- ]points?)\b|\b(\d+(?:\.\d+)?)\s*(?:percentage[- ]points?|pp|points?)\b"
    r"|\b(quarter|half)(?:[- ]of[- ]a)?[- ](?:percentage[- ])?point\b|\bhalf\s+a\s+(?:percentage\s+)?point\b",
    re.I,
)
#: Negation of what follows: "did not", "didn't", "never", "failed to", "no", "without".
_NEGATION = re.compile(
    r"\b(?:not|never|no|none|neither|nor|without|failed\s+to|fail(?:s|ing)?\s+to|fell\s+short|missed|"
    r"\w+n['’]t)\b",
    re.I,
)


_ACRONYM = re.compile(r"\b(?:[A-Z]\.){2,}")


def _plain_acronyms(text: str) -> str:
    """``text`` with dotted acronyms written plain ("U.S." -> "US")."""
    return _ACRONYM.sub(lambda m: m[0].replace(".", ""), text)


def question_sentence(question: str) -> str:
    """The question proper: up to its first "?" (or its first line), without a leading
    "[tag]" ("[Single Market] Will ...")."""
    q = re.sub(r"^\s*(?:\[[^\]]{0,60}\]\s*)+", "", str(question or "")).strip()
    q = q.split("\n")[0]
    i = q.find("?")
    return q[: i + 1] if i >= 0 else q


def stem(word: str) -> str:
    """A light stem of ``word`` (:func:`anachron.verify.features.stem` with the longer suffix list
    :data:`_SUFFIXES`: "nomination" / "nominee" -> "nomin")."""
    return _features_stem(word, _SUFFIXES)


def _inflections(word: str) -> set[str]:
    """``word`` with -s, -ed and -ing endings (regular spelling; doubled final consonants too)."""
    base = word[:-1] if word.endswith("e") else word
    out = {word, word + "s", word + "es", base + "ed", base + "ing"}
    if re.search(r"[^aeiou][aeiou][bdgmnpt]$", word):
        out |= {word + word[-1] + "ed", word + word[-1] + "ing"}
    return out


_KIND_OF = {stem(f): k for k, words in EVENT_KINDS.items() for w in words for f in _inflections(w)}


def _kind(s: str) -> str | None:
    """The event kind of stem ``s`` (:data:`EVENT_KINDS`), or None."""
    return _KIND_OF.get(s)


_PERCENT_FIGURE = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s?(?:%|percent\b(?!age)|per\s+cent\b)", re.I)


def rate_steps(text: str) -> set[str]:
    """Rate steps in ``text`` as tokens in percentage points ("25 bps" -> ``#0.25pp``)."""
    out = set()
    for m in _RATE_STEP.finditer(text):
        if m[1]:
            v = float(m[1]) / 100.0
        elif m[2]:
            v = float(m[2])
        else:
            v = 0.25 if (m[3] or "").lower() == "quarter" else 0.5
        out.add(f"#{v:g}pp")
    return out


#: A defeat in the passive ("was defeated", "were beaten"): the subject lost.
_PASSIVE_DEFEAT = re.compile(r"\b(?:was|were|been|being|is|are)\s+(?:\w+ly\s+)?(?:defeated|beaten|beat|outvoted)\b", re.I)


def content(text: str) -> set[str]:
    """Content tokens of ``text``: stems of its words (no stop words, no numbers: dates are
    anchors, not subject), a word of an event kind as that kind's token ("was defeated" as a
    loss), rate steps and percentages (``#4%``)."""
    out = rate_steps(text) | {f"#{float(m[1]):g}%" for m in _PERCENT_FIGURE.finditer(text)}
    text = _PASSIVE_DEFEAT.sub(" lost ", _RATE_STEP.sub(" ", _plain_acronyms(text)))
    for w in re.findall(r"[A-Za-z][A-Za-z'’]+", text):
        if w.lower() in QUESTION_STOP_WORDS or len(w) < 2:
            continue
        s = stem(w)
        out.add(_kind(s) or s)
    return out


def names(question: str) -> set[str]:
    """Names in a question (stemmed): capitalised words other than a leading question word,
    tickers, quoted terms; months are times, not names."""
    out: set[str] = set()
    question = _plain_acronyms(question)
    for m in re.finditer(r"['‘\"“]([^'’\"”]{2,40})['’\"”]", question):
        out |= {stem(w) for w in re.findall(r"[A-Za-z]+", m[1]) if w.lower() not in QUESTION_STOP_WORDS}
    words = re.findall(r"[A-Za-z][A-Za-z'’&.-]*", question)
    if words and words[0].lower() in _QUESTION_WORDS:
        words = words[1:]
    for w in words:
        core = w.rstrip(".")
        if not core[:1].isupper() or core.lower() in QUESTION_STOP_WORDS or core.lower() in {"fide", "wikipedia"}:
            continue
        if yearless_months(core):
            continue
        out.add(_kind(stem(core)) or stem(core))
    return {e for e in out if len(e) > 1}


def name_heads(question: str) -> set[str]:
    """The last word (stemmed) of each run of capitalised words of a question ("Dana Whitfield"
    -> ``whitfield``, "New Jersey Governor Election" -> ``elect``): the word a restatement
    of the question's event cannot leave out (a first name can go, the election cannot)."""
    words = re.findall(r"[A-Za-z][A-Za-z'’&.-]*|[^A-Za-z\s]+", _plain_acronyms(question))
    if words and words[0].lower() in _QUESTION_WORDS:
        words = words[1:]
    heads, run = set(), []
    for w in [*words, "."]:
        core = w.rstrip(".")
        if core[:1].isupper() and core.lower() not in QUESTION_STOP_WORDS and not yearless_months(core):
            run.append(core)
            if w.endswith("."):
                heads.add(_kind(stem(run[-1])) or stem(run[-1]))
                run = []
            continue
        if run:
            heads.add(_kind(stem(run[-1])) or stem(run[-1]))
        run = []
    return {h for h in heads if len(h) > 1}


@dataclass(frozen=True)
class Question:
    """A question as the claims are compared with it (:func:`read_question`).

    Attributes:
        raw: its first paragraph; sentence: :func:`question_sentence`; tokens: its
        :func:`content`; names: :func:`names`; heads: :func:`name_heads`; head:
        :func:`core_head`; years: the years it names (calendar or fiscal).
    """

    raw: str
    sentence: str
    tokens: frozenset[str]
    names: frozenset[str]
    heads: frozenset[str]
    head: str | None
    years: frozenset[int]


@functools.lru_cache(maxsize=4096)
def read_question(question: str) -> Question:
    """The :class:`Question` of a question text (cached: every claim of an instance asks)."""
    raw = str(question or "").split("\n\n")[0].strip()
    sentence = question_sentence(raw)
    years = {p.start.year for p in find_periods(sentence) if p.kind in ("year", "fiscal_year")}
    return Question(raw, sentence, frozenset(content(sentence)), frozenset(names(sentence)),
                    frozenset(name_heads(sentence)), core_head(sentence), frozenset(years))


def core_head(sentence: str) -> str | None:
    """The last content token of the question's core, before its first adjunct ("Will X lower
    its policy rate | by 50 basis points at ...?" -> ``rat``): the thing the event is about."""
    words = re.split(r"\s+", re.sub(r"^according\s+to\s+[^,]{1,40},\s*", "", sentence.strip(), flags=re.I))
    if words and words[0].lower() in _QUESTION_WORDS:
        words = words[1:]
    rest = " ".join(words)
    cut = _ADJUNCT.search(rest, 1)
    core = rest[: cut.start()] if cut else rest
    for w in reversed(re.findall(r"[A-Za-z][A-Za-z'’]+", _plain_acronyms(core))):
        if w.lower() not in QUESTION_STOP_WORDS and len(w) > 1:
            return _kind(stem(w)) or stem(w)
    return None


def restates(q: Question, claim_tokens: set[str]) -> bool:
    """Whether a claim (its tokens ``claim_tokens``) restates the whole of the question's event:
    the head of each of its names (:func:`name_heads`) and of its core (:func:`core_head`),
    each kind of event it asks about (or the opposite kind), each rate step, and at least half
    of its other content words."""
    heads = set(q.heads) | ({q.head} if q.head else set())
    for h in heads:
        if h not in claim_tokens and not OPPOSITE.get(h, frozenset()) & claim_tokens:
            return False
    others = q.tokens - q.names
    kinds = event_kinds(others)
    if any(k not in claim_tokens and not OPPOSITE.get(k, frozenset()) & claim_tokens for k in kinds):
        return False
    steps = {t for t in others if t.startswith("#")}
    rest = others - kinds - steps
    return steps <= claim_tokens and 2 * len(rest & claim_tokens) >= len(rest)


def event_kinds(tokens: set[str]) -> set[str]:
    """The event-kind tokens among ``tokens``."""
    return {t for t in tokens if t.startswith("~")}


def says_yes(claim: str, predicate: set[str], claim_tokens: set[str]) -> bool | None:
    """Whether ``claim`` states the question's event as happened.

    ``predicate``: the question's content tokens that are not names. None when the claim
    states none of them nor the opposite of its event kind; otherwise True, flipped once by a
    negation ("did not", "failed to", "never", "no") and once by the opposite event kind
    ("lost" for a question about winning). A question of names only ("Will X be the Y
    Nominee?") leaves the negation alone to decide (the caller checks the names)."""
    negated = bool(_NEGATION.search(claim))
    if not predicate:
        return not negated  # the question is all names ("Will X be the Y Nominee?"): the claim's negation decides
    kinds = event_kinds(predicate)
    opposite = set().union(*(OPPOSITE.get(k, frozenset()) for k in kinds)) & claim_tokens
    same = (predicate & claim_tokens) - {t for t in predicate if not t.startswith("~") and len(t) < 3}
    if not same and not opposite:
        return None
    yes = not (opposite and not (kinds & claim_tokens))
    return not yes if negated else yes


def month_anchors(claim: str, resolution: dt.date) -> list[Period]:
    """The months ``claim`` names without a year, each as the latest such month that begins on
    or before ``resolution`` ("October" with a resolution on 2025-10-29 -> October 2025)."""
    out = []
    for month in yearless_months(claim):
        year = resolution.year if month <= resolution.month else resolution.year - 1
        last = calendar.monthrange(year, month)[1]
        out.append(Period("month", dt.date(year, month, 1), dt.date(year, month, last), calendar.month_name[month]))
    return out
