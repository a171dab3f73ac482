"""Claim verification throughput per layer set, peak memory, and how it compares with generating the claims.

Verifies ``--claims`` claims the way rule ``verify_claims`` does: runs of ``--run-size`` claims
(one job's worth: a run table of completions whose evidence and reasoning the deterministic
extractor splits into claims), each through :func:`anachron.verify.pipeline.verify_run`. Every
layer set (``--layer-sets``, default ``rules`` and ``grounded,rules``) runs in its own child
process, so each reports its own peak resident memory (``ru_maxrss`` from ``wait4``).

Grounding data:

* default: a synthetic daily price table (``--tickers`` x 2 years, 2018-12..2020-12) with a
  company name per ticker (:class:`~anachron.verify.layers.grounded.PriceGrounding`), instances of
  five tickers each with stock-task contexts;
* ``--corpus-index DIR``: the saved corpus index a layer set with ``corpus`` searches;
* ``--workdir DIR``: the real grounded checks of ``--task`` built from DIR's raw data
  (:meth:`~anachron.tasks.base.Task.make_grounding`) and that task's real instances
  (``DIR/results/datasets/{task}.parquet``), e.g. ``--workdir /work/default --task stock``.

The claims mix the styles models write (prices on days, returns over months, quarterly and
annual results, index changes, undated judgements, declared dates around the cutoff) and are
all distinct. Reports, per layer set: claims/s of verification (claim extraction included, run
building excluded), verdict and layer counts, peak RSS; and the ratio of verifying one
completion's claims (10) to a local model's generation time per completion (~6 s on 2 cores).

    python benchmarks/bench_verify.py --claims 1000000 --json benchmarks/out/verify.json
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

EVIDENCE = [
    "{t} closed at ${p:.2f} on {d}.",
    "{n} shares closed at ${p:.2f} on {md}.",
    "{n} reported Q{q} {y} revenue of ${b:.1f}B, up {pct:.0f}% year over year.",
    "{t}'s full-year {y} earnings per share rose to ${e:.2f}.",
    "Shares of {n} fell {pct:.0f}% in {month} {y}.",
    "{t} rose {pct:.1f}% in {month} {y}.",
    "{n} expects Q{q} {y1} revenue of ${b:.1f}B.",
    "{n} has a strong balance sheet and low leverage.",
    "{n} announced a ${m}M buyback on {md}.",
    "{n} was added to the S&P 500 on {md}.",
    "Analysts at a major bank rate {t} a buy with a ${p:.0f} price target.",
    "{n} cut its dividend to ${e:.2f} per share in {month} {y}.",
]
REASONING = [
    "{n} guided Q{q} {y1} sales to ${b:.1f}B [{i}].",
    "The stock traded near ${p:.0f} in {month} {y} [{i}].",
    "I think {n} is well positioned for the coming months.",
    "Oil prices fell sharply in {month} {y1}, which hurt {n} [{i}].",
]
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December"]


SYLLABLES = ["ka", "ro", "vex", "tan", "mer", "lo", "qui", "dor", "sen", "tra", "pol", "nix", "ar", "bel", "cor",
             "dyn", "el", "fi", "gal", "hel", "ix", "jun", "kor", "lum", "mar", "nov", "or", "pra", "ren", "sol"]
SECTOR_WORDS = ["Energy", "Financial", "Systems", "Pharmaceuticals", "Technologies", "Industries", "Resources",
                "Health", "Brands", "Semiconductor", "Airlines", "Realty", "Foods", "Networks", "Motors"]
COMMON_FIRST = ["American", "First", "General", "United", "National", "Global"]
SUFFIXES = [" Inc.", " Corp.", " Holdings", " Co.", " Group", ""]
#: XBRL concepts of the synthetic EDGAR facts (revenue, net income, diluted EPS).
CONCEPTS = (("Revenues", "USD", 1e9), ("NetIncomeLoss", "USD", 1e8), ("EarningsPerShareDiluted", "USD/shares", 1.0))


def _company_names(rng: np.random.Generator, n: int) -> list[str]:
    """``n`` distinct S&P-500-like names: a made-up first word (or, for one in ten, a common one
    such as "American"), a sector word, a corporate suffix."""
    out: list[str] = []
    seen: set[str] = set()
    while len(out) < n:
        if rng.random() < 0.1:
            first = COMMON_FIRST[int(rng.integers(len(COMMON_FIRST)))]
        else:
            first = "".join(SYLLABLES[int(i)] for i in rng.integers(len(SYLLABLES), size=3)).capitalize()
        name = f"{first} {SECTOR_WORDS[int(rng.integers(len(SECTOR_WORDS)))]}{SUFFIXES[int(rng.integers(len(SUFFIXES)))]}"
        if name not in seen:
            seen.add(name)
            out.append(name)
    return out


def synthetic_grounding(n_tickers: int, rng: np.random.Generator, workdir: Path):
    """The stock task's grounded checks (:meth:`~anachron.tasks.base.Task.make_grounding`: prices,
    EDGAR figures, index changes) built from synthetic raw files written under ``workdir``:
    ``n_tickers`` companies with daily closes over 2018-12..2020-12, S&P-500-like names, quarterly
    EDGAR revenue / net income / EPS 2017-2020 and 100 index changes; contexts of five companies."""
    from anachron.tasks.registry import get_task

    days = pd.bdate_range("2018-12-01", "2020-12-31")
    tickers = sorted({"".join(chr(65 + int(c)) for c in rng.integers(26, size=int(rng.integers(2, 5))))
                      for _ in range(n_tickers * 2)})[:n_tickers]
    names = dict(zip(tickers, _company_names(rng, len(tickers))))
    prices = pd.DataFrame({
        "ticker": np.repeat(tickers, len(days)),
        "date": np.tile(days, len(tickers)),
        "close": np.round(rng.uniform(10, 300, len(days) * len(tickers)), 2),
    })
    prices["adj_close"] = prices["close"]
    facts = []
    for i, t in enumerate(tickers):
        for q_end in pd.date_range("2017-03-31", "2020-12-31", freq="QE"):
            for concept, unit, scale in CONCEPTS:
                facts.append({"cik": 10_000 + i, "entity_name": names[t], "concept": concept, "unit": unit,
                              "val": round(float(rng.uniform(0.5, 50)) * scale, 2 if scale == 1 else 0),
                              "start": (q_end - pd.offsets.QuarterBegin(startingMonth=1)).date().isoformat(),
                              "end": q_end.date().isoformat(), "fy": q_end.year, "form": "10-Q",
                              "filed": (q_end + pd.Timedelta(days=35)).date().isoformat(),
                              "accn": f"{10_000 + i:010d}-{q_end.year % 100:02d}-{q_end.quarter:06d}",
                              "value_changed": False, "restates": None})
    changes = pd.DataFrame({"date": pd.to_datetime(rng.choice(days, size=100)),
                            "add": rng.choice(tickers, size=100), "remove": rng.choice(tickers, size=100)})
    sectors = pd.DataFrame({"as_of": "2020-05-10", "ticker": tickers, "name": [names[t] for t in tickers],
                            "sector": "Energy"})
    files = {"prices": workdir / "prices.parquet", "edgar": workdir / "edgar.parquet",
             "sp500_changes": workdir / "changes.parquet", "sp500_sectors": workdir / "sectors.parquet"}
    for key, frame in (("prices", prices), ("edgar", pd.DataFrame(facts)), ("sp500_changes", changes),
                       ("sp500_sectors", sectors)):
        frame.to_parquet(files[key], index=False)
    grounding = get_task("stock").make_grounding(files)
    contexts = []
    for cutoff in ("2019-05-31", "2019-11-30", "2020-02-29", "2020-06-30"):
        for _ in range(50):
            pick = [str(t) for t in rng.choice(tickers, size=5, replace=False)]
            first = (pd.Timestamp(cutoff) + pd.offsets.BDay(1)).date()
            contexts.append({"tickers": pick, "names": [names[t] for t in pick], "cutoff_date": cutoff,
                             "label": {"returns": {t: float(rng.normal(0, 0.2)) for t in pick},
                                       "first_day": first.isoformat(),
                                       "last_day": (first + dt.timedelta(days=180)).isoformat()}})
    return grounding, contexts, prices


def real_grounding(workdir: Path, task_name: str):
    """The task's grounded checks from ``workdir``'s raw data, its instances' contexts, and its prices (or None)."""
    from anachron.tasks.registry import get_task

    task = get_task(task_name)
    files = {k: workdir / v for k, v in task.grounding_inputs(edgar=(workdir / "data/raw/edgar/data.parquet").exists()).items()}
    grounding = task.make_grounding({k: v for k, v in files.items() if v.exists()})
    instances = pd.read_parquet(workdir / "results" / "datasets" / f"{task_name}.parquet")
    contexts = [task.grounding_context(r) for _, r in instances.iterrows()]
    prices = pd.read_parquet(files["prices"]) if "prices" in files and files["prices"].exists() else None
    return grounding, contexts, prices


def _price_lookup(prices: pd.DataFrame | None):
    """(ticker, date) -> close, for claims that state a true close."""
    if prices is None or not len(prices):
        return {}
    p = prices[["ticker", "date", "close"]].dropna()
    return dict(zip(zip(p["ticker"], pd.to_datetime(p["date"]).dt.date), p["close"]))


def make_run(rng: np.random.Generator, contexts: list[dict], n_claims: int, run_id: int, closes: dict, task: str,
             per_completion: int = 8) -> tuple[pd.DataFrame, dict[str, dict]]:
    """A run table of completions carrying about ``n_claims`` claims (6 evidence items and ~2
    reasoning sentences each), and its contexts by instance id."""
    rows, ctxs = [], {}
    n_rows = max(1, n_claims // per_completion)
    keys = list(closes)
    for k in range(n_rows):
        ctx = contexts[int(rng.integers(len(contexts)))]
        iid = f"{task}-{run_id}-{k:06d}"
        ctxs[iid] = ctx
        cutoff = dt.date.fromisoformat(str(ctx["cutoff_date"]))
        tickers = list(ctx.get("tickers") or ["XYZ"])
        names = list(ctx.get("names") or ["Example Corp."])
        evidence = []
        for j in range(6):
            w = int(rng.integers(len(tickers)))
            day = cutoff + dt.timedelta(days=int(rng.integers(-400, 200)))
            price = float(rng.uniform(10, 300))
            if keys and rng.random() < 0.3:
                t, d = keys[int(rng.integers(len(keys)))]
                if t in tickers:
                    w, day, price = tickers.index(t), d, float(closes[(t, d)])
            f = dict(t=tickers[w], n=names[w] if w < len(names) else tickers[w], p=price, d=day.isoformat(),
                     md=f"{MONTHS[day.month - 1]} {day.day}, {day.year}", q=1 + int(rng.integers(4)), y=day.year,
                     y1=day.year + 1, month=MONTHS[day.month - 1], pct=float(rng.uniform(1, 30)),
                     b=float(rng.uniform(0.5, 90)), e=float(rng.uniform(0.1, 9)), m=int(rng.integers(50, 5000)))
            declared = cutoff - dt.timedelta(days=int(rng.integers(-60, 400)))
            sd = None if rng.random() < 0.1 else (declared.isoformat() if rng.random() < 0.8 else f"Q{f['q']} {declared.year}")
            evidence.append({"id": j + 1, "fact": EVIDENCE[int(rng.integers(len(EVIDENCE)))].format(**f), "source_date": sd})
        reasoning = " ".join(REASONING[int(rng.integers(len(REASONING)))].format(**f, i=1 + int(rng.integers(6)))
                             for _ in range(3))
        rows.append({"instance_id": iid, "task": task, "method": "temporal_hint", "model": "m", "split": "eval",
                     "cutoff_date": cutoff.isoformat(), "parse_status": "ok", "evidence": json.dumps(evidence),
                     "reasoning": reasoning})
    return pd.DataFrame(rows), ctxs


def child(args: argparse.Namespace, layers: tuple[str, ...]) -> dict[str, Any]:
    """Verify ``args.claims`` claims in runs of ``args.run_size`` with ``layers``; the counts and timings."""
    from anachron.tasks.registry import get_task
    from anachron.verify.pipeline import verify_run

    rng = np.random.default_rng(args.seed)
    t0 = time.perf_counter()
    if args.workdir:
        grounding, contexts, prices = real_grounding(args.workdir, args.task)
    else:
        with tempfile.TemporaryDirectory(prefix="bench_verify_") as tmp:
            grounding, contexts, prices = synthetic_grounding(args.tickers, rng, Path(tmp))
    build_s = time.perf_counter() - t0
    closes = _price_lookup(prices)
    corpus = None
    if "corpus" in layers:
        from anachron.verify.layers.corpus import open_corpus_layer

        if args.corpus_index is None:
            raise SystemExit("a layer set with corpus needs --corpus-index (results/corpus/bm25 of a finished run)")
        corpus = open_corpus_layer(args.corpus_index)
    verdicts: Counter = Counter()
    digest = hashlib.sha256()
    by_layer: Counter = Counter()
    n = verify_s = make_s = 0.0
    run_id = 0
    while n < args.claims:
        t0 = time.perf_counter()
        run, ctxs = make_run(rng, contexts, min(args.run_size, int(args.claims - n)), run_id, closes, args.task)
        make_s += time.perf_counter() - t0
        t0 = time.perf_counter()
        claims = verify_run(run, ctxs, grounding=grounding, layers=layers, task=get_task(args.task), corpus=corpus,
                            workers=args.child_workers)
        verify_s += time.perf_counter() - t0
        n += len(claims)
        digest.update(pd.util.hash_pandas_object(claims.astype(str), index=False).to_numpy().tobytes())
        verdicts.update(claims["verdict"])
        by_layer.update(claims["layer"])
        run_id += 1
    return {"layers": ",".join(layers), "workers": args.child_workers, "claims": int(n), "runs": run_id, "verify_s": verify_s,
            "claims_per_s": n / verify_s, "make_runs_s": make_s, "grounding_build_s": build_s,
            "verdicts": dict(verdicts), "by_layer": dict(by_layer), "sha256": digest.hexdigest()}


def measure(argv: list[str], layers: str, workers: int = 1) -> dict[str, Any]:
    """Run one layer set with ``workers`` processes in a child process; its report plus peak RSS (MiB)
    (of the child; forked workers, each about the child's size, are not added)."""
    cmd = [sys.executable, __file__, *argv, "--child", layers, "--child-workers", str(workers)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.stdout.close()
    if os.waitstatus_to_exitcode(status):
        raise SystemExit(f"layer set {layers} failed")
    return {**json.loads(out.strip().splitlines()[-1]), "peak_rss_mib": usage.ru_maxrss / 1024}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--claims", type=int, nargs="+", default=[20000],
                    help="claims to verify; several sizes are each measured, with the rate's ratio to the first size's")
    ap.add_argument("--run-size", type=int, default=25000, help="claims per verify_run call (one job's run)")
    ap.add_argument("--layer-sets", nargs="+", default=["rules", "grounded,rules"])
    ap.add_argument("--tickers", type=int, default=500, help="synthetic price table size")
    ap.add_argument("--workdir", type=Path, default=None, help="use this workdir's real grounding data and instances")
    ap.add_argument("--task", default="stock", help="with --workdir: the task whose grounding and instances to use")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--corpus-index", type=Path, default=None, help="the corpus index for layer sets with corpus (results/corpus/bm25)")
    ap.add_argument("--seconds-per-completion", type=float, default=6.0,
                    help="local-model generation time per completion to compare against")
    ap.add_argument("--json", type=Path, default=None, help="also write the report here")
    ap.add_argument("--workers", type=int, nargs="+", default=[1],
                    help="processes per verify_run (rule verify_claims' threads); each count is measured, "
                         "with its speed-up over the first")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--child-workers", type=int, default=1, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        args.claims = args.claims[0]
        print(json.dumps(child(args, tuple(args.child.split(",")))))
        return
    argv = [a for a in sys.argv[1:]]
    for flag in ("--workers", "--claims"):  # the child gets one of each
        if flag in argv:
            i = argv.index(flag)
            j = i + 1
            while j < len(argv) and not argv[j].startswith("--"):
                j += 1
            argv = argv[:i] + argv[j:]
    reports = []
    for layers in args.layer_sets:
        first = None
        for size, workers in ((c, w) for c in args.claims for w in args.workers):
            r = measure([*argv, "--claims", str(size)], layers, workers)
            reports.append(r)
            first = first or r
            per_completion = 10 / r["claims_per_s"]
            speedup = (f", {r['claims_per_s'] / first['claims_per_s']:.2f}x the rate of {first['workers']} worker(s) on "
                       f"{first['claims']:,} claims" if r is not first else "")
            print(f"layers {r['layers']:<15} workers {workers}: {r['claims']:>10,} claims in {r['verify_s']:7.1f} s: "
                  f"{r['claims_per_s']:8,.0f} claims/s{speedup}, "
                  f"peak RSS {r['peak_rss_mib']:,.0f} MiB (grounding built in {r['grounding_build_s']:.1f} s; "
                  f"verify(10 claims) / generate(1 completion) = {per_completion / args.seconds_per_completion:.1e})", flush=True)
            print(f"    verdicts {r['verdicts']}; layers {r['by_layer']}; sha256 of every claim row {r['sha256'][:16]}", flush=True)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"source": str(args.workdir or "synthetic"), "task": args.task,
                                         "run_size": args.run_size, "results": reports}, indent=2) + "\n")


if __name__ == "__main__":
    main()
