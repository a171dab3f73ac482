"""Retrieval throughput over the full snapshot corpus, with and without the as-of filter.

Reads every source from the real snapshot directory through the source modules (news, EDGAR,
Oyez, NBA and NHL signings, ForecastBench, S&P 500 membership/changes/sectors, Yahoo daily
prices), builds the corpus (:func:`anachron.retrieval.build_corpus`), indexes it with
:class:`anachron.retrieval.BM25Search`, then runs the same realistic queries (company names
and tickers with a year, player names, case names) once unrestricted and once with an as-of
date, and reports queries/second, index build time, corpus size and memory.

Usage: ``.venv/bin/python benchmarks/bench_retrieval.py --snapshot-dir ../shared/snapshots``
(default: ``$ANACHRON_SNAPSHOT_DIR``, else ``../shared/snapshots``). ``--json PATH`` writes the
numbers as JSON too.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from anachron.retrieval import BM25Search, build_corpus
from anachron.sources import edgar, forecastbench, news, oyez, prosports, spotrac
from anachron.sources.base import SNAPSHOT_ENV
from anachron.sources.sp500 import GICSSectorReader, SP500ChangesReader, SP500MembershipReader
from anachron.sources.yahoo import YahooPriceReader

REPO = Path(__file__).resolve().parents[1]


def rss_mb() -> float:
    """Resident memory of this process in MiB (psutil when installed, else /proc, else peak RSS)."""
    try:
        import psutil

        return psutil.Process().memory_info().rss / 2**20
    except ImportError:
        pass
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError):
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def load_tables(snapshot_dir: str) -> tuple[dict[str, pd.DataFrame], dict[str, float]]:
    """Every corpus input table from the snapshot, and the seconds each read took."""
    timings: dict[str, float] = {}
    tables: dict[str, pd.DataFrame] = {}

    def timed(name, fn):
        t0 = time.perf_counter()
        tables[name] = fn()
        timings[name] = round(time.perf_counter() - t0, 2)

    timed("news", lambda: news.fetch(snapshot_dir=snapshot_dir)[0])
    timed("edgar", lambda: edgar.fetch(snapshot_dir=snapshot_dir)[0])
    timed("oyez", lambda: oyez.fetch(snapshot_dir=snapshot_dir)[0])
    timed("nba", lambda: prosports.fetch(snapshot_dir=snapshot_dir)[0])
    timed("nhl", lambda: spotrac.fetch(snapshot_dir=snapshot_dir)[0])
    timed("forecastbench", lambda: forecastbench.fetch(snapshot_dir=snapshot_dir)[0])
    timed("sp500_membership", lambda: SP500MembershipReader(snapshot_dir=snapshot_dir).read())
    timed("sp500_changes", lambda: SP500ChangesReader(snapshot_dir=snapshot_dir).read())
    timed("sp500_sectors", lambda: GICSSectorReader(snapshot_dir=snapshot_dir).read())
    spells = tables["sp500_membership"]
    since = spells["end_date"].isna() | (spells["end_date"] >= "2018-01-01")
    tickers = sorted(set(spells.loc[since, "ticker"]))
    timed("prices", lambda: YahooPriceReader(tickers, "2018-01-01", "2024-03-09", snapshot_dir=snapshot_dir).read())
    return tables, timings


def make_queries(tables: dict[str, pd.DataFrame], n: int, seed: int) -> tuple[list[str], list[str]]:
    """``n`` realistic queries and an as-of day for each (between 2012 and 2024)."""
    rng = np.random.default_rng(seed)
    sectors = tables["sp500_sectors"].dropna(subset=["name"]).drop_duplicates("ticker", keep="last")
    companies = list(zip(sectors["ticker"], sectors["name"]))
    players = sorted(set(tables["nba"]["player"].dropna()) | set(tables["nhl"]["player"].dropna()))
    cases = sorted(set(tables["oyez"]["name"].dropna()))
    company_tpl = [
        "{name} revenue {year}",
        "{name} earnings {year}",
        "{ticker} stock price {year}",
        "{name} ({ticker}) quarterly results {year}",
        "{name} net income {year}",
        "{ticker} shares {month} {year}",
        "{name} S&P 500 {year}",
    ]
    player_tpl = ["{player} contract {year}", "{player} signed {year}", "{player} free agency {year}"]
    case_tpl = ["{case} Supreme Court", "{case} oral argument {year}", "{case} decision"]
    months = ["January", "March", "June", "September", "December"]
    queries: list[str] = []
    for _ in range(n):
        year = int(rng.integers(2012, 2025))
        r = rng.random()
        if r < 0.6:
            ticker, name = companies[int(rng.integers(len(companies)))]
            tpl = company_tpl[int(rng.integers(len(company_tpl)))]
            queries.append(tpl.format(name=name, ticker=ticker, year=year, month=months[int(rng.integers(5))]))
        elif r < 0.8:
            tpl = player_tpl[int(rng.integers(len(player_tpl)))]
            queries.append(tpl.format(player=players[int(rng.integers(len(players)))], year=year))
        else:
            tpl = case_tpl[int(rng.integers(len(case_tpl)))]
            queries.append(tpl.format(case=cases[int(rng.integers(len(cases)))], year=year))
    start = np.datetime64("2012-01-01")
    days = (start + rng.integers(0, 365 * 12 + 60, size=n).astype("timedelta64[D]")).astype(str).tolist()
    return queries, days


def run(search: BM25Search, queries: list[str], days: list[str] | None, k: int) -> dict[str, float]:
    t0 = time.perf_counter()
    n_hits = full = 0
    leaks = 0
    for i, q in enumerate(queries):
        hits = search.search(q, k=k, as_of=None if days is None else days[i])
        n_hits += len(hits)
        full += len(hits) == k
        if days is not None:
            leaks += sum(h.published_at > days[i] for h in hits)
    secs = time.perf_counter() - t0
    return {
        "seconds": round(secs, 2),
        "queries_per_second": round(len(queries) / secs, 1),
        "mean_hits": round(n_hits / len(queries), 2),
        "share_with_k_hits": round(full / len(queries), 3),
        "hits_after_as_of": int(leaks),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--snapshot-dir", default=os.environ.get(SNAPSHOT_ENV) or str(REPO.parent / "shared" / "snapshots"))
    ap.add_argument("--queries", type=int, default=10_000)
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", help="also write the results to this JSON file")
    args = ap.parse_args()

    out: dict = {"snapshot_dir": args.snapshot_dir, "queries": args.queries, "k": args.k}
    rss0 = rss_mb()
    t0 = time.perf_counter()
    tables, read_s = load_tables(args.snapshot_dir)
    out["read_seconds"] = read_s
    out["read_total_seconds"] = round(time.perf_counter() - t0, 2)
    out["table_rows"] = {k: int(len(v)) for k, v in tables.items()}

    t0 = time.perf_counter()
    corpus, entities, report = build_corpus(tables)
    out["corpus_build_seconds"] = round(time.perf_counter() - t0, 2)
    out["corpus"] = {k: report[k] for k in ("documents", "by_source", "by_kind", "restatement_links", "excluded_by_reason", "excluded_by_source", "entities", "first_day", "last_day")}
    out["corpus_memory_mb"] = round(corpus.memory_usage(deep=True).sum() / 2**20, 1)
    queries, days = make_queries(tables, args.queries, args.seed)
    del tables
    rss_corpus = rss_mb()

    t0 = time.perf_counter()
    search = BM25Search(corpus)
    out["index_build_seconds"] = round(time.perf_counter() - t0, 2)
    out["rss_mb"] = {"start": round(rss0, 1), "after_corpus": round(rss_corpus, 1), "after_index": round(rss_mb(), 1)}
    sc = search.retriever.scores
    out["index"] = {
        "documents": search.n_docs,
        "vocabulary": len(search._vocab),
        "postings": int(len(sc["data"])),
        "arrays_mb": round(sum(np.asarray(sc[x]).nbytes for x in ("data", "indices", "indptr")) / 2**20, 1),
    }
    tmp = Path(tempfile.mkdtemp(prefix="anachron_bm25_"))
    try:
        t0 = time.perf_counter()
        search.save(tmp)
        out["index"]["save_seconds"] = round(time.perf_counter() - t0, 2)
        out["index"]["disk_mb"] = round(sum(p.stat().st_size for p in tmp.iterdir()) / 2**20, 1)
        t0 = time.perf_counter()
        BM25Search.load(tmp)
        out["index"]["load_seconds"] = round(time.perf_counter() - t0, 2)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    search.search(queries[0], k=args.k)  # warm-up
    out["unrestricted"] = run(search, queries, None, args.k)
    out["as_of"] = run(search, queries, days, args.k)
    out["rss_mb"]["peak_end"] = round(rss_mb(), 1)
    out["example_queries"] = queries[:5]

    print(json.dumps(out, indent=2))
    print(
        f"\n{out['corpus']['documents']:,} documents ({out['corpus']['restatement_links']} restatement links); "
        f"corpus build {out['corpus_build_seconds']} s, index build {out['index_build_seconds']} s; "
        f"{args.queries:,} queries: unrestricted {out['unrestricted']['queries_per_second']:,} q/s, "
        f"as-of {out['as_of']['queries_per_second']:,} q/s; RSS {out['rss_mb']['after_index']:.0f} MB"
    )
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
