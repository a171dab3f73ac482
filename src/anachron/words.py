"""The word lists the text rules share, each once, named for what it means.

A building block: it imports nothing from the package. The verifier's features and layers, the
tasks' claim and grounding rules, the corpus builder and the supervised method read their month
names, hedges, perfect-tense patterns and stop words here. Lists that sound alike but mean
different things have different names; which rule reads which:

* **Months.** :data:`MONTH_NAMES` ("January" ...), :data:`MONTH_WORDS` (lower-case names and
  abbreviations, "sept" included), :data:`MONTH_NUMBERS` (each month word -> 1-12),
  :data:`MONTH_ALTERNATION` (a regex alternation of the month words, longest first) and
  :data:`WEEKDAY_NAMES`. Date finding (:mod:`anachron.verify.dates`), the EDGAR layer's period
  references, :func:`anachron.verify.features.yearless_months` and relative-time test, words that
  are no name (salary grounding) or no case (legal grounding), the corpus layer's stop words, the
  supervised method's temporal words and the calibration's planted dates.
* **Hedges**, three different rules:

  - :data:`HEDGE_SPECULATIVE`: hedged or future-tense wording of a claim ("expected to",
    "likely", "will", "could"). A claim so worded states no outcome: the generic categoriser, the
    extractors' opinion test, every task's outcome rule and the salary and legal grounding.
  - :data:`HEDGE_FORWARD_LOOKING`: the forecast task's grounding only, a longer list for
    restated questions ("odds", "scheduled", "if", "whether", "this market"); modal "will" /
    "may" case-sensitive.
  - :data:`HEDGE_APPROX_WORDS` / :data:`HEDGE_APPROX_PHRASES`: the words just before a figure
    that make it approximate or a threshold ("about $40", "more than 12%"): the figure readers of
    the grounded layers (:mod:`anachron.verify.layers.figures`).

* **Perfect tense**, three different rules:

  - :data:`PRESENT_PERFECT`: "has outperformed", "have been": the stock outcome rule reads the time
    up to the writing.
  - :data:`PERFECT_NEGATED`: "has never won", "have not yet": the forecast grounding reads a
    state up to the writing, background rather than an event.
  - :data:`PERFECT_AUXILIARY_AT_END`: text that *ends* in a perfect auxiliary ("has long",
    "had already"): the legal grounding tests the words before a decision verb, doctrine in the
    perfect ("has held") being no ruling of this case.

* **Stop words**: :data:`STOP_WORDS` (function words, left out of a claim's content words: the
  forecast claims rule, the legal grounding, the LLM extractor, the corpus layer) and
  :data:`QUESTION_STOP_WORDS` (a longer list for forecast questions, :mod:`anachron.tasks.forecast.wording`).
"""

from __future__ import annotations

import re

# ---------------------------------------------------------------------------------------------
# months and days

#: The twelve month names as written in English text, January first (``MONTH_NAMES[m - 1]``).
MONTH_NAMES: tuple[str, ...] = (
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
)
#: Month words, lower case: the twelve names, then the abbreviations "jan" ... "dec" ("may" is a
#: name already) with "sept" after "sep".
MONTH_WORDS: tuple[str, ...] = tuple(m.lower() for m in MONTH_NAMES) + (
    "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec",
)
#: Each of :data:`MONTH_WORDS` -> its month number (1-12).
MONTH_NUMBERS: dict[str, int] = {w: [m.lower()[:3] for m in MONTH_NAMES].index(w[:3]) + 1 for w in MONTH_WORDS}
#: :data:`MONTH_WORDS` as a regex alternation, longest first (so "june" is tried before "jun").
MONTH_ALTERNATION = "|".join(sorted(MONTH_WORDS, key=len, reverse=True))
#: The days of the week, lower case, Monday first.
WEEKDAY_NAMES: tuple[str, ...] = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")

# ---------------------------------------------------------------------------------------------
# hedges

#: Hedged or future-tense wording ("expected to", "likely", "will"): a claim so worded is no outcome.
HEDGE_SPECULATIVE = re.compile(
    r"\b(expect(?:s|ed)? to|is expected|are expected|likely|unlikely|probably|(?-i:may)(?!\s+[0-9])|might|could|"
    r"would|should|will|won't|predict(?:s|ed)?|forecast(?:s|ed)? (?:that|to)|projected to|anticipate[sd]?|rumou?red|"
    r"speculat\w*|possib(?:le|ly)|potential(?:ly)?|chance|odds|probability)\b",
    re.I,
)
#: Forward-looking or conditional wording of a forecast question restated ("will", "odds",
#: "scheduled", "if", "whether"); "will" / "may" only in lower case, so "Will Smith" and "May 3"
#: are not hedges.
HEDGE_FORWARD_LOOKING = re.compile(
    r"(?-i:\bwill\b|\bWill(?=\s+[a-z])|\bmay\b(?!\s+\d))|"  # modal will / may, not "Will Smith" or "May 3"
    r"\b(?:would|could|might|should|expect\w*|forecast\w*|predict\w*|project(?:s|ed|ion)|likely|unlikely|"
    r"probabilit\w*|chances?|odds|plans?|planned|aims?|hopes?|intends?|anticipat\w*|scheduled|set\s+(?:to|for)|"
    r"slated|due\s+(?:to|on|in)|upcoming|to\s+be\s+held|"
    r"poised|bet(?:s|ting)?|priced|implied|if|whether|uncertain|unclear|goals?|pledged?|promised?|commit\w*|"
    r"this\s+(?:market|question)|refers?\s+to|can\s+resolve|to\s+count)\b",
    re.I,
)
#: Words that make the figure after them approximate or a threshold, not a stated value.
HEDGE_APPROX_WORDS = frozenset(
    "about around approximately approx roughly nearly almost some over under above below near beyond "
    "top tops topped topping exceed exceeds exceeded exceeding surpass surpasses surpassed surpassing "
    "passed crossed estimated".split()
)
#: Two- and three-word phrases of the same kind ("more than", "as much as").
HEDGE_APPROX_PHRASES = frozenset(
    ["more than", "less than", "fewer than", "at least", "at most", "up to", "as much as", "close to",
     "north of", "south of", "upwards of", "shy of", "an estimated"]
)

# ---------------------------------------------------------------------------------------------
# the perfect tense

#: The present perfect ("has outperformed", "have been the laggards"): the time up to the writing.
PRESENT_PERFECT = re.compile(r"\b(?:has|have)\s+(?:\w+ly\s+)?(?:been|[a-z]+ed)\b", re.I)
#: A state up to the time of writing ("has never won", "have not yet"): background, not an event.
PERFECT_NEGATED = re.compile(r"\b(?:has|have|had)\s+(?:never|not|yet\s+to|n['’]t)\b|\b(?:hasn|haven|hadn)['’]t\b", re.I)
#: Text ending in a perfect auxiliary ("has", "had long", "have already"): the verb after it is in
#: the perfect ("has long held"). Searched in the words before a verb.
PERFECT_AUXILIARY_AT_END = re.compile(r"\b(?:has|have|had|having)\s+(?:\w+ly\s+|long\s+|since\s+|already\s+)?$", re.I)

# ---------------------------------------------------------------------------------------------
# stop words

#: Function words left out of a claim's content words.
STOP_WORDS = frozenset(
    "a an the of to in on at for by with and or but is are was were be been being its it this that these those "
    "as from into than then over under after before since during while about per his her their our your".split()
)
#: Words of a forecast question that carry no topic (function words, question and resolution
#: words, small numbers).
QUESTION_STOP_WORDS = frozenset(
    """a an the of in on at by to for from with and or than then as is are be been being was were will would
    what which who whom whose that this these those it its their there here have has had do does did not no yes
    according wikipedia question probability resolve resolves resolved resolution date compared value its
    more less between before after during over under into per any each all some much
    many how when where why if about up down one two three four five six seven eight nine ten e g eg average
    day days total""".split()
)


#: Verbs in the past tense besides the regular "-ed" forms (the irregular English past forms):
#: a claim without one states a habit or a schedule ("the term begins in October"), whose dates
#: written without a year recur rather than date an event.
IRREGULAR_PAST = frozenset(
    "was were had did won lost made took said fell rose got gave went came left led held paid sold bought brought "
    "began became broke built caught chose drew drove fought found grew knew kept met ran saw sent shut sank slid "
    "spent stood struck swept threw told thought wrote hit cut set put quit beat bid split shed spread upheld "
    "withdrew withheld forgave froze hung laid lent lit meant rode sang shook shot slept sought spoke stole stuck "
    "swore swung taught tore woke wore wound heard felt fled fed bore bent bred clung crept dealt dug fit flung "
    "forbade forgot ground hid knelt leapt overcame overtook rang rid sat shone shrank sped spun sprang stung strove "
    "swam undertook underwent understood upset wept wrung arose awoke".split()
)
