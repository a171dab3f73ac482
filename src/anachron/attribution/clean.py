"""Leakage-adjusted Perf: each leaked answer's prediction asked again without its leaked evidence.

docs/metrics.md#leakage-adjusted-perf. OLR counts leaked claims; it does not say how much of the
score they bought. For every answer whose prediction parsed and whose evidence has a leaked claim,
the same model is asked for the prediction again in the closed world of the TimeSPEC aggregator (the
task input plus the listed facts only, prediction only, no reasoning shown;
:func:`anachron.attribution.shapley.value_request`), over the answer's evidence claims:

* ``perf_clean``: the claims that are not ``leaked`` (asked when at least one is);
* ``perf_clean_strict``: the claims verified ``clean`` (asked when at least one is leaked, undated
  or ambiguous), the strict counterpart as strict OLR is of OLR.

An answer without such a claim keeps its Perf. An answer whose claims all leaked is asked with no
facts (the closed world's empty coalition: the task input alone) and recorded as
``empty_evidence``; a second answer without a valid prediction has no perf_clean
(``invalid_answer``), like an unparsed first answer (``unparsed``). The two asks share one call
when their fact lists are equal (same request, same cache key), and every call is cached, so a
re-run makes none.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import numpy as np
import pandas as pd

from anachron.attribution.shapley import value_request, value_score
from anachron.llm.client import LLMClient
from anachron.tables import CLEAN_SCORE_COLUMNS, PREDICTION_USABLE, VERDICT_CLEAN
from anachron.tasks.base import Task

log = logging.getLogger(__name__)

#: The call log's ``step`` of a closed-world re-ask.
STEP = "perf_clean"


def _evidence(claims: pd.DataFrame) -> pd.DataFrame:
    return claims[claims["source"] != "reasoning"] if "source" in claims.columns else claims


def clean_scores(
    run: pd.DataFrame, claims: pd.DataFrame, instances: pd.DataFrame, task: Task, client: LLMClient, *,
    params: dict[str, Any],
) -> pd.DataFrame:
    """Perf, perf_clean and perf_clean_strict of every answer of ``run`` (:data:`~anachron.tables.CLEAN_SCORE_COLUMNS`).

    Args:
        run: the run's completions (sample before calling).
        claims: the run's claims (evidence and reasoning; reasoning claims are not facts).
        instances: the task's instance table.
        task: the task (prompt, prediction schema, validator, Perf).
        client: the run's model client (cached, concurrent): the calls run as one batch.
        params: decoding parameters of the closed-world calls.

    Returns:
        One row per completion: ``status`` / ``status_strict`` (``unparsed``, ``kept``, ``asked``,
        ``empty_evidence``, ``invalid_answer``), the evidence, leaked, strict and kept counts, ``perf``,
        ``perf_clean``, ``perf_clean_strict`` (NaN where undefined).
    """
    inst = instances.set_index("instance_id", drop=False)
    by_id = {k: g for k, g in _evidence(claims).groupby("instance_id")} if len(claims) else {}
    rows: list[dict[str, Any]] = []
    asks: list[tuple[int, str, list[str]]] = []  # (row index, "" or "_strict", facts)
    for r in run.itertuples(index=False):
        row = inst.loc[r.instance_id]
        c = by_id.get(r.instance_id, claims.iloc[0:0])
        facts = [str(f) for f in c["fact"]] if len(c) else []
        leaked = c["leaked"].fillna(False).to_numpy(dtype=bool) if len(c) else np.zeros(0, bool)
        clean = (c["verdict"] == VERDICT_CLEAN).to_numpy(dtype=bool) if len(c) else np.zeros(0, bool)
        out = {"task": r.task, "method": r.method, "model": r.model, "split": r.split, "instance_id": r.instance_id,
               "n_evidence": len(facts), "n_leaked": int(leaked.sum()), "n_strict": int((~clean).sum()),
               "n_kept": int((~leaked).sum()), "n_kept_strict": int(clean.sum()), "perf": np.nan,
               "perf_clean": np.nan, "perf_clean_strict": np.nan, "status": "unparsed", "status_strict": "unparsed"}
        if r.parse_status in PREDICTION_USABLE:  # the run's Perf, as rule score_run scores it
            out["perf"] = float(task.perf(row, json.loads(r.prediction)))
        if not np.isnan(out["perf"]):
            for suffix, drop in (("", leaked), ("_strict", ~clean)):
                if not drop.any():
                    out[f"perf_clean{suffix}"], out[f"status{suffix}"] = out["perf"], "kept"
                else:
                    asks.append((len(rows), suffix, [f for f, d in zip(facts, drop) if not d]))
        rows.append(out)
    requests = [value_request(task, inst.loc[rows[i]["instance_id"]], facts, params, step=STEP) for i, _, facts in asks]
    results = client.complete_many(requests, desc=f"perf_clean {task.name}") if requests else []
    for (i, suffix, facts), res in zip(asks, results):
        row = inst.loc[rows[i]["instance_id"]]
        perf = value_score(task, row, res.text) if res.ok else np.nan
        rows[i][f"perf_clean{suffix}"] = perf
        rows[i][f"status{suffix}"] = "invalid_answer" if np.isnan(perf) else ("asked" if facts else "empty_evidence")
    log.info("perf_clean: %d answers, %d closed-world asks (%d distinct requests)", len(rows), len(asks),
             len({r.model_dump_json() for r in requests}))
    return pd.DataFrame(rows, columns=CLEAN_SCORE_COLUMNS)
