"""Glue for rule fetch_yahoo: daily prices of every member in any window's universe (+ manifest)."""

import pandas as pd

from anachron.io import write_json, write_parquet
from anachron.logs import log_to
from anachron.progress import job
from anachron.sources.yahoo import fetch_window_prices

sm = snakemake  # noqa: F821 (injected by Snakemake)

with log_to(sm.log[0]) as log, job("fetch yahoo", unit="ticker", calls=False) as progress:
    prices, manifest = fetch_window_prices(
        pd.read_parquet(sm.input.membership),
        list(sm.params.windows),
        snapshot_dir=sm.params.snapshot_dir or None,
    )
    progress.n = int(prices["ticker"].nunique())
    write_parquet(prices, sm.output.prices)
    write_json(sm.output.manifest, manifest)
    log.info("prices: %d rows, %d tickers", len(prices), prices["ticker"].nunique())
