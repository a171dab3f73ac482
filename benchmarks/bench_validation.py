"""The verifier on a validation suite of whole answers written and labelled by people who never
read its code, replayed through the workflow's real OpenAI-compatible path.

A suite is a folder of JSON Lines files (docs/verification.md#validation):

* ``answers_*.jsonl``: ``{"answer_id", "instance_id", "task", "cutoff_date", "completion"}``, the
  completion a model would send for that instance's Temporal Hint prompt;
* ``labels_author_*.jsonl`` (and, when a second labeller worked apart, ``labels_second_*.jsonl``):
  ``{"answer_id", "item_id", "leaked", "kind", ...}`` per evidence item;
* ``split_*.json``: ``{"dev": [answer ids], "heldback": [answer ids]}``.

The answers are served by :class:`anachron.llm.testserver.TestServer` (``answer_for``: the
completion of the instance whose prompt the request carries) to the real method runner
(``temporal_hint`` on an ``openai/`` model), the run is verified by the real pipeline with the
task's grounded checks, and each evidence claim's verdict is compared with its label. Reported per
task: recall on leaked items and false-positive rate on clean ones with Wilson 95% intervals, the
strict variants (undated and ambiguous counted as flagged), the per-kind flag rate, the mean
absolute per-answer OLR error, and Cohen's kappa of the two labellers where both labelled::

    .venv/bin/python benchmarks/bench_validation.py --suite ../validation --workdir ../before \\
        --split dev --json benchmarks/out/validation.json

``--workdir`` is a work directory of a finished default-config run (its ``results/datasets`` and
``data/raw``, for the instances and the grounded checks).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

import pandas as pd


def _jsonl(paths: list[Path]) -> list[dict]:
    return [json.loads(line) for p in paths for line in p.read_text().splitlines() if line.strip()]


def load_suite(folder: Path, split: str) -> tuple[list[dict], dict[tuple[str, int], dict], dict[tuple[str, int], dict]]:
    """(answers, author labels by (answer_id, item_id), second labels) of the chosen split."""
    answers = _jsonl(sorted(folder.glob("answers_*.jsonl")))
    keep = None
    if split != "all":
        keep = set()
        for p in sorted(folder.glob("split_*.json")):
            keep |= set(json.loads(p.read_text()).get(split, []))
    answers = [a for a in answers if keep is None or a["answer_id"] in keep]
    ids = {a["answer_id"] for a in answers}
    author = {(r["answer_id"], int(r["item_id"])): r for r in _jsonl(sorted(folder.glob("labels_author_*.jsonl"))) if r["answer_id"] in ids}
    second = {(r["answer_id"], int(r["item_id"])): r for r in _jsonl(sorted(folder.glob("labels_second_*.jsonl"))) if r["answer_id"] in ids}
    return answers, author, second


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float | None, float | None]:
    """Wilson score interval of k successes in n trials (None, None when n is 0)."""
    if n == 0:
        return None, None
    p = k / n
    den = 1 + z * z / n
    mid = (p + z * z / (2 * n)) / den
    half = z * ((p * (1 - p) / n + z * z / (4 * n * n)) ** 0.5) / den
    return max(0.0, mid - half), min(1.0, mid + half)


def cohen_kappa(a: list[bool], b: list[bool]) -> float | None:
    """Cohen's kappa of two binary labellings of the same items (None without items or variance)."""
    n = len(a)
    if n == 0:
        return None
    po = sum(x == y for x, y in zip(a, b)) / n
    pa, pb = sum(a) / n, sum(b) / n
    pe = pa * pb + (1 - pa) * (1 - pb)
    return None if pe == 1 else (po - pe) / (1 - pe)


def rounds(answers: list[dict]) -> list[list[dict]]:
    """The answers split into rounds in which every instance has at most one answer (several
    authors may answer the same instance; one replay serves one answer per prompt)."""
    out: list[list[dict]] = []
    for a in answers:
        for r in out:
            if all(b["instance_id"] != a["instance_id"] for b in r):
                r.append(a)
                break
        else:
            out.append([a])
    return out


def replay(answers: list[dict], workdir: Path, layers: tuple[str, ...], cache: Path) -> pd.DataFrame:
    """Claims of every replayed answer (the real runner and verifier), one row per claim, with
    the ``answer_id`` it came from."""
    frames = [_replay_round(r, workdir, layers, cache / str(k)) for k, r in enumerate(rounds(answers))]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def _replay_round(answers: list[dict], workdir: Path, layers: tuple[str, ...], cache: Path) -> pd.DataFrame:
    from anachron.llm.testserver import TestServer
    from anachron.methods import runner
    from anachron.tasks.registry import get_task
    from anachron.verify.layers.corpus import open_corpus_layer
    from anachron.verify.pipeline import verify_run

    corpus = open_corpus_layer(workdir / "results" / "corpus" / "bm25") if "corpus" in layers else None
    by_task: dict[str, list[dict]] = defaultdict(list)
    for a in answers:
        by_task[a["task"]].append(a)
    frames = []
    for task_name, items in sorted(by_task.items()):
        task = get_task(task_name)
        data = pd.read_parquet(workdir / "results" / "datasets" / f"{task_name}.parquet")
        data = data[data["instance_id"].isin({a["instance_id"] for a in items})].copy()
        # each answer was written and labelled as of its own cutoff: a dataset rebuilt with another
        # cutoff rule (the salary task's negotiating windows) must not move what its labels mean
        pinned = {a["instance_id"]: a["cutoff_date"] for a in items if a.get("cutoff_date")}
        data["cutoff_date"] = [pinned.get(i, c) for i, c in zip(data["instance_id"], data["cutoff_date"])]
        completion = {a["instance_id"]: a["completion"] for a in items}
        answer_of = {a["instance_id"]: a["answer_id"] for a in items}
        prompt_of = {task.messages(r)[-1]["content"]: r["instance_id"] for _, r in data.iterrows()}

        def answer_for(body, prompt_of=prompt_of, completion=completion):
            iid = prompt_of.get(str((body.get("messages") or [{}])[-1].get("content", "")))
            return completion.get(iid) if iid else None

        with TestServer(answer_for=answer_for) as srv:
            os.environ["ANACHRON_VALIDATION_URL"], os.environ["ANACHRON_VALIDATION_KEY"] = srv.base_url, "replay"
            model = {"model": "openai/replay", "knowledge_cutoff": "2024-06-30", "base_url_env": "ANACHRON_VALIDATION_URL",
                     "api_key_env": "ANACHRON_VALIDATION_KEY", "params": {"temperature": 0, "max_tokens": 2000}}
            splits = sorted(set(data["split"]))
            run, _, _, _ = runner.run_method(
                data, task_name=task_name, method_name="temporal_hint", model_name="replay", model_config=model,
                method_config={}, cache_dir=cache, splits=splits, sample=None, seed=0,
            )
        files = {k: str(workdir / v) for k, v in task.grounding_inputs(edgar=True).items() if (workdir / v).exists()}
        indexed = data.set_index("instance_id", drop=False)
        contexts = {iid: task.grounding_context(indexed.loc[iid]) for iid in run["instance_id"]}
        claims = verify_run(run, contexts, grounding=task.make_grounding(files), layers=layers, task=task, corpus=corpus)
        claims["answer_id"] = claims["instance_id"].map(answer_of)
        frames.append(claims)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def score(claims: pd.DataFrame, answers: list[dict], author: dict, second: dict) -> dict:
    """Per-task recall, false-positive rate, strict variants, per-kind rates, OLR error and kappa."""
    ev = claims[claims["source"] == "evidence"].copy()
    out: dict = {}
    for task_name in sorted({a["task"] for a in answers}):
        rows = ev[ev["task"] == task_name]
        tp = fn = fp = tn = stp = sfp = 0
        kinds: dict[str, Counter] = defaultdict(Counter)
        olr_err = []
        per_answer: dict[str, list[tuple[bool, bool]]] = defaultdict(list)
        unmatched = 0
        for r in rows.itertuples(index=False):
            lab = author.get((r.answer_id, int(r.evidence_id)))
            if lab is None:
                unmatched += 1
                continue
            flagged, strict = bool(r.leaked), bool(r.leaked) or r.verdict in ("undated", "ambiguous")
            truth = bool(lab["leaked"])
            tp, fn = tp + (truth and flagged), fn + (truth and not flagged)
            fp, tn = fp + (not truth and flagged), tn + (not truth and not flagged)
            stp, sfp = stp + (truth and strict), sfp + (not truth and strict)
            kinds[lab.get("kind", "?")]["n"] += 1
            kinds[lab.get("kind", "?")]["flagged"] += int(flagged)
            per_answer[r.answer_id].append((truth, flagged))
        for pairs in per_answer.values():
            olr_err.append(abs(sum(t for t, _ in pairs) / len(pairs) - sum(f for _, f in pairs) / len(pairs)))
        leaks, clean = tp + fn, fp + tn
        keys = [k for k in author if k in second and author[k]["answer_id"] in {a["answer_id"] for a in answers if a["task"] == task_name}]
        out[task_name] = {
            "answers": len({a["answer_id"] for a in answers if a["task"] == task_name}),
            "items": leaks + clean, "leaked_items": leaks, "clean_items": clean, "unmatched_claims": unmatched,
            "recall": tp / leaks if leaks else None, "recall_ci": wilson(tp, leaks),
            "fp_rate": fp / clean if clean else None, "fp_ci": wilson(fp, clean),
            "strict_recall": stp / leaks if leaks else None, "strict_fp_rate": sfp / clean if clean else None,
            "olr_error_mean": sum(olr_err) / len(olr_err) if olr_err else None,
            "flag_rate_by_kind": {k: c["flagged"] / c["n"] for k, c in sorted(kinds.items())},
            "flagged_by_kind": {k: [c["flagged"], c["n"]] for k, c in sorted(kinds.items())},
            "kappa": cohen_kappa([bool(author[k]["leaked"]) for k in keys], [bool(second[k]["leaked"]) for k in keys]),
            "kappa_items": len(keys),
        }
    return out


def errors(claims: pd.DataFrame, author: dict) -> list[dict]:
    """Every evidence claim whose verdict disagrees with its author label: ``error`` is ``miss``
    (a leak not flagged) or ``false alarm`` (a clean item flagged), with the verdict's layer and
    reason and the label's truth date and kind."""
    out = []
    for r in claims[claims["source"] == "evidence"].itertuples(index=False):
        lab = author.get((r.answer_id, int(r.evidence_id)))
        if lab is None or bool(lab["leaked"]) == bool(r.leaked):
            continue
        out.append({
            "error": "miss" if lab["leaked"] else "false alarm", "task": r.task, "answer_id": r.answer_id,
            "item_id": int(r.evidence_id), "fact": r.fact, "declared": r.declared_date, "truth_date": lab.get("truth_date"),
            "kind": lab.get("kind"), "verdict": r.verdict, "layer": r.layer, "reason": r.reason,
        })
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--suite", type=Path, required=True, help="the suite's folder (answers_*, labels_*, split_*)")
    ap.add_argument("--workdir", type=Path, required=True, help="a finished run's work directory (datasets, raw data)")
    ap.add_argument("--split", choices=("dev", "heldback", "all"), default="dev")
    ap.add_argument("--layers", default="grounded,rules", help="verifier layers, comma-separated (default: grounded,rules)")
    ap.add_argument("--json", type=Path, help="write the report here too")
    ap.add_argument("--errors", type=Path, help="write every miss and false alarm here (JSON Lines; dev split only, "
                    "so the held-back answers stay unread)")
    args = ap.parse_args(argv)
    answers, author, second = load_suite(args.suite, args.split)
    if not answers:
        print(f"no answers in {args.suite} for split {args.split}", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as cache:
        claims = replay(answers, args.workdir, tuple(args.layers.split(",")), Path(cache))
    report = score(claims, answers, author, second)
    if args.errors:
        if args.split != "dev":
            print("--errors lists the dev split only", file=sys.stderr)
            return 2
        args.errors.write_text("".join(json.dumps(e) + "\n" for e in errors(claims, author)))
    text = json.dumps(report, indent=2)
    print(text)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
