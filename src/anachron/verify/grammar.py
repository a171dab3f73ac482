"""The grammar that decides whether a date in a claim is the date of something that happened
(docs/verification.md#realized-vs-prospective).

A period or date inside a fact dates the fact only when the fact asserts that something in it
happened or was reported. Forecasts, guidance, outlooks, plans, schedules, targets, pledges,
deadlines and options are dated by when they were made, so a date that belongs to one of them is
*prospective*: the statement is about that period, not from it. A statement can be both: in "3M
cut its full-year 2019 guidance", the cut is an event on its (declared) day and 2019 is only the
period the guidance is for.

Three grammatical relations make a date prospective here, each read within the date's clause
(no parser: the relations are found from word classes, which are closed sets of English
grammar, and from the noun's place in its phrase):

* **the date modifies a planning noun**: the date is a premodifier in a noun phrase whose head
  (its last noun) is a noun of planned, projected or contracted quantities (:data:`PLANNED_NOUNS`:
  guidance, outlook, forecast, projection, estimate, target, plan, budget, schedule, deadline,
  goal, pledge, option, a contract's salary or guarantee, ...): "its full-year 2019 adjusted EPS
  guidance", "the 2020 capital budget" (not "the 2020-21 salary cap": its head is the cap); or
  the object of a preposition attached to such a noun: "a player option for the 2020-21 season",
  "his salary for 2022-23", "guidance for fiscal 2020" (:func:`modifies_planned_noun`);
* **the date is in the predicate of a planning subject**: the clause's subject is headed by a
  planning noun and the date follows its verb: "League projections put the 2020-21 cap at $117
  million", "the consensus estimate calls for 2020 EPS of $3" (:func:`planned_subject`);
* **the date is in the complement of a verb of expectation, commitment, obligation or
  permission** (expect, anticipate, predict, forecast, project, plan, intend, aim, hope, pledge,
  promise, commit, vow, target, propose, seek, require, oblige, mandate, compel, allow, permit;
  any inflection) that takes an infinitive or a "for" / "by" object before the date:
  "expected La Nina conditions to persist through February 2026", "pledged to reach net zero by
  2040" (:func:`expectation_complement`). "As expected" and "than expected" compare a result with
  an expectation and are not one.

The modal and schedule markers ("will", "set to", "scheduled for", ...) are read in
:mod:`anachron.verify.layers.rules`; this module adds the relations above to them.

Every function reads at most :data:`REACH` characters around the date, so the time per claim is
bounded for any length of text.
"""

from __future__ import annotations

import re

from anachron.verify.dates import find_periods, find_yearless
from anachron.words import IRREGULAR_PAST

#: Nouns of planned, projected or optional quantities: what a statement about the future is about.
PLANNED_NOUNS = frozenset(
    "guidance outlook outlooks forecast forecasts projection projections estimate estimates target targets "
    "goal goals plan plans budget budgets schedule schedules timetable timeline deadline deadlines pledge pledges "
    "commitment commitments option options expectation expectations consensus prediction predictions view "
    "salary salaries guarantee guarantees date dates pick picks first-rounder first-rounders second-rounder second-rounders".split()
)
#: Function words of English (closed classes): determiners, pronouns, prepositions,
#: conjunctions, auxiliaries. A phrase's modifiers are none of these.
FUNCTION_WORDS = frozenset(
    "a an the this that these those its their his her our your my some any each every no all both either neither "
    "of for in on at by to from with without into onto over under about after before during through until since "
    "against among between per via than as and or but nor so yet if while whereas because although though "
    "is are was were be been being am has have had do does did will would shall should can could may might must "
    "which who whom whose what when where why how it they he she we you i".split()
)
#: Adverbs that end a noun phrase (with the words in -ly): "its 2019 forecast again".
ADVERBS = frozenset("again also still now once twice further even already then too instead anew".split())
#: Prepositions that place an event in time ("at the deadline", "by the 2020 deadline").
_WHEN = frozenset("at on by after before during until till since around near ahead".split())
#: Prepositions that attach a period to a planning noun ("option for", "guidance of").
_ATTACH = frozenset("for of covering through until to".split())
#: Verbs of expectation or commitment, by stem (every inflection: expected, expects, expecting).
_EXPECT = re.compile(
    r"(?<![\w-])(?<!\bthan\s)(?<!\bas\s)(?<!\bthan\s\w{4})(?:"
    r"expect(?:s|ed|ing)?|anticipat(?:e|es|ed|ing)|predict(?:s|ed|ing)?|forecast(?:s|ing)?|projects?(?=\s+(?:that|its|their|\w+\s+to\b))|"
    r"projected|projecting|plan(?:s|ned|ning)?(?=\s+to\b)|intend(?:s|ed|ing)?|aim(?:s|ed|ing)?|hop(?:e|es|ed|ing)|"
    r"pledg(?:e|es|ed|ing)|promis(?:e|es|ed|ing)|commit(?:s|ted|ting)?|vow(?:s|ed|ing)?|target(?:s|ed|ing)(?=\s)|"
    r"propos(?:e|es|ed|ing)|seek(?:s|ing)?|sought|guid(?:e|es|ed|ing)(?=\s)|"
    # verbs of scheduling: their object is set for a time to come ("scheduled hearings to begin March 20")
    r"schedul(?:e|es|ed|ing)|slat(?:e|es|ed|ing)|calendar(?:s|ed|ing)|book(?:s|ed|ing)(?=\s)|"
    # verbs of obligation and permission: their infinitive is still to be done ("requires X to divest by")
    r"requir(?:e|es|ed|ing)|oblig(?:e|es|ed|ing)|mandat(?:e|es|ed|ing)|compel(?:s|led|ling)?|allow(?:s|ed|ing)?|"
    r"permit(?:s|ted|ting)?|enabl(?:e|es|ed|ing))(?![\w-])"
)
#: An infinitive or a goal after the verb: "to persist", "to reach", "for", "by".
_INFINITIVE = re.compile(r"\bto\s+(?!the\b|a\b|an\b|its\b|their\b|\$|\d)[a-z]+\b|\b(?:for|by)\b", re.I)
_WORDS = re.compile(r"[A-Za-z][A-Za-z'’-]*|\d[\d.,%$-]*|[^\sA-Za-z\d]")
_NOUN_SUFFIX = re.compile(r"(?:ion|ions|ment|ments|ity|ness|ance|ence|ship|ers?|ors?)$", re.I)
#: Characters read around a date.
REACH = 160


def _tokens(text: str) -> list[str]:
    return _WORDS.findall(text)


def _is_verb_like(word: str) -> bool:
    """A word that can be a finite verb here: lower-case letters, not a function word, not a
    planning noun, not shaped like a noun (suffixes -ion, -ment, -ity, -ness, -ance, -er ...)."""
    w = word.lower()
    return (
        word.isalpha()
        and word == w
        and w not in FUNCTION_WORDS
        and w not in PLANNED_NOUNS
        and not _NOUN_SUFFIX.search(w)
    )


def modifies_planned_noun(text: str, start: int, end: int) -> bool:
    """True when the date at ``text[start:end]`` modifies a planning noun: it premodifies a noun
    phrase headed by one ("its full-year 2019 adjusted EPS guidance"), or it is the object of a
    preposition attached to one with only modifiers between ("a player option for the 2020-21
    season"). See the module docstring."""
    after = _tokens(text[end : end + REACH])
    head = None
    for k, w in enumerate(after[:6]):
        lw = w.lower()
        if lw in ("'s", "’s", "-") or (k == 0 and lw in ("'", "’")):
            continue
        if not (w[:1].isalpha() or w[:1].isdigit()) or lw in FUNCTION_WORDS or lw in ADVERBS or (len(lw) > 4 and lw.endswith("ly")):
            break
        # a past form followed by a determiner, a number or a preposition is the clause's verb
        if lw.endswith("ed") and k + 1 < len(after) and (after[k + 1].lower() in FUNCTION_WORDS or after[k + 1][:1] in "$0123456789"):
            break
        head = lw  # the phrase's head is its last noun
    before = _tokens(text[max(0, start - REACH) : start])
    if head in PLANNED_NOUNS:
        # "at that season's trade deadline", "by the 2020 deadline": the time of the event the
        # clause reports, not the content of a plan
        j = len(before) - 1
        while j >= 0 and before[j].lower() in ("the", "its", "their", "his", "her", "a", "an", "this", "that"):
            j -= 1
        return not (j >= 0 and before[j].lower() in _WHEN)
    # walk back over the preposition's object modifiers to the preposition, then to its noun
    i = len(before) - 1
    while i >= 0 and before[i].lower() in ("the", "its", "their", "his", "her", "a", "an", "fiscal", "full", "calendar", "-", "year", "full-year"):
        i -= 1
    if i < 1 or before[i].lower() not in _ATTACH:
        return False
    return before[i - 1].lower() in PLANNED_NOUNS


def planned_subject(clause_before: str) -> bool:
    """True when the clause before a date has a planning noun as the head of its subject,
    directly followed by its verb ("League projections put the ...", "the consensus estimate
    calls for ..."): the date is in that forecast's predicate. ``clause_before``: the text from
    the clause's start to the date."""
    toks = _tokens(clause_before[-REACH:])
    for k, w in enumerate(toks[:-1]):
        if w.lower() in PLANNED_NOUNS:
            nxt = toks[k + 1]
            # the subject's head is the last noun before the verb: no verb or preposition before it
            if _is_verb_like(nxt) and not _looks_past(nxt) and nxt.lower() not in _PAST_FORMS and not _verb_before(toks[:k + 1]):
                return True
    return False


def _verb_before(toks: list[str]) -> bool:
    """True if a past form among ``toks`` is a verb with an object or a complement (followed by
    a function word, a number or a name), not a participle modifying the next noun."""
    for a, b in zip(toks, toks[1:]):
        if (_looks_past(a) or a.lower() in _PAST_FORMS) and (b.lower() in FUNCTION_WORDS or not b[:1].islower()):
            return True
    return False


def _looks_past(word: str) -> bool:
    w = word.lower()
    return word == w and len(w) > 3 and w.endswith("ed") and w not in PLANNED_NOUNS


#: Irregular past forms a planning noun's realized verb takes ("the plan won approval", "the
#: forecast proved ..." is regular); "put", "set", "cut" read as present after a plural subject.
_PAST_FORMS = frozenset("was were had did won lost made took fell rose came went became broke drew held".split())


_PASSIVE_INFINITIVE = re.compile(r"\bto\s+be\s+(?:[a-z]+ed|[a-z]+en|done|made|paid|held|set|built|sold|spent|run|met)\b")


def expectation_complement(clause_before: str) -> bool:
    """True when the clause before a date holds a verb of expectation or commitment followed by
    an infinitive or a "for" / "by" object ("expected La Nina conditions to persist through",
    "pledged to reach net zero by"), or directly by the date in its object ("is targeting a
    first-quarter 2020 close", "projected 2020 revenue of"), or a passive infinitive ("buybacks
    to be carried out through"): the date is in what was expected, promised or still to be done."""
    tail = clause_before[-REACH:]
    if _PASSIVE_INFINITIVE.search(tail):
        return True
    last = None
    for last in _EXPECT.finditer(tail):
        pass
    if last is not None and len(_tokens(tail[last.end():])) <= 4 and not _verb_before(_tokens(tail[last.end():])):
        return True  # the date is in the verb's object: "is targeting a first-quarter 2020 close"
    for m in _EXPECT.finditer(tail):
        if _INFINITIVE.search(tail, m.end()):
            return True
    return False


# -- hindsight -----------------------------------------------------------------------------------

#: Retrospective narration: what a writer can say only from after the events. "would" with an
#: adverb of outcome is the future in the past ("would eventually win", "would go on to"; not in
#: reported speech or under a condition); "went on to", "ended up", "eventually" / "ultimately" / "later" with a verb in the past tense; "later"
#: as an adverb (not "a later date", not "no later than", not "later this year").
_HINDSIGHT = re.compile(
    r"\bwould\s+(?:(?:eventually|ultimately|later|go\s+on\s+to|end\s+up)\b)"
    r"|\b(?:went|goes|going)\s+on\s+to\b|\bended\s+up\b|\bin\s+the\s+end\b"
    r"|\b(?:eventually|ultimately|subsequently)\b(?=\s+[a-z]+ed\b|\s+(?:was|were|had|did|won|lost|made|took|left|got|became|went|came|fell|rose|wrote|sold)\b)"
    r"|(?<!\ba\s)(?<!\bthe\s)(?<!\bno\s)(?<!\bits\s)(?<!\bat\s)\blater\b(?!\s+(?:than|this|next|today|tonight|in\s+the\s+(?:day|week|month|year|season)|that\s+(?:day|week|month|year)|the\s+same)\b)"
    r"(?=\s+[a-z]|\s*[,.;])",
    re.I,
)
#: Words one of which every :data:`_HINDSIGHT` match holds (a claim with none skips the scan).
HINDSIGHT_WORDS = frozenset("would went goes going ended end eventually ultimately subsequently afterward afterwards later".split())


def hindsight(text: str) -> list[tuple[int, str]]:
    """Positions and texts of retrospective constructions in ``text`` ("went on to", "would
    eventually", "ended up", "later signed"): each asserts that something happened after the
    time the text narrates from. An answer is written as of its cutoff, so with no earlier date
    in the claim to count from, the event is after the cutoff (docs/verification.md#hindsight)."""
    out = []
    for m in _HINDSIGHT.finditer(text[:20_000]):
        if m[0].lower().startswith("would") and (_REPORTED.search(text[max(0, m.start() - REACH) : m.start()]) or _CONDITION.search(text)):
            continue  # reported speech ("announced that X would eventually ...") or a condition ("if ...")
        if m[0].lower() == "later":
            nxt = _NEXT_WORD.match(text, m.end())
            w = (nxt[1] or "").lower() if nxt else ""
            if not (w in IRREGULAR_PAST or (len(w) > 3 and w.endswith("ed")) or w in ("in", "that", "on", "") ):
                continue
        out.append((m.start(), m[0]))
    return out


#: A verb of saying or agreeing before "would" in its sentence (or a "that" clause): the
#: future in the past of a statement made then, not hindsight.
_REPORTED = re.compile(
    r"\b(?:said|says|announced|announces|stated|told|agreed|agrees|confirmed|reported|noted|warned|indicated|disclosed|"
    r"revealed|predicted|promised|pledged|expected|forecast|projected|signalled|signaled|argued|claimed|insisted|"
    r"suggested|believed|thought|hoped|planned|decided|ruled|held)\b(?:(?![.;!?]\s).)*$|\bthat\b(?:(?![.;!?]\s).)*$",
    re.I,
)
_CONDITION = re.compile(r"\b(?:if|unless|whether|otherwise)\b", re.I)
_NEXT_WORD = re.compile(r"\s+([A-Za-z]+)|\s*[,.;]")


# -- the modality of an assertion ----------------------------------------------------------------

#: What ends the asserting clause: a colon or semicolon, a sentence end, or a clause of reason or
#: concession ("because", "although"); a modal after it qualifies that clause, not the assertion
#: ("threw out the suit: the injuries could not be traced"). A relative clause ("which could
#: decide ...") or a condition still qualifies what it is attached to.
_SUBORDINATE = re.compile(r"[:;]|[.!?](?=\s)|\b(?:because|since|although|though|whereas)\b", re.I)


#: A clause of what a court held or found ("held that the drug is likely to ..."): a modal in it
#: is what was held, not a hedge of the holding. What someone said ("said that the Court will
#: likely reverse") stays a hedge: a prediction of the ruling, not the ruling.
_CONTENT = re.compile(
    r"\b(?:held|holds|holding|ruled|rules|found|finds|wrote|writes|writing|concluded|reasoned|explained|"
    r"determined|declared|shown|showed)\b(?:(?![.;:!?]).)*\bthat\b",
    re.I,
)


def hedged(text: str, hedge: re.Pattern[str], spans: list[tuple[int, int]]) -> bool:
    """True when a hedge (a match of ``hedge``: "could", "likely", "expected to") qualifies an
    assertion at ``spans`` (the words that assert it, such as a verb of deciding): the hedge is
    in the assertion's clause, before it or after it with no clause of reason or concession, and
    no clause of reported content ("held that the drug is likely to ..."), opening between them.
    With no spans, any hedge in the text counts."""
    hedges = [m.span() for m in hedge.finditer(text[:20_000])]
    # a hedge inside reported content ("held that courts may not ...") is what was held
    hedges = [(a, b) for a, b in hedges if not _CONTENT.search(text, max(0, a - REACH), a)]
    if not hedges:
        return False
    if not spans:
        return True
    for h0, h1 in hedges:
        for s0, s1 in spans:
            if h1 <= s0:
                between = (h1, s0)
            elif h0 >= s1:
                between = (s1, h0)
            else:
                return True  # the hedge is part of the assertion's words
            if not _SUBORDINATE.search(text, *between):
                return True
    return False


def scheduled_for_day(text: str, start: int, end: int) -> bool:
    """True when the date at ``text[start:end]`` is a day given with "for" to an event noun ("called
    a snap election for June 8, 2017", "set a hearing for May 5"): the time an event is set for.
    A period ("results for Q4 2019", "guidance for 2020") is what a figure covers, not this."""
    if not any(p.kind in ("day", "yearless") for p in find_periods(text[start:end])) and not find_yearless(text[start:end], []):
        return False
    before = _tokens(text[max(0, start - 60) : start])
    i = len(before) - 1
    while i >= 0 and before[i].lower() in ("the", "on", "a"):
        i -= 1
    if i < 1 or before[i].lower() != "for":
        return False
    noun = before[i - 1]
    return noun.isalpha() and noun.islower() and noun not in FUNCTION_WORDS and not _looks_past(noun)

