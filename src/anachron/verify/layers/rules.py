"""Layer 2: date-plausibility rules (TEMPO paper, App. I.4; docs/verification.md#rules).

A claim's declared date may be too early for the kind of information it states (a model
dates Q4 results to the last day of the quarter, or a May 2020 closing price to 2019). These
rules give, for the dates a fact states, the *interval* of days on which its information could
first have been public: :func:`date_content` returns ``[earliest, latest]``; the verifier
(:func:`anachron.verify.pipeline.verify_claim`) sets it against the declared date and the cutoff.

**Which dates count.** Every time reference of the fact (:func:`anachron.verify.dates.find_periods`)
and every date written without a year (:func:`anachron.verify.dates.find_yearless`) is a date of
the claim, except those the grammar places in the future of the fact (:func:`date_scopes`):

* a date in a prospective clause: after a modal ("will", "would", "shall", "going to"), a
  schedule or intention ("set to", "scheduled for", "due in", "expected to", "plans to",
  "upcoming", "next"), or a guidance noun tied to it ("guidance for Q1 2020"); a date fronted
  before such a clause ("On Aug. 19, the convention will open"), or in the subject of a
  prospective verb with no verb of its own ("X's 2023 revenue is expected to ...") likewise;
* in a claim about an agreement or a term (a contract, deal, lease, extension, "signed",
  "runs"), a date introduced by a preposition of duration ("through 2029-30", "until 2025",
  "starting in 2020", "from 2019-20 to 2022-23"): the end or start of the term, known when the
  agreement was.

A date after "before", "prior to" or "ahead of" only bounds the fact from above. Words inside
quotation marks are not the claim's own grammar.

**Interval of one date, by kind of fact** (lower bounds at the early end of each range the paper
gives, so a rule never invents a leak a fast filer would refute; upper bounds at the filing
deadlines):

* financial results (revenue, EPS, net income, ...; or a reporting verb with a money figure
  outside a contract / deal / court claim) for a quarter ending ``E``: ``[E + 14 days,
  E + 45 days]``; for a fiscal year ending ``E``: ``[E + 14 days, E + 90 days]`` (a 10-K:
  from ``E + 60 days``); a calendar year ``Y`` not called fiscal ("full-year 2019", "2019
  revenue"): ``[Y+1-01-15, Y+1-03-31]``;
* the company's fiscal calendar, when known (EDGAR, :class:`FiscalCalendar`), places its fiscal
  periods; a quarter or year not called fiscal is then either reading. A period called fiscal
  with no known calendar is the widest plausible one: a fiscal year ``Y`` ends between late
  January of ``Y`` (NVIDIA, retailers) and December of ``Y``;
* a stated day inside the window in which the period's results could have been reported is
  the day they were (``On February 24, 2025, X reported fiscal 2025 revenue``); a figure for
  "the quarter (three months, year, ...) ended" a stated day or month is results for the period
  that ended then;
* a change over a period (a percentage with a verb of rising or falling, an average, a total)
  is complete at the period's end: ``[end - 3 days, end]``; results for another period (a
  month, a season) from then to 45 days after its end; for the first months of a year or a
  half, like a quarter's;
* any other reference: its own bounds (a day, a month, a quarter, a season "2019-20" from July
  to June, "late 2019" = September to December); a period that contains another date of the
  same claim is the context of that date and yields to it ("in 2019 ... on July 17, 2019"); a
  date relative to an earlier date of the claim ("two weeks later", "later that month", "the
  following year") counts from it;
* a date without a year, in a claim told in the past tense (a claim in the present tense states
  a habit or a schedule: "the term begins in October"), is read in the year the claim names,
  else in the declared date's year (the writer's year; the year before when that reading would
  lie more than half a year after the declared date), else between its reading in the cutoff's
  year and the next year.

The claim's interval is the latest of its dates' intervals (a compound claim is as late as its
latest part).
"""

from __future__ import annotations

import bisect
import datetime as dt
import re
from dataclasses import dataclass
from typing import Callable, Protocol

from anachron.words import IRREGULAR_PAST as _IRREGULAR_PAST
from anachron.verify.grammar import HINDSIGHT_WORDS, PLANNED_NOUNS, hindsight, scheduled_for_day, expectation_complement, modifies_planned_noun, planned_subject
from anachron.verify.dates import (
    without_urls,
    Period,
    YearlessDate,
    _add_months,
    find_relative,
    find_periods,
    find_yearless,
    fiscal_quarter_earliest_end,
    fiscal_quarter_period,
    fiscal_year_earliest_end,
    unquoted,
)

QUARTERLY_LAG = dt.timedelta(days=14)
TEN_K_LAG = dt.timedelta(days=60)
#: Latest realistic public date of results: the 10-Q deadline after a quarter (45 days), the
#: 10-K deadline after a fiscal year (90 days).
QUARTERLY_DEADLINE = dt.timedelta(days=45)
ANNUAL_DEADLINE = dt.timedelta(days=90)
#: A change over a period is known at its last trading day, up to this many days before its end.
PERIOD_CLOSE_SLACK = dt.timedelta(days=3)
#: A date written without a year lies within this many days before the writer's date.
YEARLESS_RECENCY = dt.timedelta(days=183)

#: Words of financial results. A reporting verb alone ("it was reported that X signed ...") is
#: not one: a signing, a ruling, a deal are public on their own day.
_RESULTS = re.compile(
    r"\b(revenue|revenues|sales|earnings|eps|net income|net loss|profit|profits|income|results|"
    r"margin|margins|ebitda|cash flow|free cash flow|operating income|same-store|comparable sales|"
    r"deliveries|bookings|growth|per share|guidance beat|quarterly numbers)\b",
    re.I,
)
#: "X reported $3.1 billion for Q3 2019": a reporting verb with a money figure counts as results
#: unless the claim is about a contract, a deal or a court case.
_REPORT_VERB = re.compile(r"\b(reported|reports|posted|posts|announced|delivered|booked|generated)\b", re.I)
#: A superlative of a period ("the warmest year on record", "its best quarter ever", "a record
#: month"): a ranking over the whole period.
_PERIOD_SUPERLATIVE = re.compile(
    r"\b(?:warmest|hottest|coldest|wettest|driest|best|worst|strongest|weakest|busiest|deadliest|costliest|"
    r"biggest|largest|smallest|highest|lowest|record(?:-setting|-breaking)?)\s+(?:\w+\s+)?"
    r"(?P<noun>year|month|quarter|season|summer|winter|spring|autumn|fall|half)\b(?:\s+(?:on\s+record|ever))?",
    re.I,
)
#: The period kinds a superlative's noun ranks.
_RANKED_KINDS = {"year": ("year", "fiscal_year", "season"), "season": ("season", "year"), "quarter": ("quarter", "fiscal_quarter"),
                 "month": ("month",), "half": ("half",)}
#: How far (characters) a superlative may stand from the period it ranks.
_RANK_REACH = 60


def ranks_period(text: str, p: Period) -> bool:
    """Whether a superlative of ``p``'s kind stands next to it ("2024 as the warmest year on
    record", "its best quarter ever in Q1 2024"): a ranking over the whole period, known once it
    has ended; "said in February 2024" beside "its best quarter" is not ranked."""
    if p.pos < 0:
        return False
    lo, hi = max(0, p.pos - _RANK_REACH - 60), min(len(text), p.pos + len(p.text) + _RANK_REACH + 60)
    for m in _PERIOD_SUPERLATIVE.finditer(text, lo, hi):  # a window around the period: linear in the claim
        kinds = _RANKED_KINDS.get(m["noun"].lower(), ("season", "month"))
        if p.kind in kinds and (abs(m.start() - (p.pos + len(p.text))) <= _RANK_REACH or abs(p.pos - m.end()) <= _RANK_REACH):
            return True
    return False
#: A statistical release named after the period it covers, right after the period.
_RELEASE_AFTER = re.compile(
    r"\s+(?:(?:employment|jobs|payrolls?|inflation|consumer|producer|retail|housing|trade|manufacturing|services|factory|"
    r"durable|industrial|home|existing|new)\s+)?(?:reports?|data|figures?|numbers|readings?|prints?|CPI|PPI|PCE|PMI|ISM|"
    r"GDP|payrolls|sales|starts|orders|output|production|survey|release)\b"
)
_MONEY_FIGURE = re.compile(r"\$\s?\d|\b\d+(?:\.\d+)?\s*(?:million|billion|trillion)\b", re.I)
_NOT_RESULTS = re.compile(
    r"\b(contract|deal|signed|signs|signing|inked|agreed|agreement|extension|aav|per year|annually|"
    r"acquir\w*|acquisition|merger|buyout|settle\w*|verdict|ruled|ruling|court|fined|fine|penalty|salary)\b",
    re.I,
)
_TEN_K = re.compile(r"\b(10-K|annual report)\b", re.I)
#: "the quarter ended June 27, 2020", "the fiscal year ending in September 2019": the date is a
#: reporting period's last day (or month), whose results come later.
_PERIOD_ENDED = re.compile(
    r"\b(?:(?P<q>quarter|three\s+months|(?:12|13|thirteen|twelve)\s+weeks|half|six\s+months|26\s+weeks|nine\s+months|39\s+weeks|period)"
    r"|(?P<y>(?:fiscal\s+)?year|twelve\s+months|12\s+months|5[23]\s+weeks))\s+(?:that\s+)?end(?:ed|ing|s)?\s+(?:on\s+|in\s+)?$",
    re.I,
)
#: A change over a period: a percentage with a verb of rising or falling, or an average or total.
_CHANGE_WORDS = frozenset(
    "rose rise rises risen gain gained gains climb climbed climbs jump jumped jumps surged surges soar soared "
    "soars fell fall fallen falls drop dropped drops declined declines slid slump slumped slumps plunged plunges "
    "tumbled tumbles lost return returned returns outperform outperformed outperforms underperform underperformed "
    "underperforms doubled doubles halved halves tripled triples averaged averages average total totaled totalled "
    "totals cumulative".split()
)
_PERCENT = re.compile(r"\d\s?%|\bper\s?cent\b|\bpercentage points?\b", re.I)

# -- the grammar of a date's clause ------------------------------------------------------------

#: A reduced relative clause after a comma: a past participle and its agent or place.
_REDUCED_RELATIVE = re.compile(r"\s+(?:co-)?[a-z]+(?:ed|en|wn)\s+(?:by|in|at|from|with|on|for)\b")
#: The next item of a list of names after a comma: a capitalised name, then a comma or "and"/"or".
_LIST_ITEM = re.compile(r"\s+(?:the\s+)?[A-Z][\w.'’-]*(?:\s+[A-Z][\w.'’-]*){0,3}(?:,|\s+(?:and|or)\s)")
#: Ends of clauses: sentence punctuation, commas, brackets and dashes, contrastive conjunctions.
_CLAUSE_BREAK = re.compile(r"[.;:!?](?=\s|$)|[,()\[\]—]|\s[-–]\s|\b(?=[BWATHYbwathy])(?i:but|while|whereas|although|though|however|yet)\b")
#: Prospective grammar anywhere before a date in its clause: modals of the future, schedules,
#: intentions, expectations. Lower-case "will" / "may" only ("Will Barton", "May 2020").
_PROSPECTIVE = re.compile(
    r"\bwill\b|\bWill(?=\s+[a-z])|['’]ll\b"
    # a modal of possibility with a bare verb ("should widen", "could reach"); "may have risen" is past
    r"|\b(?:should|could|might|may)\s+(?!have\b|had\b|been\b)(?:not\s+)?[a-z]+"
    # an age reached on a birthday to come ("turns 35 in July")
    r"|\bturns\s+\d{1,3}\b"
    # a schedule in the present passive ("the final is played from July 27"), a market's terms
    # ("resolves according to ... as checked on"), an inference ("implying cuts in December"), a
    # decision awaited ("awaits a ruling"), a day designated for something ("set June 23 as an opinion day")
    r"|(?i:\b(?:is|are)\s+(?:played|held|staged|hosted|contested|run)\b|\bresolves\b|\bimplying\b|\bsignall?ing\b"
    r"|\bawait(?:s|ing)\b|\bpending\s+(?:a|an|the)?\s*(?:decision|ruling|approval|review|vote)\b"
    # a payment or a maturity to come ("payable December 31", "notes maturing in 2025"), a projection
    # ("is projected at $109 million"), a schedule's plural present ("negotiations open Nov. 20"),
    # a case set for a proceeding ("set the lawsuit for a jury trial in spring 2026")
    r"|\b(?:payable|maturing|redeemable|expiring)\b|\bprojected\s+(?:at|for)\b|\bprojects\s+(?:the|its|their)\b"
    r"|\b(?:open|begin|start|close|end|expire|resume)\s+(?=(?:on\s+|in\s+)?D)"
    r"|\bset\b[^.;]{0,80}?\bfor\s+(?:a|an|the)?\s*(?:\w+\s+){0,2}?(?:trial|hearing|argument|arguments|vote|sentencing|release|launch|meeting|debut)\b)"
    r"|(?i:\b(?:won['’]t|would(?:n['’]t)?|shall|must|can(?:not)?|can['’]t|going\s+to|gonna|(?:has|have|needs?)\s+to)\b)"
    r"|(?i:\b(?:takes|take|goes|go|comes|come)\s+(?:into\s+)?(?:effect|force)\b|\b(?:kicks|kick)\s+in\b"
    r"|\b(?:begins|starts|opens|expires|lapses|ends|closes|resumes|lifts|reopens|convenes|adjourns)\b)"
    r"|(?i:\b(?:set|slated|scheduled|poised|planned|planning|plans?|intends?|intended|aims?|aiming|hopes?|"
    r"likely|unlikely|projected|forecast|predicted|favou?red|tipped|bound|on\s+track|about|prepared|ready|yet)\s+to\b)"
    # a date something is due on or moved to ("is due November 21", "rescheduled for July 23")
    r"|(?i:\bdue\s+(?=D{3}|(?:[A-Z][a-z]+\.?\s+\d|\d)))|(?i:\b(?:re)?scheduled\s+(?:for|to)\b)|(?i:\b(?:postponed|pushed\s+back|delayed)\s+(?:to|until|till)\b)"
    r"|(?i:\bon\s+(?:track|schedule|course|pace)\s+for\b)"
    r"|(?i:\bdue\s+(?:to\s+be|for|on|in|at|by)\b|\b(?:is|are|was|were|be|been|being)\s+due\s+to\b)"
    r"|(?i:(?<!than\s)(?<!as\s)\bexpected\s+(?:to|for|on|in|at|by|during|around|between)\b)"
    r"|(?i:\b(?:scheduled|slated|set|planned|penciled|pencilled|booked)\s+(?:for|on|in|at|by|during|around|between)\b)"
    r"|(?i:\b(?:expects?|anticipates?|predicts?|guided|guides|upcoming|forthcoming|impending)\b)"
    r"|(?i:\bnext\b(?!\s+(?:day|morning|afternoon|evening|night|session|trading)))"
    r"|(?i:\b(?:is|are|was|were)\s+to\s+(?:be\s+)?)(?=[a-z])"
)
#: A guidance noun tied to the date that follows it ("guidance for Q1 2020", "its 2020 outlook").
_PROSPECTIVE_NOUN_LEAD = re.compile(
    r"\b(?:guidance|outlook|forecasts?|projections?|estimates?|targets?|expectations?|plans?|budget)\s+"
    r"(?:for|of)\s+(?:(?:the|its|their|his|her|a|an|fiscal|full|calendar)[- ]+){0,3}$",
    re.I,
)
_PROSPECTIVE_NOUN_TRAIL = re.compile(
    r"^[\s'’s-]*(?:guidance|outlook|forecasts?|projections?|targets?|budget)\b"
    # a day designated for something to come: "set June 23 as an opinion day", "added June 4 as a day for"
    r"|^\s+as\s+(?:a|an|the)\s+(?:\w+\s+){0,2}?(?:day|date|deadline)\b",
    re.I,
)
#: A claim about an agreement or a term, whose dates after a preposition of duration are the
#: term's (the agreement was public when it was made).
_TERM_WORDS = frozenset(
    "contract contracts deal deals agreement agreements extension extensions pact pacts lease leases term terms "
    "tenure option options commitment commitments signed signs signing inked agreed runs running lasts expire "
    "expires expiring valid".split()
)
_DURATION_LEAD = re.compile(
    r"\b(?:through|thru|until|till|to|from|ending|ends?|expiring|expires?|starting|starts?|beginning|begins?|effective|"
    r"commencing|commences?|kicks?\s+in)\s+(?:(?:in|with|on|at|after)\s+)?(?:the\s+)?(?:(?:end|start|beginning)\s+of\s+(?:the\s+)?)?$",
    re.I,
)
#: The onset of a change ("reduced to zero starting in 2019", "effective January 1, 2020"): when
#: it takes effect, known when the change was made.
_ONSET_LEAD = re.compile(
    r"\b(?:starting|beginning|effective|commencing|taking\s+effect)\s+(?:(?:in|with|on|at|from)\s+)?(?:the\s+)?"
    r"(?:(?:end|start|beginning)\s+of\s+(?:the\s+)?)?$",
    re.I,
)
_BEFORE_LEAD = re.compile(
    r"\b(?:before|prior\s+to|ahead\s+of|no\s+later\s+than)\s+(?:the\s+)?(?:(?:start|end|beginning)\s+of\s+(?:the\s+)?)?$",
    re.I,
)
#: A date that opens its clause with at most a preposition ("On Aug. 19, ...").
_FRONTED = re.compile(r"^\s*(?:(?:on|in|at|by|as\s+of|from|during|for)\s+(?:the\s+)?)?$", re.I)
_FUTURE_CLAUSE = re.compile(
    r"\bwill\b|['’]ll\b|(?i:\b(?:would|shall|going\s+to|(?:set|slated|scheduled|due|expected|poised)\s+(?:to|for)|upcoming|next)\b)"
)

_WORD = re.compile(r"[a-z]+")


def _lower_words(text: str) -> set[str]:
    """The words of ``text`` written in lower case: "Unrestricted" opening a sentence is an
    adjective, not a verb in the past tense."""
    return set(_LOWER_WORD.findall(text))


_LOWER_WORD = re.compile(r"(?<![A-Za-z])[a-z]+(?![A-Za-z])")


def _past_tense(words: set[str]) -> bool:
    """True if the (lower-case) words include a verb in the past tense."""
    return not words.isdisjoint(_IRREGULAR_PAST) or any(len(w) > 3 and w.endswith("ed") for w in words)


HAPPENED, PROSPECTIVE, BEFORE = "happened", "prospective", "before"
#: Words one of which every relative date has (:func:`anachron.verify.dates.find_relative`).
_RELATIVE_WORDS = frozenset({"later", "after", "afterward", "afterwards", "following", "subsequent", "next", "same", "that"})
#: How far a clause reaches, in characters, before (or after) a date: the grammar of a longer
#: run-on text is read within this distance, which bounds the time per claim.
_CLAUSE_REACH = 300

#: The words without which no date of a claim can be prospective or an upper bound (a claim
#: with none of them needs no look at its clauses).
_SCOPE_WORDS = frozenset(
    "if unless event provided when once until till soon should could might may turns played held staged hosted contested "
    "run resolves implying signaling signalling awaits awaiting pending as payable maturing redeemable expiring projects "
    "open begin start close end expire resume set favored favoured tipped bound "
    "rescheduled postponed pushed delayed predicted will ll won would wouldn shall must can cannot going gonna takes take goes comes kicks begins starts opens expires "
    "lapses ends closes resumes lifts reopens convenes adjourns set slated scheduled poised planned planning plan plans intend "
    "intends intended aim aims aiming hope hopes likely unlikely projected forecast forecasts track about prepared "
    "ready yet due expected penciled pencilled booked expects anticipates guided guides upcoming forthcoming "
    "impending next expect anticipate anticipates predict predicts guidance outlook projection projections estimate estimates target targets expectation "
    "expectations budget before prior ahead later pledge pledged pledges promise promised promises commit committed "
    "commits vow vowed vows propose proposed proposes seek seeks sought hoped hoping intended aimed targeted be "
    "expecting anticipating anticipated projecting projects aiming pledging promising committing vowing targeting "
    "proposing seeking guiding guide predicted predicting forecasting starting beginning effective commencing "
    "require requires required requiring oblige obliges obliged mandate mandates mandated compel compels compelled "
    "allow allows allowed permit permits permitted enable enables track schedule course pace".split()
) | PLANNED_NOUNS
_DURATION_WORDS = frozenset(
    "through thru until till to from ending end ends expiring expires expire starting start starts beginning begin begins "
    "effective commencing commence commences kick kicks".split()
)


def date_scopes(fact: str, spans: list[tuple[int, int]]) -> list[str]:
    """How the grammar of ``fact`` places each date span ``(start, end)``: ``"happened"``,
    ``"prospective"`` (a date in the future of the fact, not its date) or ``"before"`` (an upper
    bound: "before the 2019-20 season"). See the module docstring."""
    text = unquoted(fact)
    return _scopes(text, spans, set(_WORD.findall(text.lower())))


def _scopes(text: str, spans: list[tuple[int, int]], words: set[str]) -> list[str]:
    """:func:`date_scopes` of a text whose quoted spans are blanked already, with its lower-case words."""
    term = not words.isdisjoint(_TERM_WORDS)
    if words.isdisjoint(_SCOPE_WORDS) and not (term and not words.isdisjoint(_DURATION_WORDS)) and not (
        "to" in words and not words.isdisjoint(("is", "are", "was", "were", "has", "have", "need", "needs"))
    ) and not ("for" in words and any(p.kind == "day" for p in find_periods(text))):
        return [HAPPENED] * len(spans)
    chars = list(text)
    for s, e in spans:  # a date's own commas and dots do not end a clause
        chars[s:e] = "D" * (e - s)
    masked = _WEEKDAY_COMMA.sub(lambda m: m[0].replace(",", " "), "".join(chars))  # "on Monday, June 29" is one date
    masked = _ABBREVIATION.sub(lambda m: m[0].replace(".", "_"), masked)  # "the U.S. target", "Disney Inc. said", "6 p.m. ET"
    masked = _DIGIT_COMMA.sub("_", masked)  # "900,000 barrels a day by the end of 2023"
    # a parenthesis of dates only ("meetings in 2025 (September 16-17, October 28-29, and December 9-10)")
    # lists what the noun before it names: it stays in that noun's clause
    masked = _DATE_LIST.sub(lambda m: " " + re.sub(r"[,;]", " ", m[0][1:-1]) + " ", masked)
    # "The target: net zero by 2030": a planning noun introduces what it plans (no clause break; a marker)
    masked = _PLANNED_COLON.sub(lambda m: m[0][:-1] + "\u2236", masked)
    # a comma before a reduced relative ("the World Cup, co-hosted by ... from late August") does
    # not end the clause: the participle phrase modifies the noun before it
    # nor does the comma of a list of names ("the Philippines, Japan and Indonesia")
    found = [
        m.span()
        for m in _CLAUSE_BREAK.finditer(masked)
        if not (m[0] == "," and (_REDUCED_RELATIVE.match(masked, m.end()) or _LIST_ITEM.match(masked, m.end())))
    ]
    breaks, break_starts = [e for _, e in found], [s for s, _ in found]
    markers = sorted([m.span() for m in _PROSPECTIVE.finditer(masked)] + [m.span() for m in _PLANNED_MARK.finditer(masked)])
    marker_ends = [e for _, e in markers]
    out = []
    for s, e in spans:
        i = bisect.bisect_right(breaks, s) - 1
        clause = max(breaks[i] if i >= 0 else 0, s - _CLAUSE_REACH)
        before = masked[clause:s]
        lead = before[-60:]  # the words right before the date
        k = bisect.bisect_right(marker_ends, s) - 1  # the last marker that ends before the date
        prospective = k >= 0 and markers[k][0] >= clause
        if prospective or _PROSPECTIVE_NOUN_LEAD.search(lead) or _PROSPECTIVE_NOUN_TRAIL.match(masked[e : e + 20]):
            out.append(PROSPECTIVE)
        elif modifies_planned_noun(masked, s, e) or planned_subject(before) or expectation_complement(before) or scheduled_for_day(text, s, e):
            out.append(PROSPECTIVE)
        elif (term and _DURATION_LEAD.search(lead)) or _ONSET_LEAD.search(lead):
            out.append(PROSPECTIVE)
        elif _BEFORE_LEAD.search(lead):
            out.append(BEFORE)
        elif _FRONTED.match(before) and _FUTURE_CLAUSE.search(_next_clause(masked, e, breaks, break_starts) or ""):
            out.append(PROSPECTIVE)
        elif _subject_of_prospective(masked, before, e, markers):
            out.append(PROSPECTIVE)
        elif in_condition(masked, s) or goal_deadline(before):
            out.append(PROSPECTIVE)
        else:
            out.append(HAPPENED)
    return out


#: A deadline given: "have until", "were given until".
_GIVEN_UNTIL = re.compile(r"\b(?:have|has|(?:is|are)\s+given|gets?)\s+until\s+(?:the\s+)?(?:(?:end|close)\s+of\s+)?$", re.I)
#: A deadline: "by" (or "no later than") right before the date.
_DEADLINE_LEAD = re.compile(r"\b(?:by|no\s+later\s+than)\s+(?:the\s+)?(?:(?:end|start|beginning|close)\s+of\s+)?$", re.I)
#: A goal in the clause: a to-infinitive ("to raise spending to 5% of GDP") or a gerund after a
#: noun of intent ("a goal of lifting ...").
_GOAL = re.compile(r"\bto\s+(?!the\b|a\b|an\b|its\b|their\b|\$|\d|D)[a-z]+\b|\b(?:goal|aim|target|plan|pledge|commitment|bid|push|effort)s?\s+(?:of|to)\s+[a-z]+ing\b", re.I)


def goal_deadline(before: str) -> bool:
    """Whether a date is the deadline of a goal: "by" before it, and a to-infinitive or a noun of
    intent with its gerund earlier in the clause ("agreed to raise spending to 5% of GDP by 2035",
    "set a goal of lifting the rate to 1.0 by 2030"); "had shipped 10 million units by March" states
    what was done by then."""
    if _GIVEN_UNTIL.search(before):
        return True  # "users have until November 3 to register": a deadline given
    if not _DEADLINE_LEAD.search(before):
        return False
    return _GOAL.search(before[-_CLAUSE_REACH:]) is not None


#: What opens the antecedent of a condition; and a temporal clause in the present or present
#: perfect, which in English refers to the future ("once the report is issued", "until the
#: deadline has passed", "when the table is checked").
_CONDITION_OPEN = re.compile(
    r"\b(?:if|unless|in\s+the\s+event(?:\s+that)?|provided\s+that)\b"
    # a market's or question's terms: "The market resolves according to ... as checked on"
    r"|\b(?:market|question|contract)\s+(?:will\s+)?resolves?\b"
    r"|\b(?:when|once|until|till|as\s+soon\s+as)\b(?=[^.;]{0,150}?\b(?:is|are|has|have)\s+(?:been\s+)?[a-z]+(?:ed|en|wn|ne|t)\b)"
    # ... or a scheduled act in the simple present ("before the Court recesses", "before electors meet")
    r"|\b(?:when|once|until|till|before|after|as\s+soon\s+as)\s+(?:the\s+|its\s+|their\s+)?(?:[\w'’-]+\s+){0,3}?"
    r"(?:recess(?:es)?|adjourns?|convenes?|reconvenes?|begins?|starts?|ends?|closes?|opens?|expires?|meets?|votes?|"
    r"resumes?|returns?|takes\s+office|take\s+office|leaves?\s+office)\b",
    re.I,
)
#: A sentence ends at ".", ";", "!" or "?" before a capital, a digit, a quote or the end, not after
#: an initial or a title ("Robert F. Kennedy Jr. announces").
_SENTENCE_BREAK = re.compile(r"(?<![A-Z])(?<!\bJr)(?<!\bSr)(?<!\bDr)(?<!\bMr)(?<!\bMs)(?<!\bSt)[.;!?](?=\s+[A-Z0-9\"“(]|\s*$)")


def in_condition(text: str, pos: int) -> bool:
    """Whether position ``pos`` of ``text`` lies in a condition ("resolves Yes if X happens by
    December 31, 2025", "If no winner is declared by June 30, 2026, ...", "until the December 2025
    report is issued"): a condition word, or a temporal clause in the present tense, opens the
    sentence or a clause of it before ``pos``. A condition asserts nothing happened: it is a
    hypothetical, prospective from where it is written."""
    window = max(0, pos - 2 * _CLAUSE_REACH)  # a bounded window: linear in the claim
    starts = [m.end() for m in _SENTENCE_BREAK.finditer(text, window, pos)]
    start = starts[-1] if starts else window
    m = _CONDITION_OPEN.search(text, start, min(len(text), pos + 200))  # the clause's verb may follow pos
    return m is not None and m.start() < pos


_SENTENCE_END = re.compile(r"[.;!?](?=\s|$)")


def marker_before(text: str, pos: int) -> bool:
    """Whether a prospective marker (a modal of the future, a schedule, an intention:
    :data:`_PROSPECTIVE`) stands before ``pos`` in its clause: a verb there ("will rule", "is
    due to be decided", "will later report") tells of something still to come."""
    start = max(0, pos - _CLAUSE_REACH)
    breaks = [m.end() for m in _CLAUSE_BREAK.finditer(text, start, pos)]
    return _PROSPECTIVE.search(text, breaks[-1] if breaks else start, pos) is not None
_ABBREVIATION = re.compile(r"\b(?:[A-Z]\.){2,}|\b(?:[ap]\.m|Inc|Corp|Co|Ltd|Jr|Sr|No|St|Mr|Mrs|Ms|Dr|Gov|Sen|Rep|Gen|vs|v)\.", )
#: A parenthesis that holds only dates (masked as "D"), commas and "and"/"or".
_DATE_LIST = re.compile(r"\((?:[D\s,;–—-]|\band\b|\bor\b)+\)")
#: The comma of a digit group ("900,000 barrels"): no clause break.
_DIGIT_COMMA = re.compile(r"(?<=\d),(?=\d{3}\b)")
_PLANNED_COLON = re.compile(r"\b(?:" + "|".join(sorted(PLANNED_NOUNS)) + r"):", re.I)
_PLANNED_MARK = re.compile("\u2236")
_WEEKDAY_COMMA = re.compile(r"\b(?i:monday|tuesday|wednesday|thursday|friday|saturday|sunday),(?=\s*D)")


def _subject_of_prospective(masked: str, before: str, end: int, markers: list[tuple[int, int]]) -> bool:
    """True for a date in the subject of a prospective verb ("Kestrel's 2023 revenue is expected
    to ..."): no verb in the past tense before the date in its clause, and a prospective marker
    later in the sentence with no such verb (and no other clause) between the date and the marker."""
    that = max((m.end() for m in re.finditer(r"\bthat\b", before)), default=0)
    before = before[that:]  # a content clause ("told investors that ...") has its own subject
    if _past_tense(set(_WORD.findall(before.lower()))):
        return False
    k = bisect.bisect_left([s for s, _ in markers], end)
    if k >= len(markers) or markers[k][0] - end > _CLAUSE_REACH:
        return False
    between = masked[end : markers[k][0]]
    words = set(_WORD.findall(between.lower()))
    return not _SENTENCE_END.search(between) and words.isdisjoint(("and", "or", "but", "while")) and not _past_tense(words)


def _next_clause(masked: str, end: int, breaks: list[int], break_starts: list[int]) -> str | None:
    """The clause after a date that ends its own clause ("On Aug. 19, 2024, the convention
    will open": the main clause of a fronted date), or None when words follow the date in its
    own clause. ``breaks`` / ``break_starts``: where the clause breaks end / start."""
    j = bisect.bisect_right(breaks, end)
    if j >= len(breaks) or break_starts[j] - end > 3 or masked[end : break_starts[j]].strip():
        return None
    stop = break_starts[j + 1] if j + 1 < len(breaks) else len(masked)
    return masked[breaks[j] : min(stop, breaks[j] + _CLAUSE_REACH)]


# -- the interval of one date ------------------------------------------------------------------


class FiscalCalendar(Protocol):
    """A reporter's fiscal calendar (a company's from EDGAR, the US federal government's): the last day of a fiscal year or quarter."""

    def year_end(self, year: int) -> dt.date | None: ...

    def quarter_end(self, year: int, quarter: int) -> dt.date | None: ...


@dataclass(frozen=True)
class RuleFinding:
    """The interval ``[earliest, latest]`` in which the information of one date of a fact could
    first have been public, the rule that set it, and the date (``period``)."""

    earliest: dt.date
    rule: str
    period: Period
    latest: dt.date
    #: the day a results period was reported could be as early as this (a stated day from here
    #: to ``latest`` is the report day)
    report_from: dt.date | None = None
    #: a date without a year, read in the declared date's year
    on_declared: bool = False


def _results_finding(p: Period, ten_k: bool, cal: FiscalCalendar | None) -> RuleFinding | None:
    """The interval of the results for period ``p`` (None when ``p`` is no results period);
    ``ten_k``: the claim speaks of a 10-K or annual report."""
    if p.kind in ("quarter", "fiscal_quarter"):
        q = (p.end.month - 1) // 3 + 1  # a fiscal quarter's latest end is its calendar quarter's
        y = p.end.year
        known = cal.quarter_end(y, q) if cal is not None else None
        if p.kind == "fiscal_quarter":
            if known:
                return RuleFinding(known + QUARTERLY_LAG, f"fiscal-quarter results: the company's quarter end {known} + 14 days", p,
                                   known + QUARTERLY_DEADLINE, known + QUARTERLY_LAG)
            lo = fiscal_quarter_earliest_end(p) + QUARTERLY_LAG
            return RuleFinding(lo, "fiscal-quarter results: earliest plausible quarter end (fiscal year ending in January) + 14 days",
                               p, p.end + QUARTERLY_DEADLINE, lo)
        ends = sorted({p.end, known} - {None})
        wide = fiscal_quarter_earliest_end(fiscal_quarter_period(y, q)) + QUARTERLY_LAG
        rule = "quarterly results: quarter end + 14 days" if len(ends) == 1 else (
            f"quarterly results: quarter end + 14 days (the reporter's fiscal Q{q} {y} ends {known})")
        return RuleFinding(ends[0] + QUARTERLY_LAG, rule, p, ends[-1] + QUARTERLY_DEADLINE, min(wide, ends[0] + QUARTERLY_LAG))
    if p.kind in ("fiscal_year", "year"):
        y = p.end.year
        known = cal.year_end(y) if cal is not None else None
        lag, rule_k = (TEN_K_LAG, "10-K: fiscal year end + 60 days") if ten_k else (QUARTERLY_LAG, None)
        if p.fiscal:
            if known:
                return RuleFinding(known + lag, rule_k or f"full-year results: the reporter's fiscal year end {known} + 14 days", p,
                                   known + ANNUAL_DEADLINE, known + lag)
            lo = fiscal_year_earliest_end(y) + lag
            return RuleFinding(lo, rule_k or "full-year results: earliest plausible fiscal year end (late January) + 14 days", p,
                               p.end + ANNUAL_DEADLINE, lo)
        cal_lo = p.end + TEN_K_LAG if ten_k else dt.date(y + 1, 1, 15)
        rule = rule_k or "full-year results: mid-January of the following year"
        report_from = dt.date(y, 2, 1)  # a fiscal year can end in late January
        if known and known + lag < cal_lo:
            return RuleFinding(known + lag, f"{rule} (the reporter's fiscal {y} ends {known})", p, p.end + ANNUAL_DEADLINE, known + lag)
        return RuleFinding(cal_lo, rule, p, max(cal_lo, (known or p.end) + ANNUAL_DEADLINE, p.end + ANNUAL_DEADLINE), report_from)
    if p.kind in ("half", "months"):
        lo = (_add_months(p.end, -11) if p.fiscal else p.end) + QUARTERLY_LAG
        return RuleFinding(lo, f"results for {p.text!r}: its end + 14 days", p, p.end + QUARTERLY_DEADLINE, lo)
    return None


def _ended_finding(p: Period, lead: str, ten_k: bool) -> RuleFinding | None:
    """Results for a reporting period that ``lead`` says ends on date ``p`` ("the quarter ended
    ..."), or None."""
    m = _PERIOD_ENDED.search(lead)
    if m is None or p.kind not in ("day", "month"):
        return None
    end = p.end
    if m["q"]:
        return RuleFinding(end + QUARTERLY_LAG, f"results for the {m['q']} ended {p.text!r}: period end + 14 days", p,
                           end + QUARTERLY_DEADLINE, end + QUARTERLY_LAG)
    lag = TEN_K_LAG if ten_k else QUARTERLY_LAG
    return RuleFinding(end + lag, f"results for the {m['y']} ended {p.text!r}: period end + {lag.days} days", p,
                       end + ANNUAL_DEADLINE, end + lag)


def _finding(p: Period, results: bool = False, change: bool = False, ten_k: bool = False, cal: FiscalCalendar | None = None,
             lead: str = "") -> RuleFinding:
    """The interval of one happened date ``p`` of a claim that states ``results`` or a ``change``
    over a period, or speaks of a 10-K (``ten_k``); ``lead``: the words right before the date in
    a claim that states a figure (see the module docstring)."""
    if lead:
        f = _ended_finding(p, lead, ten_k)
        if f is not None:
            return f
    if p.kind == "day":
        return RuleFinding(p.start, f"mentions day {p.text!r}", p, p.end)
    if p.kind == "yearless":
        return RuleFinding(p.start, f"{p.text!r} has no year", p, p.end)
    if p.kind == "relative":
        return RuleFinding(p.start, f"{p.text!r} is relative", p, p.end)
    if p.kind == "day_either":
        return RuleFinding(p.start, f"mentions {p.text!r}: day and month in either order ({p.start} or {p.end})", p, p.end)
    if results:
        f = _results_finding(p, ten_k, cal)
        if f is not None:
            return f
    if results or change:  # a figure over the period: complete at its end; results are published later
        lo = max(p.start, p.end - PERIOD_CLOSE_SLACK)
        return RuleFinding(lo, f"a figure over {p.kind} {p.text!r}: known at its end", p, p.end + (QUARTERLY_DEADLINE if results else dt.timedelta()))
    start = p.start
    if p.fiscal and p.kind in ("fiscal_year", "half", "months"):
        start = fiscal_year_earliest_end(p.start.year - 1) + dt.timedelta(days=1) if p.kind == "fiscal_year" else _add_months(p.start, -11)
    return RuleFinding(start, f"mentions {p.kind} {p.text!r}: not public before it starts", p, p.end)


# -- the interval of a fact --------------------------------------------------------------------


@dataclass(frozen=True)
class ContentDate:
    """When the information of a fact could first have been public, from its own text.

    ``earliest`` / ``latest``: the interval (the latest interval of the fact's dates);
    ``rule``: the rule that set ``earliest`` (and ``latest`` when another one did);
    ``findings``: the dates that count, each with its interval (empty when every date the fact
    states is prospective: then ``earliest`` and ``latest`` are None); ``on_declared``: a date without a year, read in
    the declared date's year, sets the interval; ``ignored``: the texts of dates the grammar
    excludes (prospective)."""

    earliest: dt.date | None
    latest: dt.date | None
    rule: str
    findings: tuple[RuleFinding, ...]
    on_declared: bool
    ignored: tuple[str, ...] = ()


def _contexts(periods: list[Period]) -> set[tuple[dt.date, dt.date]]:
    """The intervals among ``periods`` that strictly contain another one (not counting a date
    without a year, whose interval spans its readings), in ``O(n log n)``."""
    spans = sorted({(p.start, p.end) for p in periods if p.kind != "yearless"}, key=lambda x: (x[0], -x[1].toordinal()))
    out: set[tuple[dt.date, dt.date]] = set()
    least_end = dt.date.max  # the least end among the spans after this one (they start no earlier)
    for start, end in reversed(spans):
        if least_end <= end:
            out.add((start, end))
        least_end = min(least_end, end)
    for p in periods:  # a yearless reading may be the context of a dated period
        if p.kind == "yearless" and any(p.start <= s and e <= p.end and (s, e) != (p.start, p.end) for s, e in spans[:50]):
            out.add((p.start, p.end))
    return out


def _context_year(periods: list[Period]) -> int | None:
    """The one calendar year the fact's dated references name, or None."""
    years = {p.start.year for p in periods if p.kind not in ("season", "years", "fiscal_quarter", "day_either")}
    years |= {p.end.year for p in periods if p.kind == "fiscal_quarter"}
    return years.pop() if len(years) == 1 else None


def _read_yearless(y: YearlessDate, context: int | None, declared: dt.date | None, cutoff: dt.date | None) -> tuple[Period, str, bool] | None:
    """(period, how it was read, read in the declared date's year) of a date without a year."""
    if context is not None:
        p = y.reading(context)
        return (p, f"read in {context}, the year the claim names", False) if p else None
    if declared is not None:
        year = declared.year
        p = y.reading(year)
        if p is not None and (p.start > declared + YEARLESS_RECENCY or (y.relative == "last" and p.start >= declared)):
            year -= 1
            p = y.reading(year)
        return (p, f"read in {year}, the declared date's year", True) if p else None
    if cutoff is not None:
        readings = [y.reading(cutoff.year), y.reading(cutoff.year + 1)]
        if readings[0] is not None and readings[0].start > cutoff + YEARLESS_RECENCY:
            readings.insert(0, y.reading(cutoff.year - 1))
        readings = [r for r in readings if r is not None]
        if not readings:
            return None
        first, last = readings[0], readings[-1]
        span = Period(first.kind if len(readings) == 1 else "yearless", first.start, last.end, y.text, y.pos)
        return span, f"no year: read from {first.start} ({first.start.year}) to {last.end} ({last.end.year})", False
    return None


def date_content(
    fact: str,
    *,
    declared: dt.date | None = None,
    cutoff: dt.date | None = None,
    calendar: Callable[[], FiscalCalendar | None] | None = None,
) -> ContentDate | None:
    """The interval in which the information of ``fact`` could first have been public, from the
    dates it states, or None when it states none that count.

    Args:
        fact: the claim text (any length; every pattern is linear in it).
        declared: the declared date, to read dates written without a year (the writer's year).
        cutoff: the instance's cutoff, to read such dates when nothing else gives their year.
        calendar: called at most once, when a fiscal calendar would place a results period:
            the company's :class:`FiscalCalendar`, or None when it is unknown.
    """
    fact = without_urls(fact or "")
    periods = find_periods(fact)
    yearless = find_yearless(fact, periods)
    text = unquoted(fact)
    words = set(_WORD.findall(text.lower()))
    relative = find_relative(text) if not words.isdisjoint(_RELATIVE_WORDS) else []
    looking_back = hindsight(text) if cutoff is not None and not words.isdisjoint(HINDSIGHT_WORDS) else []
    if not periods and not yearless and not (cutoff is not None and (relative or looking_back)):
        return None
    spans = [(x.pos, x.pos + len(x.text)) for x in (*periods, *yearless, *relative)]
    scopes = _scopes(text, spans, words)
    # a retrospective construction is a verb phrase, not a date: only a modal or a schedule
    # before it in its clause makes it prospective ("will later report")
    scopes += [PROSPECTIVE if marker_before(text, a) else HAPPENED for a, _ in looking_back]
    ignored = tuple(x.text for x, s in zip([*periods, *yearless, *relative], scopes) if s == PROSPECTIVE)
    dated: list[tuple[Period, str, bool, str]] = []  # (period, scope, on_declared, how it was read)
    for p, s in zip(periods, scopes):
        if s != PROSPECTIVE:
            dated.append((p, s, False, ""))
    past = bool(yearless) and _past_tense(_lower_words(text))
    context = _context_year([p for p, s in zip(periods, scopes) if s != PROSPECTIVE]) if past else None
    for y, s in zip(yearless, scopes[len(periods):]):
        if s == PROSPECTIVE or not past:
            continue
        read = _read_yearless(y, context, declared, cutoff)
        if read is not None:
            dated.append((read[0], s, read[2], read[1]))
    if relative or looking_back:  # each relative date counts from the date written before it, else from the answer's date
        anchors = sorted((d for d in dated if d[1] == HAPPENED and d[0].pos >= 0), key=lambda d: d[0].pos)
        positions = [d[0].pos for d in anchors]
        n_fixed = len(periods) + len(yearless)
        for r, s in zip(relative, scopes[n_fixed:]):
            k = bisect.bisect_left(positions, r.pos) - 1
            if s == PROSPECTIVE:
                continue
            if k >= 0:
                a = anchors[k]
                dated.append((r.after(a[0]), s, a[2], f"{r.text!r} after {a[0].text!r}"))
            elif cutoff is not None:
                now = Period("day", cutoff, cutoff, "the answer's date", -1)
                dated.append((r.after(now), s, False, f"{r.text!r} after the answer's date {cutoff} (no earlier date in the claim)"))
        for (pos, what), s in zip(looking_back, scopes[n_fixed + len(relative):]):
            if s == PROSPECTIVE or bisect.bisect_left(positions, pos) > 0:
                continue  # told from a date the claim names: after it, not after the cutoff
            after = cutoff + dt.timedelta(days=1)
            dated.append((Period("relative", after, dt.date.max, what, pos), s, False,
                          f"{what!r}: hindsight, after the answer's date {cutoff} (no earlier date in the claim)"))
    if not dated:
        return ContentDate(None, None, "every date of the text is prospective", (), False, ignored) if ignored else None
    # a period that contains another date of the claim is that date's context
    if len(dated) > 1:
        context_of = _contexts([d[0] for d in dated])
        dated = [d for d in dated if d[0].kind == "relative" or (d[0].start, d[0].end) not in context_of]
    results = change = ten_k = figure = False
    if any(d[0].kind not in ("day", "day_either") for d in dated) or not words.isdisjoint(("ended", "ending", "end", "ends")):
        ten_k = ("10" in text or "annual" in words) and _TEN_K.search(text) is not None
        percent = ("%" in text or not words.isdisjoint(("percent", "cent", "percentage"))) and _PERCENT.search(text) is not None
        results, change = _states_results(text, words), percent and not words.isdisjoint(_CHANGE_WORDS)
        figure = results or percent or _MONEY_FIGURE.search(text) is not None
    cal_cache: list[FiscalCalendar | None] = []

    def cal() -> FiscalCalendar | None:
        if calendar is None:
            return None
        if not cal_cache:
            cal_cache.append(calendar())
        return cal_cache[0]

    findings: list[RuleFinding] = []
    for p, scope, on_decl, how in dated:
        calendar_needed = results and p.kind in ("quarter", "fiscal_quarter", "fiscal_year", "year")
        lead = text[max(0, p.pos - 40) : p.pos] if figure and p.pos >= 0 else ""
        # a period that names a statistical release ("the July jobs report", "Q2 GDP") is what its
        # figures cover: they are known once it has ended
        release = p.kind in ("month", "quarter") and p.pos >= 0 and _RELEASE_AFTER.match(text, p.pos + len(p.text)) is not None
        f = _finding(p, results, change or release or ranks_period(text, p), ten_k, cal() if calendar_needed else None, lead)
        if how:
            f = RuleFinding(f.earliest, f"{f.rule}; {how}", p, f.latest, f.report_from, on_decl)
        if scope == BEFORE:
            f = RuleFinding(dt.date.min, f"before {p.text!r}: no later than {f.latest}", p, f.latest, None, f.on_declared)
        findings.append(f)
    # a stated day inside the window in which a period's results could have been reported is that report
    days = sorted(f.earliest for f in findings if f.period.kind == "day" and f.report_from is None and f.earliest != dt.date.min)
    for i, f in enumerate(findings):
        if f.report_from is None:
            continue
        j = bisect.bisect_right(days, f.latest)
        if j and days[j - 1] >= f.report_from:
            d = days[j - 1]
            findings[i] = RuleFinding(d, f"results for {f.period.text!r} reported on a stated day ({d})", f.period, d, None, f.on_declared)
    lo = max(findings, key=lambda f: f.earliest)
    hi = max(findings, key=lambda f: f.latest)
    rule = lo.rule if hi is lo or hi.latest == lo.latest else f"{lo.rule}; latest {hi.latest} ({hi.rule})"
    return ContentDate(
        earliest=lo.earliest,
        latest=max(hi.latest, lo.earliest),
        rule=rule,
        findings=tuple(findings),
        on_declared=lo.on_declared or hi.on_declared,
        ignored=ignored,
    )


def part_after(fact: str, day: dt.date) -> tuple[dt.date, str] | None:
    """The latest day, after ``day``, on which a period that ``fact`` states as happened starts
    (no part of the fact can be public before it), with the period's text; None when there is
    none. Dates written without a year do not count here."""
    periods = [p for p in find_periods(fact) if _finding(p).earliest > day]
    if not periods:
        return None
    text = unquoted(fact)
    scopes = _scopes(text, [(p.pos, p.pos + len(p.text)) for p in periods], set(_WORD.findall(text.lower())))
    late = [(_finding(p).earliest, p.text) for p, s in zip(periods, scopes) if s == HAPPENED]
    return max(late) if late else None


def states_results(fact: str) -> bool:
    """True if ``fact`` states financial results: a results word, or a reporting verb with a
    money figure in a claim that is not about a contract, a deal or a court case."""
    return _states_results(unquoted(fact))


#: Words one of which every match of :data:`_RESULTS` or :data:`_REPORT_VERB` contains.
_RESULTS_HINTS = frozenset(
    "revenue revenues sales earnings eps income loss profit profits results margin margins ebitda flow same "
    "comparable deliveries bookings growth share beat numbers".split()
)
_REPORT_HINTS = frozenset("reported reports posted posts announced delivered booked generated".split())


def _states_results(text: str, words: set[str] | None = None) -> bool:
    """:func:`states_results` of a text whose quoted spans are blanked already (``words``: its
    lower-case words, to skip the patterns that cannot match)."""
    if words is None or not words.isdisjoint(_RESULTS_HINTS):
        if _RESULTS.search(text):
            return True
    if words is not None and words.isdisjoint(_REPORT_HINTS):
        return False
    return bool(_REPORT_VERB.search(text) and _MONEY_FIGURE.search(text) and not _NOT_RESULTS.search(text))


