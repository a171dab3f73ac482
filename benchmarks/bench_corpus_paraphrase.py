"""The corpus layer on paraphrases of dated documents: does it date a restated headline by the
headline, and does it leave claims alone that no document states?

Input (kept outside the repository: paraphrases of snapshot documents are pieces of them):

* ``--truth``: JSON Lines ``{"n", "item" (a corpus doc_id), "published" (its day)}``;
* ``--paraphrases``: JSON Lines ``{"n", "fact", "transforms"}``, written by someone who saw only
  the documents' text, never the verifier.

Every paraphrase is checked as of ``--cutoff`` (default 2019-11-30). One whose document was
published after the cutoff should be ``leaked`` (recall); one published on or before it should
not be (false positives); both are reported per transform, with the layer's reason for the
misses. ``--layers`` compares the layer sets of the whole verifier (``grounded`` has no task here,
so ``corpus,rules`` against ``rules``)::

    .venv/bin/python benchmarks/bench_corpus_paraphrase.py --index ../before/results/corpus/bm25 \\
        --truth ../validation3/truth.jsonl --paraphrases ../validation3/paraphrases.jsonl
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
from collections import Counter
from pathlib import Path


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def evaluate(items: list[dict], verdict) -> dict:
    """Recall on the items whose document is after the cutoff and false positives on the others,
    overall and per transform. ``items``: ``{"fact", "after" (bool), "transforms"}``; ``verdict``:
    fact -> a verify_claim result."""
    out: dict = {"n": len(items)}
    tally: dict[str, Counter] = {}
    misses = []
    for it in items:
        v = verdict(it["fact"])
        flagged = bool(v["leaked"])
        for key in ["all", *it.get("transforms", [])]:
            c = tally.setdefault(key, Counter())
            c["after" if it["after"] else "before"] += 1
            c["hit" if it["after"] and flagged else "fp" if flagged and not it["after"] else "ok"] += 1
        if it["after"] != flagged:
            misses.append({"fact": it["fact"], "after": it["after"], "verdict": v["verdict"], "layer": v["layer"], "reason": v["reason"]})
    for key, c in sorted(tally.items()):
        out[key] = {"recall": c["hit"] / c["after"] if c["after"] else None, "after": c["after"],
                    "fp_rate": c["fp"] / c["before"] if c["before"] else None, "before": c["before"]}
    out["errors"] = misses
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--index", type=Path, required=True, help="a saved corpus index (results/corpus/bm25)")
    ap.add_argument("--truth", type=Path, required=True)
    ap.add_argument("--paraphrases", type=Path, required=True)
    ap.add_argument("--cutoff", default="2019-11-30")
    ap.add_argument("--declared", default=None, help="the declared date given to every claim (default: none)")
    ap.add_argument("--layers", default="corpus,rules")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    from anachron.verify.layers.corpus import open_corpus_layer
    from anachron.verify.pipeline import verify_claim

    cutoff = dt.date.fromisoformat(args.cutoff)
    truth = {r["n"]: r for r in _jsonl(args.truth)}
    items = [{"fact": p["fact"], "after": dt.date.fromisoformat(truth[p["n"]]["published"]) > cutoff, "transforms": p.get("transforms", [])}
             for p in _jsonl(args.paraphrases) if p["n"] in truth]
    layers = tuple(args.layers.split(","))
    corpus = open_corpus_layer(args.index) if "corpus" in layers else None
    report = evaluate(items, lambda f: verify_claim(f, args.declared, cutoff, layers=layers, corpus=corpus))
    errors = report.pop("errors")
    print(json.dumps(report, indent=1))
    if args.json:
        args.json.write_text(json.dumps({**report, "errors": errors}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
