"""Calibrate the corpus layer's support threshold on the corpus itself (leave one document out).

The corpus verifier layer (:mod:`anachron.verify.layers.corpus`) dates a claim by the earliest
document that *supports* it: the document holds the claim's event verbs, every number of the
claim and at least ``min_support`` of its content words (IDF-weighted). Too low a threshold lets
a document about another event "support" a claim and misdate it; too high a threshold supports
nothing a writer has put in other words.

This benchmark measures both on claims made from real corpus documents, without any claim
written for the purpose:

* a sample of documents per kind of source (news headlines, EDGAR facts, index changes, Supreme
  Court steps, signings, monthly prices), the same number from each; resolutions are left out
  (their titles are questions, which assert nothing);
* each document's title is a claim in three styles: ``written`` (as it stands, ".00" decimals
  dropped as people write amounts), ``dateless`` (its dates removed too) and ``verbose`` (two
  lower-case words of an unrelated title added: detail the document does not state);
* each claim is searched as the layer searches (the best ``k`` documents on each side of the
  document's own day), and every hit is scored;
* **self**: the document's own support (the recall side);
* **spurious**: the best support by another document that states another fact (its dateless
  title differs; for EDGAR, another fact key), published more than a week away, and that lacks
  at least one of the claim's words -- what the threshold lets misdate the claim if its own
  document were missing. A document that holds *every* word and number of the claim is no
  threshold's error (the claim as written cannot tell the two apart; the earliest is its date):
  that share is printed apart as ``ambiguous``.

For each threshold it prints self and spurious rates per style (95% Wilson upper bound) and per
kind; the recommended threshold is the lowest whose overall spurious rate is at most
``--max-spurious`` (default 1%, the calibration's false-positive bound) in every style. ::

    .venv/bin/python benchmarks/calibrate_corpus_support.py --workdir . [--per-kind 500] [--k 10]
"""

from __future__ import annotations

import argparse
import datetime as dt
import random
import re
import sys
from pathlib import Path

import pandas as pd

from anachron.retrieval.search import BM25Search
from anachron.verify.calibration.evaluate import wilson_ci
from anachron.verify.dates import find_periods
from anachron.verify.layers.corpus import MIN_SUPPORT, CorpusLayer, assertions, content_words

#: Kinds of documents, by the start of their id.
KINDS = {"news": "news", "edgar": "edgar", "sp500": "index", "oyez": "court", "nba": "signing", "nhl": "signing",
         "yahoo": "price", "forecastbench": "resolution"}
THRESHOLDS = [round(0.5 + 0.05 * i, 2) for i in range(11)]
NEAR = dt.timedelta(days=7)


def dateless(text: str) -> str:
    """``text`` without its dates and doubled spaces."""
    for p in sorted(find_periods(text), key=lambda p: -len(p.text)):
        text = text.replace(p.text, " ")
    return re.sub(r"\s+", " ", text).strip(" ,;:")


def as_written(title: str) -> str:
    """A document title as a claim: its assertion, ".00" decimals dropped ("$4.00 million" -> "$4 million")."""
    return re.sub(r"\s+", " ", re.sub(r"(\d)\.0+\b", r"\1", assertions(title, ""))).strip()


def fact_key(doc_id: str, title: str) -> str:
    """What identifies a document's fact: EDGAR's fact hash (the same figure in several filings),
    else the dateless title."""
    parts = doc_id.split(":")
    return parts[2] if parts[0] == "edgar" and len(parts) > 2 else dateless(as_written(title)).lower()


def sample_documents(docs: pd.DataFrame, per_kind: int, seed: int) -> pd.DataFrame:
    """Up to ``per_kind`` documents of each kind (resolutions left out)."""
    docs = docs.assign(kind=docs["doc_id"].str.split(":").str[0].map(KINDS).fillna("other"))
    docs = docs[docs["kind"] != "resolution"]
    docs = docs[docs["title"].map(lambda t: bool(assertions(t, "").strip()))]
    parts = [g.sample(min(per_kind, len(g)), random_state=seed) for _, g in docs.groupby("kind")]
    return pd.concat(parts, ignore_index=True)


def measure(layer: CorpusLayer, search: BM25Search, sample: pd.DataFrame, titles: list[str], seed: int) -> pd.DataFrame:
    """One row per (document, style): self support, best spurious support, ambiguous (0/1)."""
    rng = random.Random(seed)
    rows = []
    for r in sample.itertuples(index=False):
        day = dt.date.fromisoformat(r.published_at)
        written = as_written(r.title)
        own_key = fact_key(r.doc_id, r.title)
        extra = [w for w in content_words(rng.choice(titles)) if w.islower()][:2]
        for style, claim in (("written", written), ("dateless", dateless(written)), ("verbose", f"{written} {' '.join(extra)}")):
            terms = layer.terms(claim)
            if terms.n_words < layer.min_words:
                continue
            before, after = search.search_split(claim, day, k=layer.k)
            own, spurious, ambiguous = 0.0, 0.0, False
            for h in before + after:
                s = layer.score(terms, h)
                if s is None or not s.consistent:
                    continue
                if h.doc_id == r.doc_id:
                    own = s.score
                elif abs(s.day - day) > NEAR and fact_key(h.doc_id, h.title) != own_key:
                    if s.words >= 1.0:
                        ambiguous = True
                    else:
                        spurious = max(spurious, s.score)
            rows.append({"doc_id": r.doc_id, "kind": r.kind, "style": style, "self": own, "spurious": spurious,
                         "ambiguous": ambiguous})
    return pd.DataFrame(rows)


def table(scores: pd.DataFrame) -> pd.DataFrame:
    """Self and spurious rates per threshold, style and kind (kind "all": every kind)."""
    out = []
    for style, st in scores.groupby("style"):
        groups = [("all", st)] + list(st.groupby("kind"))
        for t in THRESHOLDS:
            for kind, g in groups:
                k = int((g["spurious"] >= t).sum())
                _, hi = wilson_ci(k, len(g))
                out.append({"style": style, "threshold": t, "kind": kind, "n": len(g),
                            "self": float((g["self"] >= t).mean()), "spurious": k / len(g), "spurious_hi": hi})
    return pd.DataFrame(out)


def recommend(tab: pd.DataFrame, max_spurious: float) -> float | None:
    """The lowest threshold whose overall spurious rate is at most ``max_spurious`` in every style."""
    overall = tab[tab["kind"] == "all"]
    for t, g in overall.groupby("threshold"):
        if (g["spurious"] <= max_spurious).all():
            return float(t)
    return None


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point; prints the table and the recommended threshold."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workdir", default=".", help="where rule build_corpus wrote results/corpus/bm25")
    ap.add_argument("--per-kind", type=int, default=500, help="documents sampled per kind")
    ap.add_argument("--k", type=int, default=10, help="hits per side of the day (the layer's k)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-spurious", type=float, default=0.01)
    args = ap.parse_args(argv)
    index = Path(args.workdir) / "results" / "corpus" / "bm25"
    search = BM25Search.load(index)
    docs = pd.read_parquet(index / "documents.parquet")
    layer = CorpusLayer(search, k=args.k, min_support=0.01)
    titles = docs["title"].sample(min(5000, len(docs)), random_state=args.seed + 1).tolist()
    scores = measure(layer, search, sample_documents(docs, args.per_kind, args.seed), titles, args.seed)
    tab = table(scores)
    print(f"claims per style: {scores.groupby('style').size().to_dict()}; kinds: {scores.groupby('kind').size().to_dict()}")
    amb = scores.groupby(["style", "kind"])["ambiguous"].mean().round(3)
    print("ambiguous (another fact holds every word and number of the claim):")
    print("  " + "; ".join(f"{s}/{k} {v:.3f}" for (s, k), v in amb.items()))
    print("threshold  style     self   spurious [95% up]   per kind (self/spurious)")
    for (t, style), g in tab.groupby(["threshold", "style"]):
        a = g[g["kind"] == "all"].iloc[0]
        per = " ".join(f"{r.kind}:{r.self:.2f}/{r.spurious:.3f}" for r in g[g["kind"] != "all"].itertuples(index=False))
        print(f"{t:9.2f}  {style:<8} {a.self:6.3f}  {a.spurious:6.3f} [{a.spurious_hi:.3f}]   {per}")
    rec = recommend(tab, args.max_spurious)
    print(f"recommended min_support: {rec} (the layer's MIN_SUPPORT is {MIN_SUPPORT})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
