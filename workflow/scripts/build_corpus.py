"""Glue for rule build_corpus: the date-stamped document table, entity validity, BM25 index."""

import shutil
from pathlib import Path

import pandas as pd

from anachron.io import write_json, write_parquet
from anachron.logs import log_to
from anachron.progress import job
from anachron.retrieval.corpus import build_corpus
from anachron.retrieval.search import BM25Search

sm = snakemake  # noqa: F821 (injected by Snakemake)

with log_to(sm.log[0]) as log, job("build_corpus", unit="doc", calls=False) as progress:
    tables = {name: pd.read_parquet(path) for name, path in sm.input.items()}
    corpus, entities, report = build_corpus(tables)
    progress.n = len(corpus)
    write_parquet(corpus, sm.output.documents)
    write_parquet(entities, sm.output.entities)
    tmp = Path(sm.output.index + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    BM25Search(corpus).save(tmp)
    shutil.rmtree(sm.output.index, ignore_errors=True)
    tmp.rename(sm.output.index)
    write_json(sm.output.report, report)
    log.info("corpus: %d documents %s; %d restatement links; excluded %s", len(corpus), report.get("by_source"),
             report.get("restatement_links"), report.get("excluded_by_reason"))
