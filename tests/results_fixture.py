"""A small, hand-written ``results.duckdb`` for report, ``anachron show`` and cost tests.

:func:`write_results_db` writes frames as the workflow's Parquet / JSON outputs and builds the
database with the real loader (:func:`anachron.store.load.write_database`), so the metrics,
trace scores, the ``main_table`` view and the report views are computed exactly as in a run.
:func:`scenario` returns the frames of one fixed scenario whose numbers are easy to check by hand:

* tasks ``stock`` and ``legal``; model ``m1`` on every method, ``m2`` on ``temporal_hint`` of
  ``stock`` only; methods ``temporal_hint``, ``rag``, ``rag_unrestricted`` (stock), ``timespec``;
* every run has 4 ``eval`` instances and 2 ``control`` instances; instance OLRs, Perf and Cov
  are given per run in :data:`RUN_SCORES` (the mean of a run is the number to assert);
* claims: instance ``i`` of a run has :data:`N_CLAIMS` evidence claims (``evidence_id`` 1-4; the
  reasoning cites the first Cov x 4 of them as ``[k]``), ``n_leaked`` of them leaked, the rest
  clean except one undated claim on instance 0 of every ``temporal_hint`` run;
* LLM calls: one per instance (two for ``timespec``: a draft and a supervisor step), 1,000 prompt and
  200 completion tokens each, 1.5 s; the ``control`` calls of ``m1`` are cache hits;
* ``rag`` / ``rag_unrestricted`` have two search calls per instance, the second of
  ``rag_unrestricted`` returning a document dated after the cutoff;
* a calibration summary and planted claims for ``stock``; a TEMPO training log of 3 steps;
* ``clean_scores`` of ``stock/temporal_hint/m1`` (:data:`CLEAN_PERF`: each answer's perf_clean) and
  ``probe_scores`` of its neutered and date-shifted probes (:data:`PROBE_PERF`; one neutered
  instance skipped, the neutered answers of instances 0 and 1 naming the company, the shifted
  predictions of instances 0-2 changed).

Fictional throughout: no row is copied from a snapshot or the verifier dev set.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from anachron.metrics.derived import derive_with
from anachron.store.load import write_database
from anachron.tables import SCHEMA

CUTOFF = "2020-01-01"

#: (task, method, model) -> per-instance (olr, perf, cov) of the 4 eval instances, then the 2 control ones.
RUN_SCORES: dict[tuple[str, str, str], list[tuple[float, float, float]]] = {
    ("stock", "temporal_hint", "m1"): [(0.5, 0.6, 1.0), (0.25, 0.4, 0.5), (0.0, 0.8, 1.0), (0.25, 0.6, 0.5),
                                       (0.0, 0.5, 1.0), (0.0, 0.5, 1.0)],
    ("stock", "temporal_hint", "m2"): [(0.75, 0.9, 1.0), (0.5, 0.7, 1.0), (0.5, 0.8, 1.0), (0.25, 0.6, 1.0),
                                       (0.25, 0.5, 1.0), (0.0, 0.5, 1.0)],
    ("stock", "rag", "m1"): [(0.0, 0.7, 1.0), (0.0, 0.5, 0.5), (0.25, 0.6, 1.0), (0.0, 0.6, 1.0),
                             (0.0, 0.5, 1.0), (0.0, 0.5, 0.5)],
    ("stock", "rag_unrestricted", "m1"): [(0.5, 0.8, 1.0), (0.25, 0.7, 1.0), (0.5, 0.7, 1.0), (0.25, 0.6, 0.5),
                                          (0.0, 0.5, 1.0), (0.0, 0.5, 1.0)],
    ("stock", "timespec", "m1"): [(0.0, 0.5, 1.0), (0.0, 0.6, 1.0), (0.0, 0.5, 0.75), (0.0, 0.5, 1.0),
                                  (0.0, 0.5, 1.0), (0.0, 0.5, 1.0)],
    ("legal", "temporal_hint", "m1"): [(1.0, 1.0, 1.0), (0.5, 0.0, 0.5), (0.5, 1.0, 1.0), (0.0, 1.0, 1.0),
                                       (0.0, 0.0, 1.0), (0.0, 1.0, 1.0)],
    ("legal", "rag", "m1"): [(0.5, 1.0, 1.0), (0.0, 0.0, 1.0), (0.0, 1.0, 1.0), (0.0, 1.0, 0.5),
                             (0.0, 1.0, 1.0), (0.0, 0.0, 1.0)],
    ("legal", "timespec", "m1"): [(0.0, 1.0, 1.0), (0.0, 0.0, 1.0), (0.0, 1.0, 1.0), (0.0, 0.0, 1.0),
                                  (0.0, 1.0, 1.0), (0.0, 1.0, 1.0)],
}
#: Claims per instance; OLR x 4 is a whole number of leaked claims for every OLR above.
N_CLAIMS = 4
SEARCH_METHODS = ("rag", "rag_unrestricted")


def instance_id(task: str, i: int) -> str:
    """The fixture's instance ids: ``{task}-{i}`` (0-3 eval, 4-5 control)."""
    return f"{task}-{i}"


def split_of(i: int) -> str:
    """``eval`` for instances 0-3, ``control`` for 4-5."""
    return "eval" if i < 4 else "control"


def cutoff_of(i: int) -> str:
    """Eval instances are cut off on :data:`CUTOFF`, control instances two years later."""
    return CUTOFF if i < 4 else "2022-01-01"


def _frame(table: str, rows: list[dict]) -> pd.DataFrame:
    """``rows`` with every declared column of ``table`` (absent ones None), in table order."""
    cols = SCHEMA[table].names
    return pd.DataFrame([{c: r.get(c) for c in cols} for r in rows], columns=cols)


#: perf_clean of the six answers of stock/temporal_hint/m1 (those with a leaked claim drop).
CLEAN_PERF = [0.3, 0.2, 0.8, 0.5, 0.5, 0.5]
#: Perf of the probe answers of stock/temporal_hint/m1: probe -> per instance (None: skipped).
PROBE_PERF = {"neutered": [0.5, 0.4, 0.5, None, 0.5, 0.4], "date_shift": [0.6, 0.3, 0.7, 0.6, 0.5, 0.5]}


def _probe_frames(scores: list[dict]) -> tuple[list[dict], list[dict]]:
    """The clean_scores and probe_scores rows of stock/temporal_hint/m1."""
    mine = [r for r in scores if (r["task"], r["method"], r["model"]) == ("stock", "temporal_hint", "m1")]
    clean, probes = [], []
    for i, r in enumerate(mine):
        key = {k: r[k] for k in ("task", "method", "model", "split", "instance_id")}
        asked = r["n_leaked"] > 0
        clean.append({**key, "n_evidence": N_CLAIMS, "n_leaked": r["n_leaked"], "n_strict": r["n_leaked"] + r["n_undated"],
                      "n_kept": N_CLAIMS - r["n_leaked"], "n_kept_strict": N_CLAIMS - r["n_leaked"] - r["n_undated"],
                      "perf": r["perf"], "perf_clean": CLEAN_PERF[i], "perf_clean_strict": CLEAN_PERF[i],
                      "status": "asked" if asked else "kept", "status_strict": "asked" if asked else "kept"})
        for probe, perfs in PROBE_PERF.items():
            skipped = perfs[i] is None
            probes.append({**key, "probe": probe, "status": "skipped" if skipped else "paired",
                           "reason": "names_are_common_words" if skipped else None, "cutoff_date": cutoff_of(i),
                           "probe_cutoff_date": cutoff_of(i), "parsed": not skipped, "parsed_probe": not skipped,
                           "perf": r["perf"], "perf_probe": perfs[i], "olr": r["olr"], "olr_probe": 0.0 if not skipped else None,
                           "prediction_changed": (i < 3) if probe == "date_shift" else None,
                           "reidentified": (i < 2) if probe == "neutered" and not skipped else None,
                           "reid_forms": '["CYGR"]' if probe == "neutered" and i < 2 else "[]"})
    return clean, probes


def scenario() -> dict[str, pd.DataFrame | list[dict]]:
    """The frames of the fixture scenario, keyed by table (``runs``: a list of metadata dicts)."""
    instances, completions, claims, scores, calls, tools, runs = [], [], [], [], [], [], []
    tasks = sorted({t for t, _, _ in RUN_SCORES})
    for task in tasks:
        for i in range(6):
            instances.append({"instance_id": instance_id(task, i), "task": task, "split": split_of(i),
                              "cutoff_date": cutoff_of(i), "inputs": json.dumps({"question": f"{task} question {i}"}),
                              # legal eval instances 1 and 3: labels of a revised series
                              "label": json.dumps({"answer": i % 2, **({"revised_value": True} if task == "legal" and i in (1, 3) else {})}),
                              "provenance": "{}"})
    for (task, method, model), per in RUN_SCORES.items():
        key = {"task": task, "method": method, "model": model}
        steps = ("draft", "supervisor") if method == "timespec" else ("answer",)
        for i, (olr, perf, cov) in enumerate(per):
            iid, split, cutoff = instance_id(task, i), split_of(i), cutoff_of(i)
            n_leaked = round(olr * N_CLAIMS)
            undated = method == "temporal_hint" and i == 0 and n_leaked < N_CLAIMS
            evidence = []
            for c in range(N_CLAIMS):
                leaked = c < n_leaked
                verdict = "leaked" if leaked else ("undated" if undated and c == N_CLAIMS - 1 else "clean")
                date = "2021-03-01" if leaked else (None if verdict == "undated" else "2019-06-01")
                fact = f"{task} fact {c + 1} of instance {i}" + (" (reported after the cutoff)" if leaked else "")
                evidence.append({"fact": fact, "source_date": date})
                claims.append({**key, "instance_id": iid, "claim_id": f"{iid}:e{c + 1}", "source": "evidence",
                               "evidence_id": c + 1, "fact": fact, "declared_date_raw": date, "declared_date": date,
                               "date_status": "dated" if date else "undated", "effective_date": date,
                               "cutoff_date": cutoff, "leaked": leaked, "verdict": verdict,
                               "layer": "rules" if leaked else None,
                               "reason": f"dated {date}, after the cutoff {cutoff}" if leaked else None,
                               "cited": c < round(cov * N_CLAIMS), "declared_only": False})
            n_undated = int(undated)
            n_cited = round(cov * N_CLAIMS)
            reasoning = "Because " + " ".join(f"[{c + 1}]" for c in range(n_cited)) + f", answer {i % 2}."
            strict = (n_leaked + n_undated) / N_CLAIMS
            scores.append({**key, "split": split, "instance_id": iid, "parse_status": "ok", "parsed": True,
                           "n_claims": N_CLAIMS, "n_leaked": n_leaked, "n_undated": n_undated, "n_ambiguous": 0,
                           "n_declared_only": 0, "n_reasoning_claims": 0, "n_reasoning_leaked": 0, "olr": olr,
                           "olr_strict": strict, "perf": perf, "n_evidence": N_CLAIMS,
                           "n_cited": n_cited, "cov": cov})
            trace = [{"step": s} for s in steps]
            completions.append({"instance_id": iid, **key, "split": split, "cutoff_date": cutoff,
                                "completion": json.dumps({"evidence": evidence, "reasoning": reasoning,
                                                          "prediction": i % 2}),
                                "finish_reason": "stop", "parse_status": "ok", "evidence": json.dumps(evidence),
                                "n_evidence_dropped": 0, "reasoning": reasoning,
                                "prediction": json.dumps(i % 2), "n_llm_calls": len(steps), "trace": json.dumps(trace)})
            for s in steps:
                calls.append({"task": task, "method": method, "model_key": model, "call_id": f"{model}:{method}:{iid}:{s}",
                              "cache_key": f"k-{model}-{method}-{iid}-{s}", "model_name": model, "model": f"mock/{model}",
                              "provider": "mock", "sample_index": 0, "prompt_tokens": 1000, "completion_tokens": 200,
                              "latency_s": 1.5, "cache_hit": model == "m1" and split == "control", "attempts": 1,
                              "finish_reason": "stop", "started_at": "2026-01-01T00:00:00Z", "instance_id": iid, "step": s})
            if method in SEARCH_METHODS:
                late = method == "rag_unrestricted"
                for seq in range(2):
                    after = [f"doc-late-{i}"] if late and seq == 1 else []
                    tools.append({**key, "instance_id": iid, "seq": seq, "query": f"{task} news {i}", "mode": "as_of" if not late else "unrestricted",
                                  "cutoff_date": cutoff, "returned": json.dumps([f"doc-{i}-{seq}", *after]),
                                  "consumed": json.dumps([f"doc-{i}-{seq}"]), "after_cutoff": json.dumps(after),
                                  "invalid_entities": "[]", "restatements": "[]", "query_intent_after_cutoff": False,
                                  "entity_docs": "[]", "flag_reason": "returned 1 document dated after the cutoff" if after else None})
        n_calls = len(per) * len(steps)
        runs.append({**key, "code_version": "fixture", "config_hash": "fixture", "n_instances": len(per),
                     "n_llm_calls": n_calls, "n_cache_hits": 2 * len(steps) if model == "m1" else 0,
                     "n_uncached_calls": n_calls - (2 * len(steps) if model == "m1" else 0),
                     "n_tool_calls": 2 * len(per) if method in SEARCH_METHODS else 0, "parse_ok": len(per),
                     "n_failed_calls": 0, "n_failed_instances": 0, "failed_share": 0.0, "n_attempts": n_calls,
                     "knowledge_cutoff": "2021-01-01", "model_id": f"mock/{model}",
                     "started_at": "2026-01-01T00:00:00Z", "finished_at": "2026-01-01T00:01:00Z"})
    calibration = [
        {"task": "stock", "layers": "grounded+rules", "kind": kind, "style": "all", "metric": metric, "n": 100,
         "n_flagged": flagged, "n_undated": 0, "n_ambiguous": 0, "n_declared_only": 0, "rate": flagged / 100,
         "ci_low": max(0.0, flagged / 100 - 0.08), "ci_high": min(1.0, flagged / 100 + 0.08)}
        for kind, metric, flagged in (("post_cutoff", "recall", 90), ("pre_cutoff", "fp_rate", 5))
    ]
    planted = [
        {"task": "stock", "instance_id": instance_id("stock", i), "cutoff_date": CUTOFF, "fact": f"planted {i}",
         "declared_date_raw": "2021-01-01" if i % 2 else "2019-01-01", "kind": "post_cutoff" if i % 2 else "pre_cutoff",
         "style": "explicit", "truth_leaked": bool(i % 2), "truth_date": "2021-01-01" if i % 2 else "2019-01-01",
         "layers": "grounded+rules", "leaked": bool(i % 2), "verdict": "leaked" if i % 2 else "clean",
         "layer": "rules", "flagged": bool(i % 2), "correct": True}
        for i in range(4)
    ]
    training = [
        {"model": "m1", "task": "stock", "step": step, "n_groups": 4, "n_failed_groups": 0,
         "perf_mode_fraction": frac, "mean_leak": leak, "mean_reward": 0.1 * step, "reward_std": 0.2,
         "parse_fail_rate": 0.0, "near_miss_rate": 0.0, "loss": 1.0 - 0.1 * step, "kl": 0.01 * step,
         "learning_rate": 1e-5, "val_n": 4, "val_olr": val, "val_olr_strict": val, "val_perf": 0.5,
         "val_cov": 1.0, "val_parse_rate": 1.0, "val_mean_leak": leak,
         "checkpoint": "base" if step == 0 else ("best" if step == 2 else None), "wall_s": 10.0 * step}
        for step, frac, leak, val in ((0, 0.25, 1.0, 0.5), (1, 0.5, 0.5, 0.25), (2, 0.75, 0.25, 0.125))
    ]
    clean, probes = _probe_frames(scores)
    return {
        "instances": _frame("instances", instances),
        "completions": _frame("completions", completions),
        "claims": _frame("claims", claims),
        "instance_scores": _frame("instance_scores", scores),
        "llm_calls": _frame("llm_calls", calls),
        "tool_calls": _frame("tool_calls", tools),
        "calibration": _frame("calibration", calibration),
        "planted_claims": _frame("planted_claims", planted),
        "training_log": _frame("training_log", training),
        "clean_scores": _frame("clean_scores", clean),
        "probe_scores": _frame("probe_scores", probes),
        "runs": runs,
    }


#: ``write_database`` keyword of each table the fixture writes as Parquet.
_ARGS = {"instances": "instances", "completions": "completions", "claims": "claims",
         "instance_scores": "instance_scores", "llm_calls": "llm_calls", "tool_calls": "tool_calls",
         "calibration": "calibration", "planted_claims": "planted", "training_log": "training_log",
         "claim_shapley": "claim_shapley", "shapley": "shapley", "clean_scores": "clean_scores",
         "probe_scores": "probe_scores"}


def write_results_db(dest: Path, frames: dict | None = None, *, drop: tuple[str, ...] = (),
                     views: tuple[str, ...] | None = None,
                     prices: dict[str, tuple[float, float]] | None = None) -> Path:
    """Write ``frames`` (default: :func:`scenario`) as workflow outputs under ``dest`` and build
    ``dest/results.duckdb`` with :func:`~anachron.store.load.write_database`.

    Args:
        dest: an empty directory (a pytest ``tmp_path``).
        frames: table name -> DataFrame (``runs``: list of metadata dicts); tables not given stay empty.
        drop: tables to leave empty although ``frames`` has them (e.g. ``("training_log",)``).
        views: view statements for the database; None: the report views ``load_results`` creates
            (:func:`anachron.report.registry.report_view_statements`), ``()`` for none.
        prices: model key -> (USD per million input, output tokens), the loader's ``prices``
            (``llm_calls.cost_usd``); None: every cost NULL.

    Returns:
        The database path.
    """
    frames = scenario() if frames is None else frames
    dest.mkdir(parents=True, exist_ok=True)
    kwargs: dict[str, list] = {"instances": [], "run_meta": [], "completions": [], "llm_calls": [], "claims": [],
                               "instance_scores": []}
    for table, df in frames.items():
        if table in drop:
            continue
        if table == "runs":
            metas = []
            for k, meta in enumerate(df):
                p = dest / f"run{k}.meta.json"
                p.write_text(json.dumps(meta))
                metas.append(p)
            kwargs["run_meta"] = metas
            continue
        p = dest / f"{table}.parquet"
        df.to_parquet(p, index=False)
        kwargs[_ARGS[table]] = [p]
    db = dest / "results.duckdb"
    if views is None:
        from anachron.report.registry import report_view_statements

        views = tuple(report_view_statements())
    write_database(db, derive=derive_with({"n_resamples": 200, "seed": 0}), views=views, prices=prices, **kwargs)
    return db
