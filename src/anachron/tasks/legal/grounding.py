"""Legal: the grounded check of the decision being predicted (:class:`DecisionGrounding`), the
one decision it rests on (:func:`states_ruling`, also the categoriser's A4 rule) and the
courts below the Supreme Court (:data:`LOWER_COURT`).

A ruling is stated in many wordings ("the Court reversed", "sided with the baker", "a 7-2
majority found for ...", "Sotomayor was the lone dissenter", "the ruling went 5-4"). The check
reads a claim through generic mechanisms, not phrase lists: the verbs and forms of deciding
(:data:`RULING`, :data:`OPINION`, a vote split of the Court's size), who decided (each signal's
subject: this court, or a lower court, agency, arbitrator or jury), which case (the case's
name and its common variants, :func:`case_aliases`; another "X v. Y" cited), and when (a date
of the ruling before the cutoff makes it an earlier ruling).
"""

from __future__ import annotations

import datetime as dt
import functools
import re
from typing import Any, Mapping

from anachron.dates import to_date
from anachron.tasks.legal.parties import case_name_key, case_parties, party_key
from anachron.verify.dates import find_periods
from anachron.verify.grammar import hedged
from anachron.verify.layers.rules import in_condition
from anachron.verify.layers.grounded import GroundedVerdict
from anachron.words import HEDGE_SPECULATIVE, MONTH_WORDS, PERFECT_AUXILIARY_AT_END, STOP_WORDS


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
    rf"\b(?:(?:{STATES})(?:['’]s)?\s+(?:(?:Supreme|Superior|High|Appellate|Appeals|Trial|District|Circuit|Family|Chancery)\s+)?Court"
    rf"|(?:Supreme|Superior|High)\s+Court\s+of\s+(?:the\s+State\s+of\s+|the\s+Commonwealth\s+of\s+)?(?:{STATES})"
    rf"|(?:{STATES})\s+Court\s+of\s+(?:Criminal\s+)?Appeals"
    r"|circuit(?:\s+court)?|courts?\s+of\s+(?:criminal\s+|civil\s+|special\s+)?appeals?|appeals?\s+courts?|appellate\s+(?:courts?|division|panel)"
    r"|district\s+courts?|trial\s+courts?|trial\s+judge|state\s+(?:supreme\s+|high\s+|highest\s+)?courts?|state['’]s\s+(?:highest|high|top)\s+court"
    r"|lower\s+courts?|bankruptcy\s+(?:court|judge|appellate\s+panel)|tax\s+court|court\s+of\s+(?:federal\s+)?claims"
    r"|court\s+of\s+international\s+trade|superior\s+courts?|magistrate(?:\s+judge)?|en\s+banc\s+court|three-judge\s+(?:district\s+)?court"
    r"|(?:the\s+)?(?:First|Second|Third|Fourth|Fifth|Sixth|Seventh|Eighth|Ninth|Tenth|Eleventh|D\.C\.|Federal)\s+Circuit"
    r"|federal\s+(?:court|judges?|panel|appeals\s+court)|(?:federal|state|trial|district|a|the)\s+judges?)\b",
    re.I,
)
#: Courts of other countries and international courts ("Irish Supreme Court", "Canada's top court", "the ECJ").
_FOREIGN = re.compile(
    r"\b(?:(?!American\b|Republican\b)[A-Z][a-z]+(?:ian|ish|ese|ic|i|an|ch)|U\.?K\.?|EU)\s+(?i:supreme|high|top|constitutional)\s+(?i:court)"
    r"|\b(?!America\b|Nation\b|Country\b)[A-Z][a-z]+['’]s\s+(?i:supreme|top|highest|high|constitutional)\s+(?i:court)"
    r"|\bEuropean\s+Court(?:\s+of\s+(?:Justice|Human\s+Rights))?|\bCourt\s+of\s+Justice|\bECJ\b|\bECHR\b"
)
#: The U.S. Supreme Court ("the Court" with a capital C in a Supreme Court case). Matched after
#: lower courts are masked, so "the Supreme Court of Alabama" is not it.
_SUPREME = re.compile(
    r"\b(?:U\.?S\.?\s+Supreme\s+Court|United\s+States\s+Supreme\s+Court|(?i:the)\s+Supreme\s+Court|Supreme\s+Court\s+of\s+the\s+United\s+States"
    r"|Supreme\s+Court|(?<!of\s)Justices?(?!\s+Department)|(?i:justices)|SCOTUS|(?i:the)\s+(?:high\s+)?Court|(?i:the)\s+nation['’]s\s+(?:highest|top)\s+court|(?i:the)\s+high\s+court"
    r"|(?i:(?:a|an|the)\s+(?:unanimous|divided|sharply\s+divided|equally\s+divided|fractured|splintered)\s+court)"
    r"|Court(?!\s+of\b)"  # a capitalised "Court" left once lower courts are masked ("an equally divided Court")
    r"|(?i:(?:a|an|the)\s+(?:\d\s*[-–—]\s*\d\s+|narrow\s+|slim\s+|bare\s+|five-justice\s+|six-justice\s+)?majority)(?!\s+of\b)"
    r"|(?i:(?:controlling|majority|plurality|lead|principal)\s+opinion))\b"
)
#: Deciders below a court that are not courts: agencies, boards, arbitrators, juries, judges of
#: lower courts ("Judge Furman"), immigration and administrative law judges.
_TRIBUNAL = re.compile(
    r"\b(?:(?i:arbitrat(?:or|ors|ion\s+panel)|(?:the\s+)?jur(?:y|ies)|(?:immigration|administrative(?:\s+law)?)\s+judges?"
    r"|hearing\s+(?:officer|examiner)|the\s+agency(?!['’]s|\s+(?:deference|rule|regulation|action|interpretation|reading)s?\b)"
    r"|(?:the\s+)?board|commission(?:ers?)?|the\s+panel|panel\s+majority"
    r"|the\s+(?:decision|judgment|ruling|court)\s+below|on\s+(?:direct\s+)?appeal)"
    r"|Judge\s+[A-Z][\w.'’-]+|ALJs?|BIA|NLRB|FCC|FTC|SEC|EPA|FERC|(?:[A-Z][\w'’-]*\s+){0,4}(?:Commission|Board|Agency))\b"
)
#: Distinctive surnames of the Justices since 1990 (names that are also common surnames, such
#: as Thomas, Roberts or Kennedy, count only with the title: "Justice Kennedy").
JUSTICES = ("Alito", "Barrett", "Blackmun", "Breyer", "Ginsburg", "Gorsuch", "Kagan", "Kavanaugh",
            "O'Connor", "O’Connor", "Rehnquist", "Scalia", "Sotomayor", "Souter", "Stevens")
_JUSTICE_NAMES = re.compile(rf"\b(?:{'|'.join(JUSTICES)})\b")

#: Verbs of deciding a case (past, present or participle; "will rule" and "to reverse" are not).
RULING = re.compile(
    r"\b(?:ruled|rules|held|holds|decided|decides|reversed|reverses|affirmed|affirms|vacated|vacates|remanded|remands|"
    r"overturned|overturns|overruled|overrules|invalidated|invalidates|struck\s+down|strikes\s+down|upheld|upholds|"
    r"sided\s+with|sides\s+with|found|finds\s+(?:that|for|against)|concluded\s+that|rejected|rejects|dismissed|dismisses|"
    r"threw\s+out|throws\s+out|let\s+stand|agreed\s+with|went\s+(?:for|against)|opinion\s+of\s+the\s+court|"
    r"ordered\s+(?:a\s+new|the\s+release|that)|reinstated|reinstates|"
    r"sent\s+(?:\w+\s+){0,3}?back|"
    r"siding\s+with|ruling\s+(?:that|for|against|in\s+favou?r)|holding\s+that|reversing|affirming|vacating|upholding|"
    r"striking\s+down|overturning|overruling|invalidating|finding\s+(?:that|for|against))\b",
    re.I,
)
#: Forms of a decided case's opinions and votes ("dissented", "wrote for the majority", "unanimously").
OPINION = re.compile(
    r"\b(?:dissent(?:ed|ing|s|er|ers)?|concurr(?:ed|ing|ence)|(?:wrote|writ(?:ing|es))\s+(?:for|the)\s+(?:the\s+|a\s+)?(?:\w+-justice\s+)?(?:majority|Court|plurality|opinion)"
    r"|(?:majority|controlling|plurality)\s+opinion|unanimous(?:ly)?|equally\s+divided|joined\s+(?:the\s+)?(?:majority|dissent))\b",
    re.I,
)
# a vote split of the Court's size (5-4, 6-3, 7-2, 8-1, 9-0, 4-4 ...), not the Court's make-up
# ("a 6-3 conservative majority", "has a 6-3 majority")
_VOTE = re.compile(
    r"(?<![\d.,/-])(?<!has\sa\s)(?<!had\sa\s)(?<!with\sa\s)(?P<a>\d)\s*(?:-|–|—|\sto\s)\s*(?P<b>\d)(?![\d/%-]|[.,]\d)"
    r"(?!\s+(?:conservative|liberal|republican|democratic)\b)(?!\s+majority\s+of\b)",
    re.I,
)
#: A party's win or loss ("the county prevailed"): the ruling when the deciding court is named.
_PARTY_OUTCOME = re.compile(r"\b(?:won|wins|lost|loses|prevailed|prevails)\b", re.I)
_PARTY_ROLE = re.compile(
    r"\b(?:the\s+)?(?:petitioners?|respondents?|appellants?|appellees?|government|challengers?|plaintiffs?|defendants?)\b", re.I
)
#: The courts whose judgment the Supreme Court reviews: "the Tenth Circuit's judgment was reversed"
#: (passive, no agent) is the Supreme Court's act, while "the district court was reversed" is history.
_REVIEWED = re.compile(
    r"circuit|court\s+of\s+appeals|appeals\s+court|appellate|supreme|high|highest|top|below|lower\s+court", re.I
)
_PASSIVE = re.compile(r"\b(?:was|were|been|is|are|being|got)\s+(?:\w+ly\s+)?$", re.I)
# "ruled 9-0 in Riley": a decision placed in a named case
_IN_CASE = re.compile(r"^\s*(?:[\w-]+\s+){0,3}?in\s+(?P<name>[A-Z][\w.-]+)(?![\w.-]|['’]s\b)")
_NOT_A_CASE = re.compile(
    rf"^(?:{'|'.join(m.capitalize() for m in MONTH_WORDS)}"
    r"|The|This|That|These|Its|His|Her|Their|Our|A|An|Favor|Favour|Part|Addition|Fact|Response|Light|Short|Sum)\b"
)
_CLAUSE_BREAK = re.compile(r"[;]\s|(?<!\bv)(?<!\bU\.S)(?<!\bSt)(?<!\bJr)\.\s|\b(?:but|while|whereas|although|then|and\s+then|before|after)\b", re.I)
#: "the case", "the writ", "the decision below", "the petitioner": this case, referred to.
_CASE_REF = re.compile(
    r"\b(?:the|this)\s+(?:case|dispute|writ|appeal|petition|(?:decision|judgment|ruling)\s+below)\b"
    r"|\bthe\s+(?:petitioner|respondent|appellant|appellee)s?\b",
    re.I,
)
# a disposition without an object ("The Court vacated and remanded."): the judgment under review
_BARE_DISPOSITION = re.compile(
    r"\b(?:reversed|affirmed|vacated|remanded)(?:\s+(?:and|in\s+part,?(?:\s+and)?)\s+(?:remanded|reversed|vacated|affirmed))*"
    r"(?:\s+in\s+part)?\s*(?:[.;]|$)",
    re.I,
)
# coordination keeps the subject ("the Court declined to X but narrowed it"); subordinate
# clauses ("before", "after", "while") and sentence ends have their own
_COORDINATION = re.compile(r"\b(?:but|and\s+then|then)\b", re.I)
#: Marks of another, earlier case ("in a prior case", "precedent", "previously held").
_PRIOR_CASE = re.compile(
    r"\b(?:previously|earlier(?!\s+(?:this|that)\s+(?:week|month|term|year))|precedents?|prior\s+(?:case|decision|ruling|holding)"
    r"|in\s+(?:a|an|its)\s+(?:prior|previous|earlier|separate|different|similar|related|another|landmark|unrelated)\s+"
    r"(?:case|decision|ruling|dispute|matter))\b",
    re.I,
)
# a date that belongs to a procedural step, not to the ruling ("argued on Jan. 8, 2019", "the 2017 term")
_PROCEDURAL_BEFORE = re.compile(
    r"\b(?:argu\w*|heard|hearing|grant\w*|fil(?:ed|ing)|petition\w*|certiorari|cert|docketed|briefs?|term)\b[^.;]{0,25}$", re.I
)
_TERM_AFTER = re.compile(r"^\s*(?:-\d{2,4}\s*)?(?:term|Term)\b")
#: A case's name cited in a claim: "X v. Y", "X vs. Y", "In re X", "Ex parte X" (a side may
#: carry a corporate suffix after a comma: "Impression Products, Inc. v. Lexmark").
_SIDE = (r"[A-Z][\w.&'’-]*(?:(?:,\s+(?:Inc|Ltd|Co|Corp|LLC|L\.P|N\.A|P\.C|et\s+al)\.?)|\s+(?:of|the|and|for|&|[A-Z][\w.&'’-]*))*")
_CASE_CITE = re.compile(rf"\b(?P<a>{_SIDE}?)\s+vs?\.?\s+(?P<b>{_SIDE})|\b(?:In\s+re|Ex\s+parte)\s+(?P<c>{_SIDE})")
#: Words of a party's name too generic to name the case alone.
_GENERIC_WORDS = frozenset(
    "united states state states people commonwealth america american department office bureau board agency commission "
    "national federal city county town village district university college school association company corporation "
    "inc co corp llc ltd the of and in re ex rel et al us u.s secretary attorney general commissioner director "
    "community consumer international general first new north south east west public services service".split()
)
#: Words of any case (courts, parties' roles, deciding, procedure) and function words: no topic.
_NO_TOPIC = frozenset(
    "court courts supreme justice justices chief ruling ruled rule rules decision decided decide case cases law laws "
    "federal state states government statute statutory constitution constitutional amendment right rights majority "
    "minority opinion held holding holds claim claims appeal appeals appellate petition petitioner petitioners respondent "
    "respondents judgment circuit lower question questions whether challenge challenged argued argument congress clause "
    "order power authority issue issues party parties plaintiff plaintiffs defendant defendants district review standard "
    "upheld reversed affirmed vacated struck down found sided against favor favour unanimous unanimously dissent dissented "
    "dissenter vote votes united america american national public people year years term time first second third also "
    "which would could should they them there their these those with that this from have were been said after before "
    "under over into than then when what does only more most such other some about because between while where being "
    "justice's court's ruling's made make makes including include included must shall upon without within "
    "january february march april june july august september october november december went".split()
)


def _topic_words(text: str) -> set[str]:
    """Content words of ``text`` that say what a case is about, as stems (lower case, the first
    five letters: "deference" and "deferring" meet), without function words and the words of
    every case (:data:`_NO_TOPIC`); words of 4+ letters."""
    out = set()
    for w in re.findall(r"[A-Za-z][A-Za-z'’]{3,}", text):
        w = re.sub(r"['’]s$", "", w.lower()).strip("'’")
        if len(w) >= 4 and w not in _NO_TOPIC and w not in STOP_WORDS:
            out.add(w[:5])
    return out


@functools.lru_cache(maxsize=4096)
def _case_topic(case_name: str, facts: str, question: str) -> frozenset[str]:
    return frozenset(_topic_words(" ".join((case_name, facts, question))))


#: Two "X v. Y" cites with the same name this far apart are two cases: a ruling dated this long
#: before the decision of a case of the same name is an earlier case ("Smith v. United States (2015)").
SAME_NAME_GAP = dt.timedelta(days=180)


def _words(s: str) -> set[str]:
    return {w.strip(".,'’()").lower() for w in s.split()} - {""}


@functools.lru_cache(maxsize=4096)
def _case_names(
    case_name: str, petitioner: str, respondent: str
) -> tuple[tuple[str, ...], tuple[tuple[str, set[str]], ...], tuple[str, ...]]:
    """(aliases, sides, designations) of a case; see :func:`case_aliases`. ``sides``: each side
    of the case name as (normalised text, its distinctive words; empty for a generic litigant);
    ``designations``: the parties as the case lists them, generic ones too ("united states",
    "william p barr attorney general"), normalised."""
    aliases: list[str] = []
    designations: list[str] = []
    sides = []
    for side in case_parties(case_name):
        distinctive = {w for w in side.split() if w not in _GENERIC_WORDS and len(w) >= 3} if party_key(side) else set()
        sides.append((side, distinctive))
        if distinctive:
            aliases.append(side)
            first = side.split()[0]
            if len(side.split()) <= 3 and len(first) >= 4 and first not in _GENERIC_WORDS:
                aliases.append(first)
    for party in (petitioner, respondent):
        for one in re.split(r";|\band\b(?=\s+[A-Z])", party):
            full = case_name_key(re.split(r"\bet\.?\s+al\b", one, flags=re.I)[0])
            if full and full not in designations:
                designations.append(full)
            key = party_key(one)
            if key:
                aliases.append(key)
                last = key.split()[-1]
                if len(key.split()) >= 2 and len(last) >= 4 and last not in _GENERIC_WORDS and any(
                    side == last for side in case_parties(case_name)
                ):
                    aliases.append(last)  # a person the case is named after ("Glossip" of "Richard E. Glossip")
    return tuple(dict.fromkeys(a for a in aliases if a)), tuple(sides), tuple(designations)


def case_aliases(instance: Mapping[str, Any]) -> tuple[str, ...]:
    """The names a claim may give this case besides "X v. Y", normalised like
    :func:`~anachron.tasks.legal.parties.case_name_key` (lower case, no "Inc."/"Ltd."/"et al."):
    each side that is not a generic litigant (the United States, a state, an official); the
    first word of such a side of up to three words when distinctive ("masterpiece" for
    "Masterpiece Cakeshop, Ltd. v. Colorado Civil Rights Commission"); each party's own name,
    and a person's surname when the case is named after it ("glossip")."""
    return _case_names(str(instance.get("case_name") or ""), str(instance.get("petitioner") or ""),
                       str(instance.get("respondent") or ""))[0]


def _side_matches(cited: str, side: tuple[str, set[str]]) -> bool:
    """Whether one side of a cite names one side of this case: a distinctive word in common, an
    acronym of the side's name ("SEC" for "Securities and Exchange Commission", "EPA"), or, for a
    generic litigant ("United States", "Texas"), the same words."""
    words = _words(case_name_key(cited))
    text, distinctive = side
    if distinctive and _ACRONYM.search(cited) and acronym_of(text) in {m.lower() for m in _ACRONYM.findall(cited)}:
        return True
    return bool(words & distinctive) if distinctive else bool(words) and words <= (_words(text) | _GENERIC_WORDS) and bool(words & _words(text))


#: An acronym as a cite writes it: two to six capitals ("SEC", "NLRB", "HHS").
_ACRONYM = re.compile(r"\b[A-Z]{2,6}\b")
#: Words an acronym skips.
_ACRONYM_SKIPS = frozenset("and of the for & on".split())


def acronym_of(name: str) -> str:
    """The initials of ``name``'s words, function words skipped: "securities and exchange
    commission" -> "sec", "department of health and human services" -> "dhhs"; "" for a
    one-word name (a one-letter "acronym" names nothing)."""
    words = [w for w in re.split(r"[\s,.-]+", name.lower()) if w and w not in _ACRONYM_SKIPS]
    return "".join(w[0] for w in words) if len(words) >= 2 else ""


_NOT_INSTITUTION = r"(?!\s+(?:Supreme\s+Court|Court|District|Circuit|Senate|Congress|Attorney|Department|Government|Army|Navy)\b)"


@functools.lru_cache(maxsize=4096)
def _names_pattern(names: tuple[str, ...]) -> re.Pattern[str] | None:
    """One pattern for a case's names (longest first), written with any separators, not as part of
    an institution's name ("the United States Supreme Court"); None for no names."""
    forms = [r"[\s,.'’&-]+".join(re.escape(w) for w in n.split()) for n in sorted(set(names), key=len, reverse=True) if n]
    return re.compile(rf"\b(?:{'|'.join(forms)})\b{_NOT_INSTITUTION}", re.I) if forms else None


def case_mentions(fact: str, instance: Mapping[str, Any]) -> tuple[list[tuple[int, int]], list[tuple[int, int]], bool]:
    """``(cites of this case, other names of it, another case cited)`` in ``fact``.

    An "X v. Y" cite (either order, "Inc."/"et al." ignored, short forms such as "Masterpiece
    v. Colorado") is this case when each side names a side of this case
    (:func:`_side_matches`); otherwise it is another case (a precedent, even one that shares a
    party: "Kerry v. Din" is not "Zivotofsky v. Kerry"). Outside cites, an alias of this case
    (:func:`case_aliases`) written with a capital ("Glossip", "Masterpiece Cakeshop") names it
    less surely: a party, or the case by its short name; so does a party's full designation as
    the case lists it, generic ones included ("United States of America", "State of Arizona").
    """
    aliases, sides, designations = _case_names(str(instance.get("case_name") or ""), str(instance.get("petitioner") or ""),
                                               str(instance.get("respondent") or ""))
    cites: list[tuple[int, int]] = []
    taken: list[tuple[int, int]] = []
    other = False
    for m in _CASE_CITE.finditer(fact):
        taken.append(m.span())
        if m["c"] is not None:
            this = bool(sides) and sides[0][0].startswith("in re") and _side_matches(m["c"], (sides[0][0], sides[0][1] - {"re"}))
        elif len(sides) == 2:
            a, b = m["a"], m["b"]
            this = (_side_matches(a, sides[0]) and _side_matches(b, sides[1])) or (
                _side_matches(a, sides[1]) and _side_matches(b, sides[0]))
        else:
            this = False
        if this:
            cites.append(m.span())
        else:
            other = True
    names: list[tuple[int, int]] = []
    pattern = _names_pattern(aliases + designations)
    if pattern is not None:
        for m in pattern.finditer(fact):
            if m[0][:1].isupper() and not any(a <= m.start() < b for a, b in taken):
                names.append(m.span())
    return cites, names, other


def _supreme_case(instance: Mapping[str, Any]) -> bool:
    court = str(instance.get("court") or "")
    return not court or "supreme" in court.lower()


def _court_mentions(
    fact: str, instance: Mapping[str, Any], cites: list[tuple[int, int]], names: list[tuple[int, int]]
) -> list[tuple[int, int, str]]:
    """(start, end, kind) of every decider named in ``fact``: ``own`` (the court deciding this
    case: the Court, a Justice, its majority or opinion, a vote of its size), ``case`` (this
    case named, a subject in "Glossip v. Gross upheld ..."), ``lower`` (a court below it),
    ``agency`` (an agency, board, arbitrator, jury or trial judge) or ``other`` (in an appellate
    case, the Supreme Court). Cites of this case are masked first, then lower courts are found
    and masked, then this case's other names outside them ("Georgia" in "the Supreme Court of
    Georgia" is a court's name), and last the Supreme Court."""
    out: list[tuple[int, int, str]] = []
    masked = fact

    def mask(a: int, b: int) -> None:
        nonlocal masked
        masked = masked[:a] + " " * (b - a) + masked[b:]

    for a, b in cites:
        out.append((a, b, "case"))
        mask(a, b)
    supreme_case = _supreme_case(instance)
    own_circuit = None
    if not supreme_case:
        m = re.search(r"(\w+|D\.C\.)\s+Circuit", str(instance.get("court") or ""))
        own_circuit = re.compile(rf"\b{re.escape(m[1])}\s+Circuit\b|\bthe\s+panel\b|\b(?-i:Court)\s+of\s+Appeals\b", re.I) if m else None
        if own_circuit is not None:
            for m2 in own_circuit.finditer(masked):
                out.append((m2.start(), m2.end(), "own"))
                mask(*m2.span())
    for pat, kind in ((_FOREIGN, "other"), (LOWER_COURT, "lower"), (_TRIBUNAL, "agency")):
        for m in pat.finditer(masked):
            out.append((m.start(), m.end(), kind))
            mask(*m.span())
    for a, b in names:
        if masked[a:b] == fact[a:b]:  # not inside a court's name
            out.append((a, b, "case"))
            mask(a, b)
    for m in _SUPREME.finditer(masked):
        out.append((m.start(), m.end(), "own" if supreme_case else "other"))
        mask(*m.span())
    if supreme_case:
        for m in _JUSTICE_NAMES.finditer(masked):
            out.append((m.start(), m.end(), "own"))
        for m in _VOTE.finditer(masked):
            if _court_vote(m):
                out.append((m.start(), m.end(), "own"))
    return sorted(out)


def _court_vote(m: re.Match[str]) -> bool:
    a, b = int(m["a"]), int(m["b"])
    return a >= b and a >= 4 and 7 <= a + b <= 9


def _signals(fact: str) -> list[tuple[int, int]]:
    """Spans of the decision signals of ``fact``: verbs of deciding, opinion forms, court votes;
    none inside a condition ("a view that binds courts unless the Supreme Court reverses":
    :func:`~anachron.verify.layers.rules.in_condition`), which decides nothing."""
    spans = [m.span() for pat in (RULING, OPINION) for m in pat.finditer(fact)]
    spans += [m.span() for m in _VOTE.finditer(fact) if _court_vote(m)]
    return sorted(sp for sp in spans if not in_condition(fact, sp[0]))


def _subject(fact: str, span: tuple[int, int], courts: list[tuple[int, int, str]], supreme_case: bool = True) -> str | None:
    """The kind of decider that is the subject of one decision signal, or None if none is named.

    Passive "... by the <court>" takes the court after "by" (within 80 characters, same
    clause); otherwise the nearest decider that ends before the signal, provided no clause
    break ("before", "while", "; ") separates them ("but" and "then" coordinate two verbs of
    one subject); a court vote is its own subject. In a
    Supreme Court case, a passive without agent whose subject is the court under review
    (:data:`_REVIEWED`: "the Ninth Circuit's ruling was vacated") is the Court's act.
    """
    start, end = span
    after = fact[end : end + 80]
    by = re.search(r"\bby\s+(?:the\s+|a\s+|an\s+)?", after)
    if by and not _CLAUSE_BREAK.search(after[: by.start()]):
        pos = end + by.end()
        for s, _, kind in courts:
            if pos - 4 <= s <= pos + 12:
                return kind
    inside = [k for s, e, k in courts if start <= s and e <= end and (s, e) != (start, end)]
    if inside:
        return inside[-1]  # a decider inside the signal ("writing for a six-justice majority")
    itself = None
    for s, e, kind in courts:
        if s <= start and end <= e:
            if (s, e) != (start, end):
                return kind  # the signal is inside a decider ("a 7-2 majority")
            itself = kind  # a bare vote ("5-4"): its own subject unless a decider precedes it
    before = [(s, e, k) for s, e, k in courts if e <= start]
    if before:
        s, e, kind = before[-1]
        between = fact[e:start]
        # "... but narrowed it": a coordinated verb without its own subject keeps the one before
        if not _CLAUSE_BREAK.search(_COORDINATION.sub(" ", between)):
            if kind in ("lower", "agency") and supreme_case and _PASSIVE.search(fact[max(0, start - 30) : start]) and _REVIEWED.search(fact[s:e]):
                return "own"  # "the Tenth Circuit's judgment was reversed": the court under review is the object
            return kind
    return itself


def _ruling_dates(fact: str) -> list[Any]:
    """The periods of ``fact`` that may date a ruling: not those of a procedural step
    ("argued on Jan. 8, 2019", "granted certiorari in 2018") or a term ("the 2017 term")."""
    out = []
    for p in find_periods(fact):
        at = fact.find(p.text)
        if at >= 0 and (_PROCEDURAL_BEFORE.search(fact[max(0, at - 40) : at]) or _TERM_AFTER.match(fact[at + len(p.text) :])):
            continue
        out.append(p)
    return out


def _party_topic(instance: Mapping[str, Any]) -> frozenset[str]:
    """:func:`_topic_words` of the case's aliases and party designations."""
    aliases, _, designations = _case_names(str(instance.get("case_name") or ""), str(instance.get("petitioner") or ""),
                                           str(instance.get("respondent") or ""))
    return frozenset(_topic_words(" ".join(aliases + designations)))


def _names_court_below(fact: str, instance: Mapping[str, Any]) -> bool:
    """Whether ``fact`` names the court whose judgment this case reviews (``lower_court``:
    "United States Court of Appeals for the Tenth Circuit" -> "Tenth Circuit"; a state's court
    -> the state named with "court")."""
    below = str(instance.get("lower_court") or "")
    m = re.search(r"\b(\w+|D\.C\.)\s+Circuit\b", below)
    if m:
        return re.search(rf"\b{re.escape(m[1])}\s+Circuit\b", fact, re.I) is not None
    state = re.search(rf"\b(?:{STATES})\b", below)
    if state and state[0] != "State":
        return re.search(rf"\b{re.escape(state[0])}(?:['’]s)?\s+(?:\w+\s+){{0,2}}?[Cc]ourt\b", fact) is not None
    return False


def states_ruling(fact: str, instance: Mapping[str, Any]) -> str | None:
    """Why ``fact`` states the ruling being predicted, or None.

    ``instance`` is the legal grounding context (``case_name``, ``court``, ``petitioner``,
    ``respondent``, ``decision_date``, ``cutoff_date``). The claim needs a decision signal
    (a verb of deciding, :data:`RULING`; an opinion form, :data:`OPINION`; or a vote split of
    the Court's size, 5-4 to 9-0) and must not be hedged. Each signal gets a subject
    (:func:`_subject`): this court, this case ("Glossip v. Gross upheld ..."), or a lower court /
    agency / arbitrator / jury (:data:`LOWER_COURT`, :data:`_TRIBUNAL`): the deciders of the
    case's history. When every named subject is a lower decider, it is not the ruling.

    * This case cited (:func:`case_mentions`): the ruling, unless it is dated more than
      :data:`SAME_NAME_GAP` before the decision (another case of the same name), or no
      subject is named and only lower courts are.
    * Another case cited and this one not: a precedent, not the ruling.
    * Otherwise (a party or the case's short name, or no name at all): the ruling when this
      court is the subject of a decision signal, the signal is not in the perfect ("has long
      held": doctrine), no other case is marked ("in a prior case", "precedent", "ruled in
      Riley"), the ruling is not dated on or before the cutoff, and something ties it to this
      case: a vote or opinion of the Court ("struck down the ban 6-3", "Sotomayor was the lone
      dissenter"), the case referred to ("the case", "the writ", "the petitioner", a bare
      disposition: "vacated and remanded", the court below: :func:`_names_court_below`), or its parties and subject matter: at least as
      many of the claim's content words (:func:`_topic_words`) in the case's names, ``facts``
      and ``question`` as outside them, and two of them unless a party is named (a party's
      other disputes bring their own subject: "rejected a challenge to Trump's steel tariffs").
    """
    signals = _signals(fact)
    party_signals = [m.span() for m in _PARTY_OUTCOME.finditer(fact)]
    if not (signals or party_signals) or hedged(fact, HEDGE_SPECULATIVE, signals + party_signals):
        return None
    cites, names, other_case = case_mentions(fact, instance)
    aliases = case_aliases(instance)
    for _, end in signals:  # "ruled 9-0 in Riley": another case by its short name
        m = _IN_CASE.match(fact[end : end + 60])
        if m and not _NOT_A_CASE.match(m["name"]) and case_name_key(m["name"]) not in aliases:
            other_case = True
    if other_case and not cites:
        return None
    decided, cutoff = to_date(instance.get("decision_date")), to_date(instance.get("cutoff_date"))
    courts = _court_mentions(fact, instance, cites, names)
    names = [(a, b) for a, b, k in courts if k == "case" and (a, b) in names]
    supreme = _supreme_case(instance)
    found = [(sp, _subject(fact, sp, courts, supreme)) for sp in signals]
    if party_signals and any(k == "own" for _, _, k in courts) and not any(k in ("lower", "agency") for _, _, k in courts):
        for a, _ in party_signals:  # "the county prevailed at the Supreme Court"
            who = [k for s, e, k in courts if e <= a and not _CLAUSE_BREAK.search(fact[e:a])]
            if (who and who[-1] == "case") or _PARTY_ROLE.search(fact[max(0, a - 40) : a]):
                found.append(((a, a), "own"))
    if not cites:  # doctrine in the perfect ("has held") is no ruling of this case
        found = [(sp, k) for sp, k in found if not PERFECT_AUXILIARY_AT_END.search(fact[max(0, sp[0] - 30) : sp[0]])]
    ruling_subject = {"own", "case"} if cites else {"own"}
    named = [k for _, k in found if k is not None]
    if named and not any(k in ruling_subject for k in named):
        return None  # only lower deciders (or this case's parties) rule here: the case's history
    dates = _ruling_dates(fact)
    if cites:
        if not named and any(k in ("lower", "agency", "other") for _, _, k in courts) and not any(k == "own" for _, _, k in courts):
            return None
        if decided and dates and all(p.end < decided - SAME_NAME_GAP for p in dates):
            return None
        return "states the Court's decision in this case"
    if "own" not in named or _PRIOR_CASE.search(fact):
        return None
    if dates and all(p.end <= (cutoff or decided or dt.date.max) for p in dates):
        return None
    # which case: a vote or opinion of the Court, a party or short name, or the case's subject matter
    votes = any(k == "own" and (_VOTE.fullmatch(fact[a:b]) or OPINION.fullmatch(fact[a:b])) for (a, b), k in found)
    if votes or _CASE_REF.search(fact) or _BARE_DISPOSITION.search(fact) or _names_court_below(fact, instance):
        return "states the Court's ruling (its vote or opinion, or the case referred to)"
    bare = fact
    for a, b in [sp for sp, _ in found] + [(s_, e_) for s_, e_, k in courts if k == "own"]:
        bare = bare[:a] + " " * (b - a) + bare[b:]  # the deciding words and this court are no subject
    words = _topic_words(bare)
    known = _case_topic(str(instance.get("case_name") or ""), str(instance.get("facts") or ""),
                        str(instance.get("question") or "")) | _party_topic(instance)
    on, off = words & known, words - known
    if len(on) >= (0 if names else 2) and len(on) >= len(off):  # a party's other disputes bring their own subject
        return f"states the Court's ruling on this case's parties or subject ({', '.join(sorted(on)[:3])})"
    return None


class DecisionGrounding:
    """Grounded checks for the legal task: a claim that states how the case was decided
    (:func:`states_ruling`) is the outcome itself (category A4): leaked, dated at the decision
    date. Lower courts' and agencies' rulings (the case's history), precedents (another case,
    or the same name years earlier), the grant of certiorari and the argument are not.

    The context (``LegalTask.grounding_context``) gives ``case_name``, ``court``,
    ``petitioner``, ``respondent``, ``decision_date`` and ``cutoff_date``.
    """

    def check(self, fact: str, instance: dict[str, Any]) -> GroundedVerdict | None:
        """A leaked A4 verdict dated at the decision when ``fact`` states this case's ruling, else None."""
        why = states_ruling(fact, instance) if instance.get("decision_date") else None
        if why is None:
            return None
        day = dt.date.fromisoformat(str(instance["decision_date"])[:10])
        return GroundedVerdict(day, f"{why} (decided {day})", outcome=True, category="A4")
