"""Open the search backend a retrieval method uses, from the workflow's settings."""

from __future__ import annotations

from typing import Any

import pandas as pd

from anachron.retrieval.search import BM25Search, LiveSearch, validity_index


def open_search(retrieval: dict[str, Any]) -> dict[str, Any]:
    """``{"search": backend, "entity_validity": EntityValidity}`` for a retrieval method.

    Args:
        retrieval: ``{"index": BM25 index directory, "entities": entity-validity Parquet,
            "backend": "bm25" (default) or "live", "live": LiveSearch keyword arguments}``.

    Raises:
        SearchError: the live backend has no API key in its environment variable.
    """
    backend = retrieval.get("backend", "bm25")
    if backend == "live":
        search = LiveSearch(**dict(retrieval.get("live") or {}))
    else:
        search = BM25Search.load(retrieval["index"])
    validity = validity_index(pd.read_parquet(retrieval["entities"])) if retrieval.get("entities") else None
    return {"search": search, "entity_validity": validity}
