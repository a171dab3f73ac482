"""Search over the dated corpus, with a hard as-of date filter or without it.

Two backends share one interface (:class:`SearchBackend`):

* :class:`BM25Search` — local BM25 (the ``bm25s`` library) over the document table of
  :func:`anachron.retrieval.corpus.build_corpus`. The index is built once over every document;
  the as-of filter is applied at query time. Documents are indexed in ``published_at`` order,
  so "published on or before D" is a prefix of the index: scores are computed once and the
  top k are taken from that prefix only, so the filter never costs recall (a filtered search
  returns k hits whenever k documents dated on or before D match the query).
* :class:`LiveSearch` — a hosted web-search API with a date filter (Perplexity's Search API:
  ``POST https://api.perplexity.ai/search`` with ``search_before_date_filter``).

``as_of=None`` is the unrestricted mode (Anachron's Mode A), a date the enforced mode (Mode B).
:func:`validity_index` answers "was this entity (e.g. an S&P 500 member) valid on day D" from
the corpus's entity table, for the survivorship trace metric (docs/metrics.md#survivorship).
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Protocol, runtime_checkable
from urllib.parse import urlparse

import numpy as np
import pandas as pd
import requests

from anachron.dates import to_iso
from anachron.errors import AnachronError
from anachron.frames import is_na_or_nat, is_null, require_columns

log = logging.getLogger(__name__)

#: Perplexity Search API endpoint.
PERPLEXITY_SEARCH_URL = "https://api.perplexity.ai/search"
#: Default environment variable holding the hosted search API key.
DEFAULT_KEY_ENV = "PERPLEXITY_API_KEY"
#: Token pattern: runs of word characters (single letters kept, so one-letter tickers match).
TOKEN_PATTERN = r"(?u)\b\w+\b"
#: Stopword list of bm25s used for documents and queries.
STOPWORDS = "en"
#: On-disk layout version of :meth:`BM25Search.save`.
INDEX_FORMAT = 1
_META_FILE = "anachron_search.json"
_DOCS_FILE = "documents.parquet"


class SearchError(AnachronError, RuntimeError):
    """A search backend failed (HTTP error, bad answer, missing key, unreadable index).

    The message names the backend and what to change (key variable, URL, index directory).
    """


@dataclass(frozen=True)
class SearchHit:
    """One search result.

    ``doc_id`` (corpus id, or the URL for live results), ``title``, ``snippet`` (start of the
    text, at most ``snippet_chars``), ``published_at`` (ISO day; ``""`` when a live result has
    no date), ``score`` (backend score, higher is better; live results: 1/rank), ``source``,
    ``entities`` (entity keys, see :func:`anachron.retrieval.corpus.entity_key`), ``restates``
    (doc_id of the earlier report this one revises, or None).
    """

    doc_id: str
    title: str
    snippet: str
    published_at: str
    score: float
    source: str
    entities: tuple[str, ...] = ()
    restates: str | None = None


@runtime_checkable
class SearchBackend(Protocol):
    """What a retrieval method needs: ``search(query, k=5, as_of=None) -> list[SearchHit]``.

    ``as_of`` given: hard filter, only documents published on or before that day;
    ``None``: unrestricted. An empty query returns ``[]``. Failures raise :class:`SearchError`.
    """

    def search(self, query: str, *, k: int = 5, as_of: dt.date | None = None) -> list[SearchHit]: ...


def as_iso_day(day: Any) -> str:
    """``date``/``datetime``/``Timestamp``/string starting with an ISO day -> ``"YYYY-MM-DD"``
    (:func:`anachron.dates.to_iso`); ``ValueError`` otherwise (NaT, None, not a real day)."""
    iso = to_iso(day)
    if iso is None:
        raise ValueError(f"{day!r} is not a date (use a datetime.date or an ISO YYYY-MM-DD string)")
    return iso


def _entities_tuple(raw: Any) -> tuple[str, ...]:
    if is_null(raw) or (isinstance(raw, str) and raw == "[]"):
        return ()
    if isinstance(raw, (list, tuple, np.ndarray)):
        return tuple(str(x) for x in raw)
    try:
        val = json.loads(raw)
    except (TypeError, ValueError):
        return ()
    return tuple(str(x) for x in val) if isinstance(val, list) else ()


# ---------------------------------------------------------------------------------------------
# BM25
# ---------------------------------------------------------------------------------------------


class BM25Search:
    """BM25 over a corpus table, with the as-of filter applied at query time.

    Parameters
    ----------
    corpus:
        Frame with at least ``doc_id, published_at, title, text`` (optional: ``source,
        entities, restates``), as from :func:`~anachron.retrieval.corpus.build_corpus`. The
        indexed text is ``title + " " + text``. Rows whose ``published_at`` is not an ISO day
        are dropped (their number is :attr:`dropped_bad_date`).
    snippet_chars:
        Length of :attr:`SearchHit.snippet` (the start of ``text``, or of the title when the
        text is empty).
    k1, b:
        BM25 parameters (Robertson et al.; bm25s defaults).

    Tokenisation: lower case, runs of word characters (:data:`TOKEN_PATTERN`), bm25s's English
    stopword list; no stemming. Query words absent from the corpus are ignored, so a query in
    another language returns whatever it shares with the corpus (often nothing).

    Raises :class:`SearchError` when a required column is missing or ``doc_id`` repeats.
    """

    def __init__(self, corpus: pd.DataFrame, *, snippet_chars: int = 300, k1: float = 1.5, b: float = 0.75) -> None:
        import bm25s

        require_columns(corpus, ("doc_id", "published_at", "title", "text"), "BM25Search: corpus", error=SearchError,
                        hint="build it with anachron.retrieval.build_corpus.")
        if corpus["doc_id"].duplicated().any():
            dup = corpus.loc[corpus["doc_id"].duplicated(), "doc_id"].iloc[0]
            raise SearchError(f"BM25Search: doc_id {dup!r} repeats; document ids must be unique.")
        pub = corpus["published_at"].astype(object).map(lambda v: v.strip()[:10] if isinstance(v, str) else None)
        ok = pub.map(lambda s: bool(s) and re.match(r"^\d{4}-\d{2}-\d{2}$", s) is not None)
        self.dropped_bad_date = int((~ok).sum())
        if self.dropped_bad_date:
            log.warning("BM25Search: dropped %d documents without an ISO published_at", self.dropped_bad_date)
        docs = corpus.loc[ok.to_numpy()].copy()
        docs["published_at"] = pub[ok].to_numpy()
        docs = docs.sort_values(["published_at", "doc_id"], kind="mergesort").reset_index(drop=True)
        self.snippet_chars = int(snippet_chars)
        self._set_docs(docs)
        self._splitter = re.compile(TOKEN_PATTERN).findall
        self.retriever = None
        self._vocab: dict[str, int] = {}
        if len(docs):
            ids, vocab = self._tokenize_corpus(docs)
            del docs
            self.retriever = bm25s.BM25(k1=k1, b=b)
            self.retriever.index((ids, vocab), show_progress=False)
            del ids
            self._vocab = self.retriever.vocab_dict
            _sort_postings(self.retriever)

    def _tokenize_corpus(self, docs: pd.DataFrame) -> tuple[list[list[int]], dict[str, int]]:
        """Token ids of ``title + " " + text`` per document and the vocabulary (bm25s tokenizer)."""
        import bm25s

        tokenizer = bm25s.tokenization.Tokenizer(lower=True, splitter=TOKEN_PATTERN, stopwords=STOPWORDS)
        text = docs["text"].astype(object).where(docs["text"].notna(), "").astype(str).to_numpy()
        stream = tokenizer.streaming_tokenize((f"{t} {x}" for t, x in zip(self._titles, text)), update_vocab=True)
        ids = list(stream)
        return ids, tokenizer.get_vocab_dict()

    # -- metadata arrays ------------------------------------------------------------------
    def _set_docs(self, docs: pd.DataFrame) -> None:
        n = len(docs)

        def col(name: str, default: Any) -> pd.Series:
            if name in docs.columns:
                return docs[name].astype(object).where(docs[name].notna(), default)
            return pd.Series([default] * n, dtype=object)

        self.__dict__.pop("_days_of_sources", None)  # docs_between's days of the documents replaced here
        self.__dict__.pop("_entity_tuples", None)
        self._doc_ids = col("doc_id", "").astype(str).to_numpy(dtype=object)
        self._published = np.asarray(docs["published_at"].astype(str).to_numpy(), dtype="U10")
        self._titles = col("title", "").astype(str).to_numpy(dtype=object)
        text = col("text", "").astype(str)
        snip = text.where(text.str.len() > 0, self._titles)
        self._snippets = snip.str.slice(0, self.snippet_chars).to_numpy(dtype=object)
        self._sources = col("source", "").astype(str).to_numpy(dtype=object)
        self._entities = col("entities", "[]").to_numpy(dtype=object)
        self._restates = col("restates", None).to_numpy(dtype=object)

    @property
    def n_docs(self) -> int:
        """Number of indexed documents."""
        return int(len(self._doc_ids))

    def _hit(self, i: int, score: float) -> SearchHit:
        r = self._restates[i]
        return SearchHit(
            doc_id=str(self._doc_ids[i]),
            title=str(self._titles[i]),
            snippet=str(self._snippets[i]),
            published_at=str(self._published[i]),
            score=float(score),
            source=str(self._sources[i]),
            entities=self._entity_tuple(i),
            restates=None if is_null(r) else str(r),
        )

    def _entity_tuple(self, i: int) -> tuple[str, ...]:
        """Document ``i``'s entity keys (parsed once per document)."""
        cache = self.__dict__.setdefault("_entity_tuples", {})
        got = cache.get(i)
        if got is None:
            got = cache[i] = _entities_tuple(self._entities[i])
        return got

    def query_token_ids(self, query: str) -> list[int]:
        """Vocabulary ids of the query's tokens (stopwords and unknown words dropped)."""
        vocab = self._vocab
        return [vocab[w] for w in self._splitter(query.lower()) if w and w in vocab]

    def search(self, query: str, *, k: int = 5, as_of: Any = None) -> list[SearchHit]:
        """The ``k`` best documents for ``query``, best first (ties: earlier document first).

        ``as_of`` (date or ISO string): only documents with ``published_at <= as_of``; ``None``:
        all. Only documents sharing at least one token with the query are returned, so fewer
        than ``k`` hits come back when fewer match. An empty or all-stopword query returns [].

        Raises ``ValueError`` for ``k < 1`` or an ``as_of`` that is not a date.
        """
        if int(k) < 1:
            raise ValueError(f"k must be >= 1, got {k}")
        if not isinstance(query, str) or not query.strip() or self.retriever is None:
            return []
        cut = self.n_docs if as_of is None else int(np.searchsorted(self._published, as_iso_day(as_of), side="right"))
        if cut == 0:
            return []
        ids = self.query_token_ids(query)
        if not ids:
            return []
        return self._top(ids, 0, cut, k)

    def search_split(self, query: str, day: Any, *, k: int = 5) -> tuple[list[SearchHit], list[SearchHit]]:
        """The ``k`` best documents published on or before ``day`` and the ``k`` best published after it.

        Each side is scored over its own documents (the same scores as :meth:`search`); each list
        is best first, ties by the earlier document (at the k-th place too), and holds only
        documents sharing a token with the query. Raises ``ValueError`` for ``k < 1`` or a ``day``
        that is not a date.
        """
        before, after = self.ranked_split(query, day, k=k)
        return before, after()

    def ranked_split(self, query: str, day: Any, *, k: int = 5) -> tuple[list[SearchHit], Callable[[], list[SearchHit]]]:
        """:meth:`search_split` with the later hits computed only when asked for: the ``k`` best
        documents published on or before ``day``, and a function returning the ``k`` best published
        after it (the same lists as :meth:`search_split`; each side is scored when asked for).

        Raises ``ValueError`` for ``k < 1`` or a ``day`` that is not a date.
        """
        if int(k) < 1:
            raise ValueError(f"k must be >= 1, got {k}")
        cut = int(np.searchsorted(self._published, as_iso_day(day), side="right"))
        ids = self.query_token_ids(query) if isinstance(query, str) and query.strip() and self.retriever is not None else []
        if not ids:
            return [], list
        return self._top(ids, 0, cut, k), lambda: self._top(ids, cut, self.n_docs, k)

    def _top(self, token_ids: list[int], lo: int, hi: int, k: int) -> list[SearchHit]:
        """Hits of the ``k`` best documents with a positive score among ``[lo, hi)``, best first,
        ties by the earlier document; only that range is scored (:meth:`_scores`)."""
        if hi <= lo:
            return []
        scores = self._scores(token_ids, lo, hi)
        positive = np.flatnonzero(scores > 0)
        return [self._hit(i, sc) for i, sc in _select(lo + positive, scores[positive], k)]

    def doc_freq(self, words: Iterable[str]) -> list[int]:
        """How many documents contain each of ``words`` (lower-cased index tokens; 0 when unknown)."""
        if self.retriever is None:
            return [0 for _ in words]
        indptr = self.retriever.scores["indptr"]
        out = []
        for w in words:
            t = self._vocab.get(w.lower())
            out.append(0 if t is None else int(indptr[t + 1] - indptr[t]))
        return out

    def term_first_days(self, words: Iterable[str], sources: Iterable[str]) -> list[tuple[str | None, int]]:
        """For each of ``words`` (lower-cased index tokens), the first day a document of
        ``sources`` holding it was published and how many such documents there are
        (``(None, 0)`` when none). Postings ascend by document, i.e. by date."""
        if self.retriever is None:
            return [(None, 0) for _ in words]
        wanted = set(sources)
        if not hasattr(self, "_source_mask") or self._source_mask[0] != wanted:
            self._source_mask = (wanted, np.isin(self._sources, list(wanted)))
        mask = self._source_mask[1]
        s = self.retriever.scores
        indices, indptr = s["indices"], s["indptr"]
        out: list[tuple[str | None, int]] = []
        for w in words:
            t = self._vocab.get(w.lower())
            if t is None:
                out.append((None, 0))
                continue
            idx = np.asarray(indices[int(indptr[t]) : int(indptr[t + 1])])
            idx = idx[mask[idx]]
            out.append((str(self._published[idx[0]]), int(idx.size)) if idx.size else (None, 0))
        return out

    def docs_between(self, sources: Iterable[str], start: str, end: str) -> int:
        """How many documents of ``sources`` were published from ``start`` to ``end`` (ISO days, inclusive).

        Two binary searches in the sorted publication days of ``sources`` (kept per set of
        sources), not a scan of the corpus per call.
        """
        if not self.n_docs:
            return 0
        key = frozenset(sources)
        cache = self.__dict__.setdefault("_days_of_sources", {})
        days = cache.get(key)
        if days is None:
            days = cache[key] = np.sort(self._published[np.isin(self._sources, list(key))])
        return max(0, int(np.searchsorted(days, end, side="right") - np.searchsorted(days, start, side="left")))

    def source_first_days(self, quantile: float = 0.01) -> dict[str, str]:
        """Per source, the day by which ``quantile`` of its documents had been published (ISO day).

        The start of a source's coverage: before that day the source says little, so the absence
        of its documents before a date means nothing (a few stray early documents do not count).
        """
        out: dict[str, str] = {}
        if not self.n_docs:
            return out
        for src in pd.unique(self._sources):
            days = np.sort(self._published[self._sources == src])
            out[str(src)] = str(days[min(len(days) - 1, int(quantile * len(days)))])
        return out

    def _scores(self, token_ids: list[int], start: int, end: int) -> np.ndarray:
        """BM25 scores of documents ``[start, end)`` (bm25s's precomputed per-token weights, summed
        in the query's token order; element ``i`` is document ``start + i``)."""
        s = self.retriever.scores
        data, indices, indptr = s["data"], s["indices"], s["indptr"]
        out = np.zeros(max(0, end - start), dtype=np.float32)
        whole = start <= 0 and end >= self.n_docs
        for t in token_ids:
            lo, hi = int(indptr[t]), int(indptr[t + 1])
            idx = indices[lo:hi]
            w = data[lo:hi]
            if not whole:
                # Postings are sorted by document, i.e. by date: keep the part inside the range.
                a, b = np.searchsorted(idx, (start, end), side="left")
                idx, w = idx[a:b] - start if start else idx[a:b], w[a:b]
            out[idx] += w  # one posting per (token, document): no repeated indices
        return out

    # -- persistence ------------------------------------------------------------------------
    def save(self, directory: str | os.PathLike[str]) -> Path:
        """Write the index (bm25s arrays + vocabulary), the document metadata and settings to ``directory``.

        Returns the directory. Raises :class:`SearchError` when it cannot be written.
        """
        path = Path(directory)
        try:
            path.mkdir(parents=True, exist_ok=True)
            if self.retriever is not None:
                self.retriever.save(str(path), show_progress=False)
            docs = pd.DataFrame(
                {
                    "doc_id": self._doc_ids.astype(str),
                    "published_at": self._published.astype(str),
                    "title": self._titles.astype(str),
                    "snippet": self._snippets.astype(str),
                    "source": self._sources.astype(str),
                    "entities": [e if isinstance(e, str) else json.dumps(list(_entities_tuple(e))) for e in self._entities],
                    "restates": pd.Series(self._restates, dtype=object),
                }
            )
            docs.to_parquet(path / _DOCS_FILE, index=False)
            import bm25s

            meta = {
                "format": INDEX_FORMAT,
                "n_docs": self.n_docs,
                "snippet_chars": self.snippet_chars,
                "token_pattern": TOKEN_PATTERN,
                "stopwords": STOPWORDS,
                "bm25s_version": getattr(bm25s, "__version__", "unknown"),
                "empty": self.retriever is None,
                "dropped_bad_date": self.dropped_bad_date,
            }
            (path / _META_FILE).write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
        except OSError as exc:
            raise SearchError(f"BM25Search: could not write the index to {str(path)!r}: {exc}") from exc
        return path

    @classmethod
    def load(cls, directory: str | os.PathLike[str], *, mmap: bool = False) -> "BM25Search":
        """Load an index written by :meth:`save` (``mmap=True`` maps the score arrays from disk).

        Raises :class:`SearchError` when the directory is not such an index.
        """
        import bm25s

        path = Path(directory)
        meta_path = path / _META_FILE
        if not meta_path.is_file() or not (path / _DOCS_FILE).is_file():
            raise SearchError(f"BM25Search: {str(path)!r} is not a saved index (no {_META_FILE} / {_DOCS_FILE}); build and save one first.")
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
            if int(meta.get("format", 0)) != INDEX_FORMAT:
                raise SearchError(f"BM25Search: index format {meta.get('format')} in {str(path)!r}, expected {INDEX_FORMAT}; rebuild it.")
            docs = pd.read_parquet(path / _DOCS_FILE)
            self = cls.__new__(cls)
            self.snippet_chars = int(meta["snippet_chars"])
            self.dropped_bad_date = int(meta.get("dropped_bad_date", 0))
            self._splitter = re.compile(meta.get("token_pattern", TOKEN_PATTERN)).findall
            self._doc_ids = docs["doc_id"].astype(str).to_numpy(dtype=object)
            self._published = np.asarray(docs["published_at"].astype(str).to_numpy(), dtype="U10")
            self._titles = docs["title"].astype(str).to_numpy(dtype=object)
            self._snippets = docs["snippet"].astype(str).to_numpy(dtype=object)
            self._sources = docs["source"].astype(str).to_numpy(dtype=object)
            self._entities = docs["entities"].astype(object).to_numpy(dtype=object)
            self._restates = docs["restates"].astype(object).where(docs["restates"].notna(), None).to_numpy(dtype=object)
            if meta.get("empty"):
                self.retriever, self._vocab = None, {}
            else:
                self.retriever = bm25s.BM25.load(str(path), mmap=mmap, show_progress=False)
                self._vocab = self.retriever.vocab_dict
                _sort_postings(self.retriever)
        except SearchError:
            raise
        except (OSError, ValueError, KeyError) as exc:
            raise SearchError(f"BM25Search: could not load the index in {str(path)!r}: {exc}; rebuild it.") from exc
        if len(self._doc_ids) != int(meta["n_docs"]):
            raise SearchError(f"BM25Search: {str(path)!r} holds {len(self._doc_ids)} documents, its metadata says {meta['n_docs']}; rebuild it.")
        return self


def _select(idx: np.ndarray, scores: np.ndarray, k: int) -> list[tuple[int, float]]:
    """``(document, score)`` of the ``k`` best positive ``scores`` (documents ``idx``, ascending),
    best first; equal scores: the earlier document first, also at the k-th place."""
    keep = scores > 0
    idx, scores = idx[keep], scores[keep]
    if idx.size > k:
        kth = np.partition(scores, idx.size - k)[idx.size - k]
        above = scores > kth
        tied = np.flatnonzero(scores == kth)[: k - int(above.sum())]
        above[tied] = True
        idx, scores = idx[above], scores[above]
    order = np.lexsort((idx, -scores))
    return [(int(idx[j]), float(scores[j])) for j in order]


def _sort_postings(retriever: Any) -> None:
    """Make every token's postings ascend by document (the as-of prefix cut relies on it)."""
    s = retriever.scores
    indices, indptr = np.asarray(s["indices"]), np.asarray(s["indptr"])
    if len(indices) < 2:
        return
    step = np.diff(indices.astype(np.int64))
    starts = np.zeros(len(indices), dtype=bool)
    starts[indptr[:-1][indptr[:-1] < len(indices)]] = True
    if np.all((step > 0) | starts[1:]):
        return
    import scipy.sparse as sp

    m = sp.csc_matrix((np.asarray(s["data"]), indices, indptr), shape=(int(s["num_docs"]), len(indptr) - 1))
    m.sort_indices()
    s["data"], s["indices"], s["indptr"] = m.data, m.indices, m.indptr


# ---------------------------------------------------------------------------------------------
# hosted search
# ---------------------------------------------------------------------------------------------


class LiveSearch:
    """A hosted web-search API with a publication-date filter (Perplexity Search API).

    Request: ``POST <url>`` with JSON ``{"query": q, "max_results": k}`` plus, when ``as_of``
    is given, ``"search_before_date_filter": "MM/DD/YYYY"`` (the as-of day); header
    ``Authorization: Bearer <key>``. Answer: ``{"results": [{"title", "url", "snippet",
    "date", "last_updated"}, ...]}``. The API documents the filter as "before" the date;
    to keep the contract ``published_at <= as_of`` whatever its edge semantics, results whose
    ``date`` is after ``as_of`` are dropped here too (:attr:`dropped_after_as_of` counts them).

    Hits: ``doc_id`` = URL, ``published_at`` = the result's date as ISO day (``""`` when the API
    gives none), ``score`` = 1/rank, ``source`` = the URL's host, no entities.

    Parameters
    ----------
    key_env:
        Name of the environment variable holding the API key (read at construction).
    url, timeout:
        Endpoint and seconds per request.
    session:
        ``requests.Session`` (tests inject one; ``responses`` replays recordings); default a new one.
    max_results:
        Upper bound on ``k`` sent to the API (Perplexity accepts at most 20).

    Raises :class:`SearchError` at construction when the key variable is unset, and from
    :meth:`search` on a network error, a non-2xx status (401/403 name the key variable) or an
    answer without a ``results`` list.
    """

    def __init__(
        self,
        key_env: str = DEFAULT_KEY_ENV,
        *,
        url: str = PERPLEXITY_SEARCH_URL,
        session: requests.Session | None = None,
        timeout: float = 30.0,
        max_results: int = 20,
        snippet_chars: int = 300,
    ) -> None:
        key = os.environ.get(key_env, "").strip()
        if not key:
            raise SearchError(f"LiveSearch: environment variable {key_env} holds no API key; set it to your search API key.")
        self._key = key
        self.key_env = key_env
        self.url = url
        self.session = session if session is not None else requests.Session()
        self.timeout = float(timeout)
        self.max_results = int(max_results)
        self.snippet_chars = int(snippet_chars)
        self.dropped_after_as_of = 0

    def request_body(self, query: str, k: int, as_of: Any = None) -> dict[str, Any]:
        """The JSON body sent for a query (exposed for logging and tests)."""
        body: dict[str, Any] = {"query": query, "max_results": max(1, min(int(k), self.max_results))}
        if as_of is not None:
            day = dt.date.fromisoformat(as_iso_day(as_of))
            body["search_before_date_filter"] = day.strftime("%m/%d/%Y")
        return body

    def search(self, query: str, *, k: int = 5, as_of: Any = None) -> list[SearchHit]:
        """Up to ``k`` web results for ``query`` (see the class docstring); [] for an empty query."""
        if int(k) < 1:
            raise ValueError(f"k must be >= 1, got {k}")
        if not isinstance(query, str) or not query.strip():
            return []
        body = self.request_body(query.strip(), k, as_of)
        headers = {"Authorization": f"Bearer {self._key}", "Content-Type": "application/json", "Accept": "application/json"}
        try:
            resp = self.session.post(self.url, json=body, headers=headers, timeout=self.timeout)
        except requests.RequestException as exc:
            raise SearchError(f"LiveSearch: request to {self.url} failed: {exc}") from exc
        if resp.status_code in (401, 403):
            raise SearchError(f"LiveSearch: {self.url} refused the key in {self.key_env} (HTTP {resp.status_code}); check the key.")
        if not 200 <= resp.status_code < 300:
            raise SearchError(f"LiveSearch: {self.url} answered HTTP {resp.status_code}: {resp.text[:200]!r}")
        try:
            results = resp.json()["results"]
            if not isinstance(results, list):
                raise TypeError("results is not a list")
        except (ValueError, KeyError, TypeError) as exc:
            raise SearchError(f"LiveSearch: {self.url} answered without a results list ({exc}): {resp.text[:200]!r}") from exc
        cutoff = None if as_of is None else as_iso_day(as_of)
        hits: list[SearchHit] = []
        for item in results:
            if not isinstance(item, dict):
                continue
            url = str(item.get("url") or "")
            day = _result_day(item.get("date"))
            if cutoff is not None and day and day > cutoff:
                self.dropped_after_as_of += 1
                continue
            hits.append(
                SearchHit(
                    doc_id=url,
                    title=str(item.get("title") or ""),
                    snippet=str(item.get("snippet") or "")[: self.snippet_chars],
                    published_at=day,
                    score=1.0 / (len(hits) + 1),
                    source=urlparse(url).netloc,
                )
            )
            if len(hits) >= k:
                break
        return hits


def _result_day(value: Any) -> str:
    """A result's date as ISO day ("" when absent or not a date)."""
    if not value:
        return ""
    s = str(value).strip()
    return to_iso(s) or to_iso(s, lenient=True) or ""


# ---------------------------------------------------------------------------------------------
# entity validity
# ---------------------------------------------------------------------------------------------


class EntityValidity:
    """Point-in-time validity of entities (e.g. S&P 500 membership spells).

    ``spells``: entity key -> list of ``(valid_from, valid_to)`` ISO days; ``valid_from`` None
    means the window is open at the start (the table knows only a removal day), ``valid_to``
    None that it is still open. An entity is valid on day D iff one spell has
    (``valid_from`` is None or ``valid_from <= D``) and (``valid_to`` is None or ``D < valid_to``);
    an entity without spells is always valid.

    The boundaries follow the cutoff rule of the trace metrics (docs/metrics.md#survivorship):
    what happens on day d is known at a cutoff of d. An entity added on d is valid at cutoff d;
    an entity removed on d ("removed on day d" = no longer a member from d on) is *not* valid
    at cutoff d, only at cutoffs up to d - 1.
    """

    def __init__(self, spells: dict[str, list[tuple[str | None, str | None]]]) -> None:
        self._spells = {k: sorted(v, key=lambda s: (s[0] or "", s[1] or "9999")) for k, v in spells.items()}

    def __contains__(self, entity: object) -> bool:
        return entity in self._spells

    def __len__(self) -> int:
        return len(self._spells)

    def spells(self, entity: str) -> list[tuple[str | None, str | None]]:
        """The entity's spells (empty when the table does not know it)."""
        return list(self._spells.get(entity, ()))

    def is_valid(self, entity: str, day: Any) -> bool:
        """Whether ``entity`` was valid on ``day`` (date or ISO string); unknown entities: True."""
        spells = self._spells.get(entity)
        if spells is None:
            return True
        d = as_iso_day(day)
        return any((vf is None or vf <= d) and (vt is None or d < vt) for vf, vt in spells)

    def invalid(self, entities: Iterable[str], day: Any) -> list[str]:
        """The entities of ``entities`` not valid on ``day``, in input order, without repeats."""
        seen: set[str] = set()
        out = []
        for e in entities:
            if e not in seen and not self.is_valid(e, day):
                out.append(e)
            seen.add(e)
        return out


def validity_index(entities: pd.DataFrame) -> EntityValidity:
    """Build an :class:`EntityValidity` from an entity table (``entity, valid_from, valid_to[, source]``).

    A missing ``valid_from`` opens the window at the start (only a removal day is known); a
    row with neither day says the entity is tracked and always valid. Raises ``ValueError``
    when a column is missing or a day is present but not a date (naming the entity).
    """
    require_columns(entities, ("entity", "valid_from", "valid_to"), "validity_index: entity table")
    spells: dict[str, list[tuple[str | None, str | None]]] = {}
    for ent, vf, vt in entities[["entity", "valid_from", "valid_to"]].itertuples(index=False):
        days = []
        for name, v in (("valid_from", vf), ("valid_to", vt)):
            if is_na_or_nat(v):
                days.append(None)
                continue
            day = to_iso(v)
            if day is None:
                raise ValueError(f"validity_index: entity {ent!r} has {name} {v!r}, not a date")
            days.append(day)
        spells.setdefault(str(ent), []).append((days[0], days[1]))
    return EntityValidity(spells)
