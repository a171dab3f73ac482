"""Date-stamped corpus and date-filtered search (docs/methods.md#corpus; docs/metrics.md#trace-metrics)."""

from anachron.retrieval.corpus import (
    CORPUS_COLUMNS,
    DEFAULT_CIK_TICKERS,
    ENTITY_COLUMNS,
    build_corpus,
    entity_key,
    normalize_case_name,
)
from anachron.retrieval.search import (
    BM25Search,
    EntityValidity,
    LiveSearch,
    SearchBackend,
    SearchError,
    SearchHit,
    validity_index,
)

__all__ = [
    "CORPUS_COLUMNS",
    "DEFAULT_CIK_TICKERS",
    "ENTITY_COLUMNS",
    "BM25Search",
    "EntityValidity",
    "LiveSearch",
    "SearchBackend",
    "SearchError",
    "SearchHit",
    "build_corpus",
    "entity_key",
    "normalize_case_name",
    "validity_index",
]
