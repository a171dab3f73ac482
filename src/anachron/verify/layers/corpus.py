"""Layer: the dated corpus dates what the claim's text does not (docs/verification.md#corpus).

The project's corpus (:func:`anachron.retrieval.corpus.build_corpus`: news headlines, EDGAR
facts as filed, index changes, Supreme Court steps, signings, resolutions, monthly prices) gives
every document the day it became public. A document **supports** a claim when

* the claim says enough to be looked up: at least :data:`MIN_WORDS` content words;
* the document states the same event and polarity: it holds the claim's event verbs (past forms:
  "decided" is not "granted review", "left" is not "joined", :func:`event_verbs`), and it has the
  same negating words ("ruled against" is not "ruled for", "did not sign" is not "signed",
  :func:`polarity`);
* every number of the claim (outside its dates and name-like numerals such as "S&P 500") is in
  the document, within the precision either side writes it ("$104 million" = "$104.00 million",
  "$4.1 billion" ~ "$4 billion"; percentages only match percentages; signs are ignored);
* the document covers at least ``min_support`` of the claim's content words, each word weighted
  by its inverse document frequency in the corpus (a name or a rare term counts more than
  "shares" or "said"), words compared by :func:`anachron.verify.features.stem`; question
  sentences of a document ("Will X happen?", "Does the Act ...") assert nothing and are left out;
* its date is not before any period the claim names ("in March 2020": no document of February
  2020 reports it).

A claim that restates a document in other words supports it too (:meth:`CorpusLayer.paraphrase`:
a two-sided IDF-weighted cover and three shared rare words, verbs and common words free), and a
lower-case term the dated news first uses after the cutoff leaks the claim
(:meth:`CorpusLayer.new_term`). A claim that asserts nothing (a bare name) or names nothing rare
is not looked up (:meth:`CorpusLayer.specific`).

The verdict (:meth:`CorpusLayer.check`):

* **clean** when a document published on or before the cutoff supports the claim, dated by the
  earliest supporting document: the fact was public by then;
* **leaked** when documents after the cutoff support the claim and none on or before it does,
  the claim's text names no date (dated claims are the date logic's: the corpus dates what the
  text does not), and the supporting
  document's source was already publishing before the cutoff (:meth:`BM25Search.source_first_days
  <anachron.retrieval.search.BM25Search.source_first_days>`: a source that starts later cannot
  tell that nothing was known before); dated by the earliest supporting document;
* nothing otherwise (unsupported, too short, or a search failure): the next layer decides.

The reason names the supporting documents with their dates and support. The threshold
:data:`MIN_SUPPORT` is calibrated on the corpus itself (``benchmarks/calibrate_corpus_support.py``):
documents turned into claims are searched with their own document left out, and the threshold is
the lowest at which at most 1% of them find a "supporting" document published more than a week
from the real one.

TimeSPEC's supervisor (:class:`anachron.methods.supervision.supervisors.SearchSupervisor`) dates
claims with the same support test (:meth:`CorpusLayer.supporting`, unfiltered search, earliest
supporting document).
"""

from __future__ import annotations

import datetime as dt
import math
import os
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterable

from anachron.dates import to_date
from anachron.verify.dates import find_periods
from anachron.verify.features import IRREGULAR_FORMS, mask_name_numerals, stem, without_dates
from anachron.verify.layers.grounded import GroundedVerdict
from anachron.words import MONTH_WORDS, STOP_WORDS, WEEKDAY_NAMES

if TYPE_CHECKING:  # pragma: no cover
    from anachron.retrieval.search import SearchBackend, SearchHit

#: Share (IDF-weighted) of a claim's content words a document must hold to support it.
MIN_SUPPORT = 0.9
#: Fewer content words than this: too little to look up.
MIN_WORDS = 2
#: Hits searched per side of the cutoff.
DEFAULT_K = 10
#: Parsed documents kept in memory at most (the cache is emptied when full).
DOC_CACHE = 200_000
#: A paraphrase (:meth:`CorpusLayer.paraphrase`): the claim holds this IDF-weighted share of the
#: document's content words, the document this share of the claim's, and they share this many
#: rare words (in at most RARE_DOC_SHARE of the documents).
PARAPHRASE_DOC_COVER = 0.3
PARAPHRASE_CLAIM_COVER = 0.5
PARAPHRASE_RARE = 3
RARE_DOC_SHARE = 0.001
#: A term dated by its first appearance: lower-case words of this many letters at least ...
MIN_TERM_CHARS = 6
#: ... found in at least this many news documents ...
MIN_TERM_DOCS = 5
#: How many times the year before the cutoff would have held a term at its later rate, for its
#: absence there to date it (Poisson: no occurrence where 3 are expected has probability 5%).
TERM_EXPECTED_BEFORE = 3.0
#: ... of news sources already publishing this long before the cutoff.
TERM_COVERAGE = dt.timedelta(days=365)
#: The corpus sources that are dated news (their vocabulary follows the world's).
NEWS_SOURCES = frozenset({"reuters", "guardian", "cnbc", "wsj", "reddit", "news"})
_LOWER_TERM = re.compile(r"(?<![\w'’-])[a-z][a-z0-9-]*[a-z0-9](?![\w'’])")
#: Supporting documents named in a reason at most.
REASON_DOCS = 3

_STOP = STOP_WORDS | frozenset(
    "has have had than then which who whom whose they them he she we you i not no also said says would will could "
    "company companies inc corp co ltd llc plc".split()
) | frozenset(MONTH_WORDS) | frozenset(WEEKDAY_NAMES)
_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?")
_NUMBER = re.compile(
    r"(?<![\w.])(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?(?:st|nd|rd|th)?"
    r"(?:\s*(%|percent\b|per\s+cent\b|million\b|mln\b|mn\b|billion\b|bln\b|bn\b|trillion\b|thousand\b|[mbk]\b))?",
    re.I,
)
_SCALE = {"million": 1e6, "mln": 1e6, "mn": 1e6, "m": 1e6, "billion": 1e9, "bln": 1e9, "bn": 1e9, "b": 1e9,
          "trillion": 1e12, "thousand": 1e3, "k": 1e3}
_NUMBER_WORDS = {w: i for i, w in enumerate("two three four five six seven eight nine ten eleven twelve".split(), start=2)}
_NUMBER_WORD = re.compile(rf"\b({'|'.join(_NUMBER_WORDS)})\b", re.I)
_SENTENCE = re.compile(r"(?<=[.?!])\s+")
#: Words that negate or oppose: a claim and a document that differ in them say opposite things
#: ("ruled against X" / "ruled for X", "did not sign" / "signed").
_POLARITY = re.compile(r"\b(not|never|without|against|neither|nor)\b|n['’]t\b", re.I)


@dataclass(frozen=True)
class Number:
    """A number written in a text: its value (scaled by million / billion ...), half a unit of its
    last written digit (scaled alike), and whether it is a percentage."""

    value: float
    half_unit: float
    percent: bool

    def matches(self, other: "Number") -> bool:
        """Same kind and equal within the precision both are written with (signs ignored)."""
        return self.percent == other.percent and abs(abs(self.value) - abs(other.value)) < self.half_unit + other.half_unit - 1e-12


def numbers(text: str) -> list[Number]:
    """The numbers of ``text`` outside its dates and name-like numerals ("S&P 500", "10-K",
    "COVID-19"); number words two to twelve count ("four-year" -> 4)."""
    return _numbers(without_dates(text))


def _numbers(undated: str) -> list[Number]:
    """:func:`numbers` of a text whose dates are already blanked out."""
    masked = mask_name_numerals(undated)
    out = []
    for m in _NUMBER.finditer(masked):
        digits = m[1].replace(",", "")
        decimals = len(m[2]) if m[2] else 0
        unit = (m[3] or "").lower()
        percent = unit in ("%", "percent") or unit.startswith("per ")
        scale = 1.0 if percent else _SCALE.get(unit, 1.0)
        value = float(f"{digits}.{m[2]}" if m[2] else digits) * scale
        out.append(Number(value, 0.5 * 10 ** (-decimals) * scale, percent))
    out += [Number(float(_NUMBER_WORDS[m[1].lower()]), 0.5, False) for m in _NUMBER_WORD.finditer(masked)]
    return out


def content_words(text: str) -> list[str]:
    """The content words of ``text`` (lower case, in order, repeats kept): letters only, no stop
    words, month or weekday names, number words, single letters, nothing inside its dates. A word
    written in capitals in mixed-case text is a name (a ticker such as "AN" or "ALL") and always
    kept."""
    return _words(without_dates(text))


def _words(text: str) -> list[str]:
    """:func:`content_words` of ``text`` as it stands (its dates not removed)."""
    shouting = text.upper() == text
    out = []
    for x in _WORD.findall(text):
        w = x.lower().replace("’", "'")
        if len(w) > 1 and w not in _NUMBER_WORDS and (w not in _STOP or (not shouting and x.isupper())):
            out.append(w)
    return out


def polarity(text: str) -> frozenset[str]:
    """The negating or opposing words of ``text`` ("not", "never", "without", "against", "neither",
    "nor"; "n't" counts as "not"), lower case."""
    return frozenset("not" if m[1] is None else m[1].lower() for m in _POLARITY.finditer(text))


def event_verbs(text: str) -> list[str]:
    """The words of ``text`` that name what happened: past forms written in lower case (regular
    "-ed" forms of five letters or more, irregular ones such as "left", "won", "struck"). A
    document about the same subject with another event ("granted review" vs "decided", "joined"
    vs "left") lacks them. Capitalised words are names ("United"), not events."""
    return _verbs(without_dates(text))


def _verbs(undated: str) -> list[str]:
    """:func:`event_verbs` of a text whose dates are already blanked out."""
    out = []
    for x in _WORD.findall(undated):
        if not x.islower() or x in _STOP:
            continue
        if x in IRREGULAR_FORMS or (len(x) >= 5 and x.endswith("ed") and not x.endswith("eed") and x != "hundred"):
            out.append(x)
    return out


#: A sentence that asks rather than asserts: it ends with "?" or opens (after any list number)
#: with an interrogative or an inverted auxiliary ("Does ...", "Whether ...", "Will ...").
_QUESTION = re.compile(
    r"^\s*(?:\(?\d+[.)]\s*)?(?:whether|does|do|did|is|are|was|were|can|could|may|might|must|should|shall|will|would|"
    r"has|have|had|what|which|who|whom|whose|when|where|why|how)\b",
    re.I,
)


def assertions(title: str, snippet: str) -> str:
    """A document's title and snippet without their questions: from a sentence opening as a
    question ("Does the Act ...", "Whether ...") to its "?" (or to the end of a snippet cut
    mid-question), and the question part of "Will X? resolved YES"."""
    kept = []
    for part in (title, snippet):
        asking = False  # inside a question that has not reached its "?" (sentences split at "U.S. ")
        for sent in _SENTENCE.split(part or ""):
            if "?" in sent:
                sent, asking = sent[sent.rindex("?") + 1 :], False
            elif asking or _QUESTION.match(sent):
                asking = True
                continue
            if sent.strip():
                kept.append(sent)
    return " ".join(kept)


@dataclass(frozen=True)
class ClaimTerms:
    """What a document must hold to support a claim: weighted content-word stems, numbers, the
    earliest day a document may have (the latest start of the periods the claim names), and the
    stems of the claim's event verbs (:func:`event_verbs`), which the document must all hold, and
    its negating words (:func:`polarity`), which the document must share exactly."""

    weights: dict[str, float]
    numbers: tuple[Number, ...]
    not_before: dt.date | None
    n_words: int
    verbs: frozenset[str] = frozenset()
    polarity: frozenset[str] = frozenset()

    @property
    def total(self) -> float:
        """Sum of the word weights."""
        return sum(self.weights.values())


@dataclass(frozen=True)
class Support:
    """A document that supports a claim: id, publication day, source, support (0-1: the weighted
    share of the claim's content words it holds), whether its date is consistent with the periods
    the claim names, and the unweighted share of the claim's content words it holds."""

    doc_id: str
    day: dt.date
    source: str
    score: float
    consistent: bool = True
    words: float = 1.0

    def describe(self) -> str:
        """``doc_id (YYYY-MM-DD, support 0.87)``."""
        return f"{self.doc_id} ({self.day}, support {self.score:.2f})"


class _Document:
    """A document's assertions as the support test reads them: ``rough`` stems of all its words
    (dates included: a superset, cheap), ``polarity``, and on demand (:meth:`exact`) the stems and
    numbers outside its dates."""

    __slots__ = ("text", "rough", "polarity", "_exact")

    def __init__(self, text: str):
        self.text = text
        self.rough = frozenset(stem(w) for w in _words(text))
        self.polarity = polarity(text)
        self._exact: tuple[frozenset[str], tuple[Number, ...]] | None = None

    def exact(self) -> tuple[frozenset[str], tuple[Number, ...]]:
        """Word stems and numbers outside the document's dates."""
        if self._exact is None:
            undated = without_dates(self.text)
            self._exact = (frozenset(stem(w) for w in _words(undated)), tuple(_numbers(undated)))
        return self._exact


class CorpusLayer:
    """Dates claims by the earliest corpus document that supports them (see the module docstring).

    Args:
        search: a search backend (:class:`anachron.retrieval.search.BM25Search` normally; any
            :class:`~anachron.retrieval.search.SearchBackend` works). With a BM25 index the
            words are weighted by inverse document frequency and the cutoff splits one scoring
            pass; other backends weigh every word alike and search twice.
        k: hits per search (per side of the cutoff).
        min_support: share of the claim's (weighted) content words a document must hold.
        min_words: fewer content words than this and the claim is not looked up.

    Search failures propagate from :meth:`supporting` (the caller records them); :meth:`check`
    turns them into "no verdict", counted in :attr:`n_errors` (the latest in :attr:`last_error`).
    """

    def __init__(
        self,
        search: "SearchBackend",
        *,
        k: int = DEFAULT_K,
        min_support: float = MIN_SUPPORT,
        min_words: int = MIN_WORDS,
    ):
        if not 0 < float(min_support) <= 1:
            raise ValueError(f"min_support must be in (0, 1], got {min_support!r}")
        self.search, self.k, self.min_support, self.min_words = search, int(k), float(min_support), int(min_words)
        self.n_searches = 0
        self.n_errors, self.last_error = 0, ""
        self._idf_cache: dict[str, float] = {}
        doc_freq = getattr(search, "doc_freq", None)
        n_docs = getattr(search, "n_docs", 0)
        self._doc_freq = doc_freq if callable(doc_freq) and n_docs else None
        self._n_docs = int(n_docs or 0)
        first = getattr(search, "source_first_days", None)
        self._first_days = {s: dt.date.fromisoformat(d) for s, d in first().items()} if callable(first) else {}
        # the day by which a source had published all but its last 1%: where its coverage ends
        try:
            self._last_days = {s: dt.date.fromisoformat(d) for s, d in first(0.99).items()} if callable(first) else {}
        except TypeError:  # a backend without quantiles: coverage is taken to run on
            self._last_days = {}
        self._cache: dict[tuple[str, str], GroundedVerdict | None] = {}
        self._docs: dict[str, _Document] = {}

    # -- support ---------------------------------------------------------------------------
    def _idf(self, words: Iterable[str]) -> dict[str, float]:
        todo = [w for w in set(words) if w not in self._idf_cache]
        if todo:
            if self._doc_freq is None:
                self._idf_cache.update({w: 1.0 for w in todo})
            else:
                n = self._n_docs
                for w, df in zip(todo, self._doc_freq(todo)):
                    self._idf_cache[w] = math.log(1.0 + (n - df + 0.5) / (df + 0.5))
        return {w: self._idf_cache[w] for w in words}

    def terms(self, fact: str) -> ClaimTerms:
        """The claim's weighted word stems, numbers, earliest possible document day, event verbs
        and negating words."""
        periods = find_periods(fact)
        undated = fact
        for p in periods:
            undated = undated.replace(p.text, " ")
        words = _words(undated)
        idf = self._idf(words)
        weights: dict[str, float] = {}
        for w in words:
            s = stem(w)
            weights[s] = max(weights.get(s, 0.0), idf[w])
        return ClaimTerms(
            weights, tuple(_numbers(undated)), max((p.start for p in periods), default=None), len(weights),
            frozenset(stem(v) for v in _verbs(undated)), polarity(fact),
        )

    def _document(self, hit: "SearchHit") -> "_Document":
        """A hit's parsed assertions (cached by document id)."""
        key = str(hit.doc_id)
        doc = self._docs.get(key)
        if doc is None:
            doc = _Document(assertions(str(getattr(hit, "title", "") or ""), str(getattr(hit, "snippet", "") or "")))
            if len(self._docs) >= DOC_CACHE:
                self._docs.clear()
            self._docs[key] = doc
        return doc

    def score(self, terms: ClaimTerms, hit: "SearchHit", floor: float = 0.0) -> Support | None:
        """The hit's support of the claim, or None: too few claim words, no publication day,
        another event or polarity, a claim number missing from the hit, or a support below
        ``floor`` (judged first on the hit's words with its dates left in, an upper bound, so
        that most hits are rejected without reading their dates)."""
        day = to_date(getattr(hit, "published_at", None))
        if day is None or terms.n_words < self.min_words or not terms.total:
            return None
        doc = self._document(hit)
        if doc.polarity != terms.polarity or (floor <= 0 and not terms.verbs <= doc.rough):
            return None
        if floor > 0 and sum(w for s, w in terms.weights.items() if s in doc.rough) / terms.total < min(floor, PARAPHRASE_CLAIM_COVER):
            return None
        stems, have = doc.exact()
        if not all(any(n.matches(h) for h in have) for n in terms.numbers):
            return None
        held = [s for s in terms.weights if s in stems]
        score = sum(terms.weights[s] for s in held) / terms.total
        if (score < floor or not terms.verbs <= stems) and not (floor > 0 and self.paraphrase(terms, doc, have)):
            return None
        consistent = terms.not_before is None or day >= terms.not_before
        return Support(
            str(hit.doc_id), day, str(getattr(hit, "source", "") or ""), round(score, 4), consistent,
            round(len(held) / len(terms.weights), 4),
        )

    def paraphrase(self, terms: ClaimTerms, doc: "_Document", numbers: tuple[Number, ...]) -> bool:
        """Whether the claim restates the document in other words (see the module docstring):
        the IDF-weighted share of the document's content words the claim holds is at least
        :data:`PARAPHRASE_DOC_COVER`, the claim's share the document holds at least
        :data:`PARAPHRASE_CLAIM_COVER`, they share :data:`PARAPHRASE_RARE` words of the corpus's
        rarer words (names, rare terms) or more, and every number of the document is one of the
        claim's when the claim states numbers (every number of the claim is the document's in
        any case: :meth:`score`). Verbs and common words may differ ("slashes" / "cut", "deal" / "agreement"),
        clauses may be reordered and the tense changed: the rare words carry the event. Only with
        a backend that gives document frequencies (words weighed alike cannot tell which words
        carry the event)."""
        if self._doc_freq is None:
            return False  # words weighed alike cannot tell the words that carry the event
        weights = self._doc_weights(doc)
        total = sum(weights.values())
        if not total or not terms.total:
            return False
        shared = [s for s in weights if s in terms.weights]
        doc_cover = sum(weights[s] for s in shared) / total
        claim_cover = sum(terms.weights[s] for s in shared) / terms.total
        rare = sum(1 for s in shared if weights[s] >= self._rare_idf - 1e-9)
        return (
            doc_cover >= PARAPHRASE_DOC_COVER and claim_cover >= PARAPHRASE_CLAIM_COVER and rare >= PARAPHRASE_RARE
            and (not terms.numbers or all(any(n.matches(c) for c in terms.numbers) for n in numbers))
        )

    def specific(self, fact: str, terms: ClaimTerms) -> bool:
        """Whether a claim says enough to be dated by a document: it asserts something (a content
        word written in lower case: a bare name such as "Kris Dunn" asserts nothing), and, with
        document frequencies, it names something rare (a word held by at most
        :data:`RARE_DOC_SHARE` of the documents: "Soccer League Suspended Operations" fits
        many events years apart)."""
        if not any(w.islower() and len(w) > 1 and w.lower() not in _STOP for w in _WORD.findall(without_dates(fact))):
            return False
        return self._doc_freq is None or any(w >= self._rare_idf - 1e-9 for w in terms.weights.values())

    def _doc_weights(self, doc: "_Document") -> dict[str, float]:
        """A document's content-word stems weighted by IDF (as a claim's are)."""
        words = _words(without_dates(doc.text))
        idf = self._idf(words)
        out: dict[str, float] = {}
        for w in words:
            st = stem(w)
            out[st] = max(out.get(st, 0.0), idf[w])
        return out

    @property
    def _rare_idf(self) -> float:
        """The IDF from which a word is rare: held by at most :data:`RARE_DOC_SHARE` of the
        documents (at least one): log(1 + (N - df + 0.5) / (df + 0.5)) at that df."""
        n = max(self._n_docs, 1)
        df = max(1.0, RARE_DOC_SHARE * n)
        return math.log(1.0 + (n - df + 0.5) / (df + 0.5))

    def support(self, terms: ClaimTerms, hit: "SearchHit") -> Support | None:
        """:meth:`score` when it reaches ``min_support``, else None."""
        return self.score(terms, hit, self.min_support)

    def supporting(self, fact: str, *, as_of: dt.date | None = None) -> list[Support]:
        """Documents of one search (``k`` hits, published on or before ``as_of``; None: no filter)
        that support ``fact`` with a date consistent with it, earliest first. Search errors raise."""
        terms = self.terms(fact)
        if terms.n_words < self.min_words:
            return []
        self.n_searches += 1
        hits = self.search.search(fact, k=self.k, as_of=as_of)
        found = [s for s in (self.support(terms, h) for h in hits) if s is not None and s.consistent]
        return sorted(found, key=lambda s: (s.day, s.doc_id))

    def _split(self, fact: str, cutoff: dt.date) -> tuple[list[Any], Callable[[], list[Any]]]:
        """Hits on or before the cutoff, and a function giving the hits after it (searched only
        when called, where the backend allows: ``ranked_split``, else ``search_split``, else two
        searches)."""
        self.n_searches += 1
        ranked = getattr(self.search, "ranked_split", None)
        if callable(ranked):
            return ranked(fact, cutoff, k=self.k)
        split = getattr(self.search, "search_split", None)
        if callable(split):
            before, later = split(fact, cutoff, k=self.k)
            return before, lambda: later
        before = self.search.search(fact, k=self.k, as_of=cutoff)
        return before, lambda: [
            h for h in self.search.search(fact, k=self.k, as_of=None) if (to_date(h.published_at) or cutoff) > cutoff
        ]

    # -- verdict ---------------------------------------------------------------------------
    def check(self, fact: str, cutoff: dt.date) -> GroundedVerdict | None:
        """The corpus verdict on ``fact`` for ``cutoff``: clean or leaked with the earliest
        supporting document's date, or None (see the module docstring). Cached per (fact, cutoff)."""
        key = (fact, cutoff.isoformat())
        if key not in self._cache:
            self._cache[key] = self._check(fact, cutoff)
        return self._cache[key]

    def new_term(self, fact: str, cutoff: dt.date) -> tuple[str, dt.date, int] | None:
        """The word of ``fact`` that the dated news first uses after ``cutoff`` (see the module
        docstring: a term dated by its first appearance), as ``(word, first day, documents)``,
        or None. Only lower-case words of :data:`MIN_TERM_CHARS`+ letters count (a common noun
        the news starts to use: "coronavirus"; a name can be old and unreported), found in at
        least :data:`MIN_TERM_DOCS` news documents of sources that were publishing from at least
        :data:`TERM_COVERAGE` before the cutoff through the cutoff (a source that had stopped, or a
        gap in the corpus, makes a word's absence meaningless), and only when its absence is
        telling: at the rate the news has used it since, the year before the cutoff would have held
        it at least :data:`TERM_EXPECTED_BEFORE` times (a word five sparse headlines use over years
        proves nothing by being absent from a year of them)."""
        first_days = getattr(self.search, "term_first_days", None)
        # only sources publishing through the cutoff: a term's absence from a source that had stopped
        # (or not yet started) says nothing about whether the word was in use
        news = [
            s for s, d in self._first_days.items()
            if s in NEWS_SOURCES and d <= cutoff - TERM_COVERAGE and self._last_days.get(s, dt.date.max) >= cutoff
        ]
        if not callable(first_days) or not news:
            return None
        words = sorted({w for w in _LOWER_TERM.findall(fact[:5000]) if w not in _STOP and len(w) >= MIN_TERM_CHARS})
        if not words:
            return None
        found = []
        between = getattr(self.search, "docs_between", None)
        before = between(news, (cutoff - TERM_COVERAGE).isoformat(), cutoff.isoformat()) if callable(between) else None
        for w, (day, n) in zip(words, first_days(words, news)):
            if day is None or n < MIN_TERM_DOCS or dt.date.fromisoformat(day) <= cutoff:
                continue
            if before is not None:
                # the word's rate in the news since its first use, over the documents of the year
                # before the cutoff: how often it would have appeared had it been in use then
                after = between(news, day, "9999-12-31")
                if n * before / max(1, after) < TERM_EXPECTED_BEFORE:
                    continue
            found.append((dt.date.fromisoformat(day), w, n))
        if not found:
            return None
        day, w, n = min(found)
        return w, day, n

    def _check(self, fact: str, cutoff: dt.date) -> GroundedVerdict | None:
        new = self.new_term(fact, cutoff)
        if new is not None:
            w, day, n = new
            return GroundedVerdict(day, f"corpus: the term {w!r} first appears in the dated news on {day} ({n} documents), after the cutoff")
        terms = self.terms(fact)
        if terms.n_words < self.min_words or not self.specific(fact, terms):
            return None
        try:
            before, later = self._split(fact, cutoff)
        except Exception as exc:  # a backend failure: no corpus verdict, the next layer decides
            self.n_errors, self.last_error = self.n_errors + 1, f"{type(exc).__name__}: {exc}"
            return None
        dated = [s for s in (self.support(terms, h) for h in before) if s is not None and s.consistent]
        dated.sort(key=lambda s: (s.day, s.doc_id))
        if dated:
            docs = "; ".join(s.describe() for s in dated[:REASON_DOCS])
            return GroundedVerdict(
                dated[0].day, f"corpus: supported on or before the cutoff by {len(dated)} document(s): {docs}"
            )
        if terms.not_before is not None:
            return None
        try:
            later_hits = later()
        except Exception as exc:  # as above
            self.n_errors, self.last_error = self.n_errors + 1, f"{type(exc).__name__}: {exc}"
            return None
        late = [s for s in (self.support(terms, h) for h in later_hits) if s is not None and s.consistent]
        late = sorted((s for s in late if self._covered(s.source, cutoff)), key=lambda s: (s.day, s.doc_id))
        if not late:
            return None
        docs = "; ".join(s.describe() for s in late[:REASON_DOCS])
        return GroundedVerdict(
            late[0].day, f"corpus: supported only after the cutoff, by {len(late)} document(s): {docs}; none on or before it"
        )

    def _covered(self, source: str, cutoff: dt.date) -> bool:
        """Whether ``source`` was already publishing by the cutoff (unknown sources: yes)."""
        first = self._first_days.get(source)
        return first is None or first <= cutoff


def open_corpus_layer(index: str | os.PathLike[str], **kwargs: Any) -> CorpusLayer:
    """A :class:`CorpusLayer` over the BM25 index saved in ``index`` (rule build_corpus's
    ``results/corpus/bm25``); ``kwargs`` go to :class:`CorpusLayer`.

    Raises:
        anachron.retrieval.search.SearchError: ``index`` is not a saved index.
    """
    from anachron.retrieval.search import BM25Search

    return CorpusLayer(BM25Search.load(index), **kwargs)
