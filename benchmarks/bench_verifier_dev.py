"""The claim verifier on independently written claims with known truth (docs/verification.md).

Each claim of the JSONL file (e.g. ``../shared/verifier-dev/claims.jsonl``: ``claim_id``,
``task``, ``instance_id``, ``cutoff_date``, ``fact``, ``source_date``, ``truth`` = leak / clean,
``kind``) is verified as the default workflow verifies a model's evidence item: the claim becomes
the single evidence item of a one-instance completion, and rule ``verify_claims``'s code path
(:func:`anachron.verify.pipeline.verify_run` with the task's grounded checks built from the
workflow's point-in-time files) gives its verdict. Nothing of the claims file is stored.

Prints recall on leaks and the false-positive rate on clean claims, per task and per kind, with
95% Wilson intervals, the verdict counts, and every miss (a leak not flagged) and false alarm
(a clean claim flagged) with the layer and reason that decided it::

    .venv/bin/python benchmarks/bench_verifier_dev.py --claims ../shared/verifier-dev/claims.jsonl
    .venv/bin/python benchmarks/bench_verifier_dev.py --claims ... --workdir . --layers grounded,corpus,rules
    .venv/bin/python benchmarks/bench_verifier_dev.py --claims ... --json benchmarks/out/verifier_dev.json

``--workdir`` is a directory where the workflow has built the default datasets and fetched the
raw data (``results/datasets/{task}.parquet``, ``data/raw/...``): the claims' instance ids refer
to the default config's instances. A claim whose instance is missing there is reported and left
out. ``--layers`` with ``corpus`` reads the corpus index rule build_corpus wrote there
(``results/corpus/bm25``); with ``llm`` it needs ``--config`` naming a config whose ``verify.model``
is set (an endpoint), like the workflow.

A claim counts as flagged when its verdict is ``leaked``. Verdicts that are neither leaked nor
clean (``undated``, and where the verifier has them ``ambiguous`` / ``declared_only``) are counted
apart and shown beside each miss.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import pandas as pd

from anachron.tasks.registry import get_task
from anachron.verify.calibration.evaluate import wilson_ci
from anachron.verify.pipeline import verify_run


def default_layers() -> list[str]:
    """The default config's ``verify.layers`` (``config/config.yaml`` of this repository)."""
    import yaml

    cfg = yaml.safe_load((Path(__file__).resolve().parents[1] / "config" / "config.yaml").read_text())
    return list((cfg.get("verify") or {}).get("layers") or ["grounded", "rules"])


def load_claims(path: str | Path) -> list[dict[str, Any]]:
    """The claims of a JSONL file (one object per line; blank lines skipped)."""
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]


def _run_rows(claims: list[dict[str, Any]], instances: pd.DataFrame) -> pd.DataFrame:
    """One single-evidence completion per claim, shaped like a run table."""
    rows = []
    for c in claims:
        inst = instances.loc[c["instance_id"]]
        rows.append({
            "instance_id": c["instance_id"],
            "task": c["task"],
            "split": inst["split"],
            "cutoff_date": str(inst["cutoff_date"]),
            "parse_status": "ok",
            "evidence": json.dumps([{"id": 1, "fact": c["fact"], "source_date": c.get("source_date")}]),
            "reasoning": "",
            "method": "dev", "model": "dev",
        })
    return pd.DataFrame(rows)


def verify_claims_file(
    claims: list[dict[str, Any]],
    workdir: Path,
    layers: tuple[str, ...],
    llm: dict[str, Any] | None = None,
    corpus: Any = None,
) -> tuple[pd.DataFrame, list[str]]:
    """Verdicts for every claim whose instance exists in ``workdir``; returns (table, problems).

    ``corpus``: the corpus layer (:class:`anachron.verify.layers.corpus.CorpusLayer`) when
    ``layers`` has ``corpus``."""
    problems: list[str] = []
    out = []
    by_task: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for c in claims:
        by_task[c["task"]].append(c)
    for task_name, task_claims in sorted(by_task.items()):
        task = get_task(task_name)
        path = workdir / "results" / "datasets" / f"{task_name}.parquet"
        if not path.exists():
            problems.append(f"{task_name}: {path} missing; build the default datasets first")
            continue
        instances = pd.read_parquet(path).set_index("instance_id", drop=False)
        known = [c for c in task_claims if c["instance_id"] in instances.index]
        problems += [f"{c['claim_id']}: instance {c['instance_id']} not in {path}" for c in task_claims if c not in known]
        files = {k: workdir / v for k, v in task.grounding_inputs(edgar=(workdir / "data/raw/edgar/data.parquet").exists()).items()}
        grounding = task.make_grounding({k: v for k, v in files.items() if v.exists()})
        for c in known:  # one completion per claim, so every claim is verified on its own
            run = _run_rows([c], instances)
            contexts = {c["instance_id"]: task.grounding_context(instances.loc[c["instance_id"]])}
            verified = verify_run(run, contexts, grounding=grounding, layers=layers, task=task, llm=llm,
                                  corpus=corpus)
            ev = verified[verified["source"] == "evidence"]
            if len(ev) != 1:
                problems.append(f"{c['claim_id']}: {len(ev)} evidence claims extracted")
                continue
            v = ev.iloc[0]
            out.append({
                "claim_id": c["claim_id"], "task": task_name, "kind": c["kind"], "truth": c["truth"],
                "verdict": v["verdict"], "flagged": bool(v["leaked"]), "layer": v["layer"], "reason": v["reason"],
                "category": v["category"], "effective_date": v["effective_date"], "fact": c["fact"],
                "source_date": c.get("source_date"), "cutoff_date": c["cutoff_date"],
            })
    return pd.DataFrame(out), problems


def summary(table: pd.DataFrame) -> pd.DataFrame:
    """Recall on leaks and false-positive rate on clean claims per task, per kind and overall."""
    rows = []

    def add(task: str, kind: str, sub: pd.DataFrame) -> None:
        for truth, metric in (("leak", "recall"), ("clean", "fp_rate")):
            s = sub[sub["truth"] == truth]
            if not len(s):
                continue
            k = int(s["flagged"].sum())
            lo, hi = wilson_ci(k, len(s))
            rows.append({"task": task, "kind": kind, "metric": metric, "value": k / len(s), "ci_low": lo,
                         "ci_high": hi, "k": k, "n": len(s),
                         "verdicts": dict(Counter(s["verdict"]))})

    add("all", "all", table)
    for task, sub in table.groupby("task"):
        add(task, "all", sub)
        for kind, sk in sub.groupby("kind"):
            add(task, kind, sk)
    for kind, sk in table.groupby("kind"):
        add("all", kind, sk)
    return pd.DataFrame(rows)


def report(table: pd.DataFrame, summ: pd.DataFrame, problems: list[str], *, show_facts: bool = True) -> str:
    """The printed report: the summary table, then misses and false alarms."""
    lines = ["task      kind  metric    value  [95% CI]         k/n   verdicts"]
    for r in summ.itertuples(index=False):
        lines.append(f"{r.task:<9} {r.kind:<5} {r.metric:<8} {r.value:6.3f}  [{r.ci_low:.3f}, {r.ci_high:.3f}]  "
                     f"{r.k:>3}/{r.n:<3} {r.verdicts}")
    for title, sub in (("missed leaks", table[(table["truth"] == "leak") & ~table["flagged"]]),
                       ("false alarms", table[(table["truth"] == "clean") & table["flagged"]])):
        lines.append(f"\n{title}: {len(sub)}")
        for r in sub.itertuples(index=False):
            fact = f" | {r.fact[:160]} | declared {r.source_date}" if show_facts else ""
            lines.append(f"  {r.claim_id} ({r.task}/{r.kind}) cutoff {r.cutoff_date}: {r.verdict} by {r.layer} "
                         f"[{r.category}] eff {r.effective_date}: {str(r.reason)[:160]}{fact}")
    if problems:
        lines.append(f"\nproblems: {len(problems)}")
        lines += [f"  {p}" for p in problems]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point; returns the exit status (0; 2 when no claim could be verified)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--claims", required=True, help="JSONL file of claims with truth (see module docstring)")
    ap.add_argument("--workdir", default=".", help="where the workflow built the default datasets and raw data")
    ap.add_argument("--layers", default=",".join(default_layers()),
                    help="verifier layers, comma-separated (default: config/config.yaml's verify.layers)")
    ap.add_argument("--config", help="config file whose verify.model serves the llm layer")
    ap.add_argument("--json", help="also write the summary and per-claim verdicts (no claim text) here")
    ap.add_argument("--no-facts", action="store_true", help="do not print claim texts in the misses")
    args = ap.parse_args(argv)
    layers = tuple(x.strip() for x in args.layers.split(",") if x.strip())
    llm = None
    if "llm" in layers:
        llm = _llm_from_config(args.config)
    corpus = None
    if "corpus" in layers:
        from anachron.verify.layers.corpus import open_corpus_layer

        corpus = open_corpus_layer(Path(args.workdir) / "results" / "corpus" / "bm25")
    started = time.perf_counter()
    table, problems = verify_claims_file(load_claims(args.claims), Path(args.workdir), layers, llm, corpus)
    elapsed = time.perf_counter() - started
    if not len(table):
        print("\n".join(problems) or "no claims", file=sys.stderr)
        return 2
    summ = summary(table)
    print(report(table, summ, problems, show_facts=not args.no_facts))
    print(f"\nverified {len(table)} claims in {elapsed:.1f} s ({len(table) / elapsed:.0f} claims/s, layers {','.join(layers)})")
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps({
            "layers": list(layers),
            "summary": summ.to_dict(orient="records"),
            "claims": table.drop(columns=["fact"]).to_dict(orient="records"),
        }, indent=1, default=str))
    return 0


def _llm_from_config(path: str | None) -> dict[str, Any]:
    """The llm layer's ``{"client", "params", "batch_size"}`` from a config's ``verify`` block."""
    import yaml

    from anachron.config import validate_config
    from anachron.verify.setup import verifier_client

    if not path:
        raise SystemExit("--layers with llm needs --config with verify.model set")
    cfg = validate_config(yaml.safe_load(Path(path).read_text()))
    name = cfg["verify"].get("model")
    if not name:
        raise SystemExit(f"{path}: verify.model is not set")
    client, _, params = verifier_client({"name": name, **cfg["models"][name]}, cfg["cache_dir"])
    return {"client": client, "params": params, "batch_size": cfg["verify"].get("batch_size", 80)}


if __name__ == "__main__":
    sys.exit(main())
