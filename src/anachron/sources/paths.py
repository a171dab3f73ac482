"""Where the workflow keeps each fetched raw table (the outputs of the fetch rules in
rules/datasets.smk), as workflow-relative paths: the one place the tasks' and the grounded
checks' input declarations take them from."""

from __future__ import annotations

from typing import Iterable

RAW_DIR = "data/raw"
#: Rule fetch_yahoo: daily prices of every member of any stock window's universe.
PRICES = f"{RAW_DIR}/yahoo/prices.parquet"
PRICES_MANIFEST = f"{RAW_DIR}/yahoo/manifest.json"
#: Rule fetch_sp500: membership spells, dated index changes, dated GICS sectors and names.
SP500_MEMBERSHIP = f"{RAW_DIR}/sp500/membership.parquet"
SP500_CHANGES = f"{RAW_DIR}/sp500/changes.parquet"
SP500_SECTORS = f"{RAW_DIR}/sp500/sectors.parquet"
SP500_MANIFEST = f"{RAW_DIR}/sp500/manifest.json"


def source_table(source: str) -> str:
    """The table rule fetch_source writes for ``source`` (``data/raw/<source>/data.parquet``)."""
    return f"{RAW_DIR}/{source}/data.parquet"


def source_manifest(source: str) -> str:
    """The manifest rule fetch_source writes for ``source``."""
    return f"{RAW_DIR}/{source}/manifest.json"


def source_inputs(sources: Iterable[str]) -> dict[str, str]:
    """``{source: table, "<source>_manifest": manifest}`` for every source, in order."""
    out: dict[str, str] = {}
    for source in sources:
        out[source] = source_table(source)
        out[f"{source}_manifest"] = source_manifest(source)
    return out
