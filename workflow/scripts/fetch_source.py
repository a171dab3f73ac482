"""Glue for rule fetch_source: one source's table (live or snapshot) and its manifest."""

from anachron.io import write_json, write_parquet
from anachron.logs import log_to
from anachron.progress import job
from anachron.sources.registry import fetch_source

sm = snakemake  # noqa: F821 (injected by Snakemake)

with log_to(sm.log[0]) as log, job(f"fetch {sm.wildcards.source}", unit="req", calls=False):
    table, manifest = fetch_source(
        sm.wildcards.source, snapshot_dir=sm.params.snapshot_dir or None, params=dict(sm.params.source_config)
    )
    write_parquet(table, sm.output.table)
    write_json(sm.output.manifest, manifest)
    log.info("%s: %d rows; skipped %s", sm.wildcards.source, len(table), manifest.get("skipped_by_reason"))
