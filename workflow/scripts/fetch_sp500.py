"""Glue for rule fetch_sp500: membership spells, index changes, GICS sectors (+ manifest)."""

from anachron.io import write_json, write_parquet
from anachron.logs import log_to
from anachron.progress import job
from anachron.sources.sp500 import fetch_sp500

sm = snakemake  # noqa: F821 (injected by Snakemake)

with log_to(sm.log[0]) as log, job("fetch sp500", unit="req", calls=False):
    tables, manifest = fetch_sp500(snapshot_dir=sm.params.snapshot_dir or None, windows=list(sm.params.windows))
    for name, df in tables.items():
        write_parquet(df, sm.output[name])
        log.info("%s: %d rows", name, len(df))
    write_json(sm.output.manifest, manifest)
