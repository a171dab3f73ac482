"""``anachron estimate``: the instances, LLM calls, searches, tokens and cost of a config, before it runs.

What is counted, per task x method x model (docs/running.md#estimate):

* **instances**: the config's sample (``run.sample``, ``methods.<m>.sample``, ``run.splits``) drawn
  from the built dataset ``{datasets}/{task}.parquet`` exactly as rule run_method draws it
  (:func:`anachron.methods.runner.sample_instances`). Without a dataset the count comes from the
  config alone: an upper bound (the stock windows' ``n``, or the sample cap per split) or unknown.
* **LLM calls** of the run (stage ``run``), from the method's call pattern
  (:mod:`anachron.methods.pattern`), of the verifier (stage ``verify``: the llm claim extractor and the
  llm layer of rule verify_claims), of the Shapley attributions (stage ``shapley``) and of the
  verifier's calibration (stage ``calibration``, llm layer sets only).
* **searches**: the search calls the run logs as tool calls (at most ``queries_max`` per instance), and
  apart, the searches that date claims (TimeSPEC's supervisor, the verifier's corpus layer).
* **tokens**: prompt tokens measured on the prompts the methods build for the first
  :attr:`Assumptions.sample_rows` sampled instances of each task (characters / :data:`CHARS_PER_TOKEN`
  plus :data:`MESSAGE_TOKENS` per message; what the model will have written is stood in for by
  :func:`~anachron.methods.pattern.placeholder_facts`); completion tokens: the call's ``max_tokens``
  times :attr:`Assumptions.completion_share` (1: the upper bound).
* **cost**: the tokens at the config's prices (:func:`anachron.cost.model_prices`); unknown (None)
  for a model without a price.

What depends on the models' answers is an :class:`Assumptions` field, printed with the estimate.
After a run, :func:`compare` sets the estimate beside what ``results.duckdb`` recorded.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

import pandas as pd

from anachron.frames import is_null
from anachron.plan import method_sample, method_tasks, planned_runs, shapley_runs
from anachron.store import database_columns
from anachron.cost import call_cost, model_prices
from anachron.methods.pattern import CallPattern, Step, placeholder_facts, render_extraction, render_plausibility

#: Characters per token of the prompt estimate (English prose and JSON; a stated factor).
CHARS_PER_TOKEN = 4.0
#: Chat-template tokens around each message (role markers, separators).
MESSAGE_TOKENS = 4
#: Planted claims per kind: 3 kinds of template claims, 2 kinds of re-worded real facts
#: (:func:`anachron.verify.calibration.plant.plant_claims`).
TEMPLATE_KINDS, REAL_KINDS = 3, 2
#: Columns of :func:`estimate`'s step rows.
STEP_COLUMNS = [
    "task", "stage", "method", "model", "run_model", "step", "priced_model", "instances", "instances_basis", "calls",
    "prompt_tokens", "completion_tokens", "cost_usd",
]
#: Columns of the per-run summary (:func:`summarize`).
SUMMARY_COLUMNS = [
    "task", "stage", "method", "model", "instances", "instances_basis", "calls", "searches", "claim_searches",
    "prompt_tokens", "completion_tokens", "cost_usd", "cost_per_instance_usd",
]


@dataclass(frozen=True)
class Assumptions:
    """What the estimate cannot know before the models answer.

    Attributes:
        claims_per_instance: claims in one answer (what the supervisors, the verifier's llm layer
            and Shapley work on); None = the method's ``max_evidence`` (the evidence list's bound).
        flagged_share: share of a supervised method's instances with a flagged claim, which are
            generated and supervised a second time (1: every instance, the upper bound).
        retry_rate: share of answers asked again, per retry round, among steps that retry
            (an answer that does not parse: :mod:`anachron.methods.base`).
        completion_share: share of ``max_tokens`` an answer uses (1: the upper bound).
        sample_rows: instances per task whose prompts are rendered and measured.
    """

    claims_per_instance: int | None = None
    flagged_share: float = 1.0
    retry_rate: float = 0.05
    completion_share: float = 1.0
    sample_rows: int = 5


@dataclass
class Instances:
    """The instances of one run: their number, where it comes from, and the rows when known.

    ``basis``: ``"dataset"`` (exact), ``"config, at most"`` (an upper bound from the config) or
    ``"unknown"``.
    """

    n: int | None
    basis: str
    rows: pd.DataFrame | None = None


@dataclass
class Estimate:
    """The result of :func:`estimate`: step rows, search counts per run, notes."""

    steps: pd.DataFrame
    searches: pd.DataFrame
    notes: list[str] = field(default_factory=list)
    assumptions: Assumptions = field(default_factory=Assumptions)


# ---------------------------------------------------------------------------------------------
# Instances
# ---------------------------------------------------------------------------------------------


def read_dataset(datasets: Path, task: str) -> pd.DataFrame | None:
    """The built dataset of ``task`` under ``datasets``, or None when it is not there."""
    path = Path(datasets) / f"{task}.parquet"
    return pd.read_parquet(path) if path.is_file() else None


def config_instances(config: Mapping[str, Any], task: str, cap: int | None) -> Instances:
    """Instances of a run from the config alone (no dataset): the windows' ``n`` per split where the
    task's block lists windows (stock), capped by the sample; else the cap per split; else unknown."""
    splits = config["run"]["splits"]
    windows = config["tasks"].get(task, {}).get("windows")
    if windows:
        total = 0
        for split in splits:
            n = sum(int(w.get("n") or 0) for w in windows if w.get("split") == split)
            total += n if cap is None else min(n, cap)
        return Instances(total, "config, at most")
    if cap is not None:
        return Instances(cap * len(splits), "config, at most")
    return Instances(None, "unknown")


def run_instances(config: Mapping[str, Any], task: str, method: str, dataset: pd.DataFrame | None) -> Instances:
    """The instances rule run_method will run (:func:`anachron.methods.runner.sample_instances`)."""
    from anachron.methods.runner import sample_instances

    cap = method_sample(config, task, method)
    if dataset is None:
        return config_instances(config, task, cap)
    rows = sample_instances(dataset, list(config["run"]["splits"]), cap, int(config["seed"]))
    return Instances(len(rows), "dataset", rows)


# ---------------------------------------------------------------------------------------------
# Tokens and calls
# ---------------------------------------------------------------------------------------------


def prompt_tokens(messages: Sequence[Mapping[str, Any]]) -> float:
    """Estimated prompt tokens of chat ``messages``: characters / :data:`CHARS_PER_TOKEN` plus
    :data:`MESSAGE_TOKENS` per message."""
    chars = sum(len(str(m.get("content") or "")) for m in messages)
    return chars / CHARS_PER_TOKEN + MESSAGE_TOKENS * len(messages)


def retry_factor(retries: int, rate: float) -> float:
    """Expected calls per first call when an answer is asked again with probability ``rate`` per
    round, at most ``retries`` times: ``1 + rate + ... + rate^retries``."""
    return sum(rate**k for k in range(retries + 1))


def batched_calls(cutoffs: Sequence[str] | None, n: float, items_per_instance: float, batch_size: int) -> float:
    """Calls of a step that sends ``batch_size`` claims per call, grouped by cutoff date
    (:func:`anachron.verify.layers.llm.check_plausibility`), for ``n`` instances with
    ``items_per_instance`` claims each. ``cutoffs``: the instances' cutoff dates (None: unknown,
    counted as one cutoff per instance, the upper bound)."""
    if n <= 0 or items_per_instance <= 0:
        return 0.0
    if cutoffs is None:
        return n * math.ceil(items_per_instance / batch_size)
    counts = pd.Series(list(cutoffs)).value_counts()
    share = n / max(len(cutoffs), 1)
    return float(sum(math.ceil(c * share * items_per_instance / batch_size) for c in counts))


def max_tokens(config: Mapping[str, Any], model: str) -> int | None:
    """The configured ``max_tokens`` of a model's calls (None: not set, the endpoint decides)."""
    return config["models"][model].get("params", {}).get("max_tokens")


def _measure(step: Step, task: Any, rows: pd.DataFrame | None, facts: Sequence[str], notes: list[str]) -> float | None:
    """Mean prompt tokens of ``step`` over ``rows``; None without rows, or when a row does not
    render (a dataset of another shape: said in ``notes``)."""
    if rows is None or not len(rows):
        return None
    try:
        sizes = [prompt_tokens(step.render(task, row, facts)) for _, row in rows.iterrows()]
    except (KeyError, TypeError, ValueError) as exc:
        note = f"{task.name}: the dataset's instances do not render as {task.name} prompts ({type(exc).__name__}: {exc}): prompt tokens unknown"
        if note not in notes:
            notes.append(note)
        return None
    return sum(sizes) / len(sizes)


@dataclass
class _Ctx:
    """What every step row of one run needs."""

    config: Mapping[str, Any]
    prices: Mapping[str, tuple[float, float]]
    assume: Assumptions
    task: str
    stage: str
    method: str
    model: str
    inst: Instances
    sample: pd.DataFrame | None
    run_model: str = ""
    notes: list[str] = field(default_factory=list)


def _row(ctx: _Ctx, step: Step, priced: str, calls: float | None, facts: Sequence[str],
         completion_limit: int | None, instances: float | None) -> dict[str, Any]:
    from anachron.tasks.registry import get_task

    per_prompt = _measure(step, get_task(ctx.task), ctx.sample, facts, ctx.notes)
    limit = completion_limit
    per_completion = None if limit is None else limit * ctx.assume.completion_share
    p_tok = None if calls is None or per_prompt is None else calls * per_prompt
    c_tok = None if calls is None or per_completion is None else calls * per_completion
    return {
        "task": ctx.task, "stage": ctx.stage, "method": ctx.method, "model": ctx.model,
        "run_model": ctx.run_model or ctx.model, "step": step.step,
        "priced_model": priced, "instances": instances, "instances_basis": ctx.inst.basis, "calls": calls,
        "prompt_tokens": p_tok, "completion_tokens": c_tok,
        "cost_usd": call_cost(p_tok, c_tok, ctx.prices.get(priced)),
    }


def _step_rows(ctx: _Ctx, pattern: CallPattern, roles: Mapping[str, str], claims: int) -> list[dict[str, Any]]:
    """One row per step of ``pattern`` for the run in ``ctx``."""
    a = ctx.assume
    n = ctx.inst.n
    facts = placeholder_facts(claims)
    cutoffs = None if ctx.inst.rows is None else list(ctx.inst.rows["cutoff_date"].astype(str))
    out = []
    for step in pattern.steps:
        model = roles[step.model]
        share = a.flagged_share if step.when == "flagged" else 1.0
        factor = retry_factor(step.retries, a.retry_rate)
        if n is None:
            calls, batch_facts = None, facts
        elif step.batched:
            first = batched_calls(cutoffs, n * share, claims, int(step.batch_size or 1))
            calls = first * factor
            per_call = (n * share * claims / first) if first else 0
            batch_facts = placeholder_facts(max(1, round(per_call)))
        else:
            calls, batch_facts = n * share * factor, facts
        out.append(_row(ctx, step, model, calls, batch_facts, max_tokens(ctx.config, model), n))
    return out


def _run_rows(ctx: _Ctx, claims: int) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Step rows and search counts of one run_method job."""
    from anachron.methods.registry import get_call_pattern
    from anachron.tasks.registry import get_task

    settings = ctx.config["methods"].get(ctx.method, {})
    pattern = get_call_pattern(ctx.method, settings)
    roles = {"generator": ctx.model, "supervisor": settings.get("supervisor_model") or ctx.model}
    rows = _step_rows(ctx, pattern, roles, claims)
    n = ctx.inst.n
    searches = claim_searches = 0.0
    if pattern.searches is not None:
        searches = None if n is None else n * pattern.searches(get_task(ctx.task))[1]
    if pattern.claim_searches:
        rounds = 1 + (ctx.assume.flagged_share if int(settings.get("max_regenerations", 1)) else 0)
        claim_searches = None if n is None else n * claims * pattern.claim_searches * rounds
    return rows, {"searches": searches, "claim_searches": claim_searches}


def _verify_rows(ctx: _Ctx, claims: int) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Step rows of rule verify_claims for one run: the llm extractor (one call per answer) and the
    llm layer (batches of ``verify.batch_size`` claims per cutoff, asked again once)."""
    verify = ctx.config["verify"]
    steps = []
    if verify["model"] and verify["extractor"] == "llm":
        steps.append(Step("extract_claims", render_extraction, model="verifier"))
    if verify["model"] and "llm" in verify["layers"]:
        steps.append(Step("plausibility", render_plausibility, model="verifier", retries=1, batched=True,
                          batch_size=int(verify["batch_size"])))
    rows = _step_rows(ctx, CallPattern(steps=tuple(steps)), {"verifier": verify["model"] or ""}, claims) if steps else []
    if "corpus" not in verify["layers"]:
        return rows, {"searches": 0.0, "claim_searches": 0.0}
    if not rows:  # the corpus layer searches without any model call
        rows = [{"task": ctx.task, "stage": ctx.stage, "method": ctx.method, "model": ctx.model, "run_model": ctx.run_model,
                 "step": "corpus", "priced_model": ctx.model, "instances": ctx.inst.n, "instances_basis": ctx.inst.basis,
                 "calls": 0.0, "prompt_tokens": 0.0, "completion_tokens": 0.0, "cost_usd": 0.0}]
    return rows, {"searches": 0.0, "claim_searches": None if ctx.inst.n is None else ctx.inst.n * claims}


def _shapley_rows(ctx: _Ctx, claims: int) -> list[dict[str, Any]]:
    """Step rows of rule shapley for one run: ``shapley.sample`` instances per split, each
    :func:`~anachron.metrics.shapley.n_value_calls` value calls (plus the exact values of the
    agreement check), prompts with half the claims (the mean coalition)."""
    from anachron.attribution.shapley import value_request
    from anachron.methods.runner import sample_instances
    from anachron.metrics.shapley import n_value_calls

    cfg = ctx.config["shapley"]
    per = n_value_calls(claims, budget=int(cfg["budget"]), exact_max=int(cfg["exact_max"]))
    if per < (1 << claims) and claims <= int(cfg["agreement_max_claims"]):
        per += 1 << claims
    rows = ctx.inst.rows
    if rows is not None:
        chosen = sample_instances(rows, sorted(rows["split"].unique()), cfg["sample"], int(ctx.config["seed"]))
        n: float | None = len(chosen)
        ctx.inst = Instances(n, ctx.inst.basis, chosen)
    elif ctx.inst.n is not None and cfg["sample"] is not None:
        n = min(ctx.inst.n, cfg["sample"] * len(ctx.config["run"]["splits"]))
    else:
        n = ctx.inst.n
    step = Step("shapley", lambda task, row, facts: value_request(task, row, list(facts), {}).messages)
    limit = int(cfg["max_tokens"])
    return [_row(ctx, step, ctx.model, None if n is None else n * per, placeholder_facts(claims // 2), limit, n)]


def _calibration_rows(config: Mapping[str, Any], prices: Mapping[str, tuple[float, float]], assume: Assumptions,
                      task: str, dataset: pd.DataFrame | None, sample: pd.DataFrame | None,
                      notes: list[str]) -> list[dict[str, Any]]:
    """Step rows of rule calibrate_verifier for ``task``: every planted claim of every layer set with
    ``llm`` goes to the date judge (at most: grounded and rules decide some first), in batches of
    ``verify.batch_size`` per cutoff date of the task's eval and control instances."""
    from anachron.verify.calibration.evaluate import layers_name

    cal, verify = config["calibration"], config["verify"]
    sets = [s for s in cal["layer_sets"] if "llm" in s]
    if not sets or not verify["model"]:
        return []
    n_real = cal["n_per_kind"] if cal.get("n_real_per_kind") is None else cal["n_real_per_kind"]
    planted = TEMPLATE_KINDS * cal["n_per_kind"] + REAL_KINDS * n_real
    batch = int(verify["batch_size"])
    if dataset is not None:
        pool = dataset[dataset["split"].isin(["eval", "control"])]
        groups = min(planted, max(pool["cutoff_date"].nunique(), 1))
        basis = "dataset"
    else:
        groups, basis = planted, "config, at most"
    first = groups * math.ceil(planted / groups / batch)
    calls = len(sets) * first * retry_factor(1, assume.retry_rate)
    inst = Instances(planted, f"planted claims, at most ({basis})", sample)
    ctx = _Ctx(config, prices, assume, task, "calibration", ", ".join(layers_name(s) for s in sets), verify["model"],
               inst, sample, notes=notes)
    step = Step("plausibility", render_plausibility, model="verifier", retries=1, batched=True, batch_size=batch)
    facts = placeholder_facts(max(1, round(planted / groups)) if planted / groups < batch else batch)
    return [_row(ctx, step, verify["model"], calls, facts, max_tokens(config, verify["model"]), planted)]


def estimate(config: Mapping[str, Any], datasets: str | Path = "results/datasets",
             assume: Assumptions | None = None) -> Estimate:
    """The estimate of a validated config (:func:`anachron.config.load_config`).

    Args:
        config: the validated config (defaults filled in).
        datasets: the directory of the built datasets (``{task}.parquet``); a task without one is
            counted from the config (:func:`config_instances`) and said in the notes.
        assume: the assumptions on what the models will write (:class:`Assumptions`).

    Returns:
        An :class:`Estimate`: one step row per task x stage x method x model x step
        (:data:`STEP_COLUMNS`; counts are floats, expected values), the searches per run, notes.
    """
    assume = assume or Assumptions()
    prices = model_prices(config)
    notes: list[str] = []
    tasks = list(dict.fromkeys(t for t, _, _ in planned_runs(config)))
    data = {t: read_dataset(Path(datasets), t) for t in tasks}
    for t, df in data.items():
        if df is None:
            notes.append(
                f"{t}: no dataset at {Path(datasets) / (t + '.parquet')}: instances from the config (an upper bound, or "
                f"unknown), prompt tokens and cost unknown; build it without any model call: "
                f"snakemake --cores 2 results/datasets/{t}.parquet"
            )
    samples = {t: (None if df is None else df.sort_values("instance_id").head(assume.sample_rows)) for t, df in data.items()}
    rows: list[dict[str, Any]] = []
    searches: list[dict[str, Any]] = []
    shap = set(shapley_runs(config))
    order = {t: i for i, t in enumerate(tasks)}
    for task, method, model in sorted(planned_runs(config), key=lambda r: order[r[0]]):
        inst = run_instances(config, task, method, data[task])
        claims = assume.claims_per_instance
        if claims is None:
            claims = int(config["methods"].get(method, {}).get("max_evidence", 10))
        sample = samples[task] if inst.rows is None else inst.rows.head(assume.sample_rows)
        ctx = _Ctx(config, prices, assume, task, "run", method, model, inst, sample, notes=notes)
        step_rows, counts = _run_rows(ctx, claims)
        rows += step_rows
        searches.append({"task": task, "stage": "run", "method": method, "model": model, **counts})
        if config["verify"]["model"] or "corpus" in config["verify"]["layers"]:
            verifier = config["verify"]["model"] or "(none)"
            vctx = _Ctx(config, prices, assume, task, "verify", method, verifier, inst, sample, model, notes)
            step_rows, counts = _verify_rows(vctx, claims)
            rows += step_rows
            if step_rows:
                searches.append({"task": task, "stage": "verify", "method": method, "model": vctx.model, **counts})
        if (task, method, model) in shap:
            sctx = _Ctx(config, prices, assume, task, "shapley", method, model, inst, sample, notes=notes)
            rows += _shapley_rows(sctx, claims)
    for task in tasks:
        rows += _calibration_rows(config, prices, assume, task, data[task], samples[task], notes)
    unpriced = sorted({r["priced_model"] for r in rows if r["priced_model"] not in prices and r["calls"] != 0})
    if unpriced:
        notes.append(f"no price for {unpriced}: their cost is unknown (config key prices)")
    if config["verify"]["model"] and [s for s in config["calibration"]["layer_sets"] if "llm" in s]:
        notes.append("calibration calls are estimated only: rule calibrate_verifier records no call log")
    steps = _numeric(pd.DataFrame(rows, columns=STEP_COLUMNS))
    return Estimate(steps, pd.DataFrame(searches, columns=["task", "stage", "method", "model", "searches", "claim_searches"]),
                    notes, assume)


def _sum(values: pd.Series) -> float | None:
    """Sum of ``values``; None when any is unknown (a total of known and unknown parts is unknown)."""
    return None if values.isna().any() or not len(values) else float(values.sum())


def summarize(est: Estimate) -> pd.DataFrame:
    """One row per task x stage x method x model (:data:`SUMMARY_COLUMNS`), in the order of the
    estimate. The verifier's rows of one task x method add up the runs of every model, as the
    database records them (under the verifier's key)."""
    keys = ["task", "stage", "method", "model"]
    out = []
    for key, g in est.steps.groupby(keys, sort=False, dropna=False):
        row = dict(zip(keys, key))
        row["instances"] = _sum(g.drop_duplicates("run_model")["instances"].astype(float))
        row["instances_basis"] = g["instances_basis"].iloc[0]
        for col in ("calls", "prompt_tokens", "completion_tokens", "cost_usd"):
            row[col] = _sum(g[col])
        out.append(row)
    df = pd.DataFrame(out, columns=[c for c in SUMMARY_COLUMNS if c not in ("searches", "claim_searches", "cost_per_instance_usd")])
    df = df.merge(est.searches.groupby(keys, sort=False, as_index=False)[["searches", "claim_searches"]].sum(min_count=1),
                  on=keys, how="left")
    df[["searches", "claim_searches"]] = df[["searches", "claim_searches"]].astype(float).fillna(0.0)
    inst = pd.to_numeric(df["instances"], errors="coerce")
    df["cost_per_instance_usd"] = pd.to_numeric(df["cost_usd"], errors="coerce") / inst.where(inst > 0)
    return _numeric(df[SUMMARY_COLUMNS])


#: Columns that hold numbers (NaN where unknown).
NUMERIC = ("instances", "calls", "searches", "claim_searches", "prompt_tokens", "completion_tokens", "cost_usd",
           "cost_per_instance_usd")


def _numeric(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with its :data:`NUMERIC` columns as floats (None becomes NaN)."""
    for c in NUMERIC:
        if c in df:
            df[c] = pd.to_numeric(df[c], errors="coerce").astype(float)
    return df


def totals(summary: pd.DataFrame) -> dict[str, float | None]:
    """Totals of a summary over every row (None where a part is unknown)."""
    return {c: _sum(summary[c]) for c in ("calls", "searches", "claim_searches", "prompt_tokens", "completion_tokens", "cost_usd")}


# ---------------------------------------------------------------------------------------------
# After a run: estimate vs results.duckdb
# ---------------------------------------------------------------------------------------------


def actual_usage(con: Any, config: Mapping[str, Any]) -> tuple[pd.DataFrame, list[str]]:
    """What a run recorded, per task x stage x method x model: LLM calls, cache hits, tokens, cost
    (``cost_all``: every call; ``cost_spent``: calls that were not cache hits) and search calls.

    A call's stage: ``shapley`` for step ``shapley``; ``verify`` for a call under the verifier's key
    (``verify.model``) in a task x method whose runs do not use that key as their model; else ``run``.
    A database without ``cost_usd`` (an older version) is priced here with the config's prices.

    Returns:
        ``(frame, notes)``.
    """
    notes: list[str] = []
    keys = ["task", "stage", "method", "model_key"]
    tables = database_columns(con)
    empty = pd.DataFrame(columns=["task", "stage", "method", "model", "calls", "cache_hits", "prompt_tokens",
                                  "completion_tokens", "cost_all", "cost_spent", "searches"])
    if "llm_calls" not in tables:
        notes.append("the database has no llm_calls table: no recorded calls to compare with (rebuild it: snakemake --cores 2)")
        return empty, notes
    cols = tables["llm_calls"]
    calls = con.execute(
        "SELECT task, method, model_key, model_name, step, cache_hit, prompt_tokens, completion_tokens"
        + (", cost_usd" if "cost_usd" in cols else "") + " FROM llm_calls").df()
    if "cost_usd" not in cols:
        prices = model_prices(config)
        calls["cost_usd"] = [call_cost(p, c, prices.get(m)) for p, c, m in
                             zip(calls["prompt_tokens"], calls["completion_tokens"], calls["model_name"])]
        notes.append("the database has no llm_calls.cost_usd (an older version): actual cost priced with the config's prices")
    runs = set(planned_runs(config))
    verifier = config["verify"]["model"]

    def stage(r: Any) -> str:
        if r.step == "shapley":
            return "shapley"
        if verifier and r.model_key == verifier and (r.task, r.method, r.model_key) not in runs:
            return "verify"
        return "run"

    calls["stage"] = [stage(r) for r in calls.itertuples(index=False)]
    calls["cost_usd"] = pd.to_numeric(calls["cost_usd"], errors="coerce")
    calls["cost_spent"] = calls["cost_usd"].where(~calls["cache_hit"].astype(bool), 0.0)
    g = calls.groupby(keys, dropna=False)
    out = pd.DataFrame({
        "calls": g.size(),
        "cache_hits": g["cache_hit"].sum(),
        "prompt_tokens": g["prompt_tokens"].sum(min_count=1),
        "completion_tokens": g["completion_tokens"].sum(min_count=1),
        "cost_all": g["cost_usd"].sum(min_count=1),
        "cost_spent": g["cost_spent"].sum(min_count=1),
    }).reset_index().rename(columns={"model_key": "model"})
    if "tool_calls" in tables:
        tools = con.execute("SELECT task, method, model, count(*) AS searches FROM tool_calls GROUP BY ALL").df()
        tools["stage"] = "run"
        out = out.merge(tools, on=["task", "stage", "method", "model"], how="outer")
        out["searches"] = out["searches"].fillna(0)  # recorded calls without a search
    else:
        out["searches"] = float("nan")
        notes.append("the database has no tool_calls table: no recorded searches")
    return out, notes


def compare(summary: pd.DataFrame, actual: pd.DataFrame) -> pd.DataFrame:
    """The estimate beside the actual usage, per task x stage x method x model (``_est`` and
    ``_actual`` columns; ``cost_spent_usd`` and ``cost_all_usd`` for the actual cost)."""
    keys = ["task", "stage", "method", "model"]
    est = summary[keys + ["instances", "calls", "searches", "prompt_tokens", "completion_tokens", "cost_usd"]]
    df = est.merge(actual, on=keys, how="outer", suffixes=("_est", "_actual"))
    df = df.rename(columns={"cost_usd": "cost_usd_est", "cost_all": "cost_all_usd", "cost_spent": "cost_spent_usd"})
    cols = keys + ["instances", "calls_est", "calls_actual", "cache_hits", "searches_est", "searches_actual",
                   "prompt_tokens_est", "prompt_tokens_actual", "completion_tokens_est", "completion_tokens_actual",
                   "cost_usd_est", "cost_spent_usd", "cost_all_usd"]
    for c in cols:
        if c not in df:
            df[c] = float("nan")
    # the estimate's order; recorded rows the config does not plan come last
    rank = {tuple(k): i for i, k in enumerate(summary[keys].itertuples(index=False))}
    df["_o"] = [rank.get(tuple(k), len(rank)) for k in df[keys].itertuples(index=False)]
    return df.sort_values(["_o", *keys], kind="stable").drop(columns="_o")[cols].reset_index(drop=True)


# ---------------------------------------------------------------------------------------------
# The command
# ---------------------------------------------------------------------------------------------

HELP = """\
Print, before anything runs, what a config will ask of the models: per task x method x model the
instances, LLM calls, searches, tokens and cost, with the verifier's, Shapley's and the calibration's
calls where configured. No key and no network are needed.

  instances   drawn from the built datasets (--datasets) as the workflow draws them; without a
              dataset from the config: an upper bound, or unknown
  calls       from each method's call pattern (anachron/methods/*: call_pattern), with the
              assumptions below for what depends on the answers
  searches    search calls logged as tool calls (at most queries_max per instance); claim_searches:
              searches that date claims (TimeSPEC's supervisor, the corpus layer), not logged
  tokens      prompts rendered for a few instances, characters / 4 + 4 per message; completions at
              max_tokens x --completion-share (1 = upper bound)
  cost        tokens at the config's prices (key prices; local/ and mock/ models free; unknown without)

With --db (after a run), the estimate is set beside what results.duckdb recorded: calls, cache hits,
searches, tokens, and the cost spent (calls that were not cache hits) and of all calls.
"""


def add_estimate_parser(sub: Any) -> None:
    """Add the ``estimate`` subcommand to the ``anachron`` command's subparsers."""
    p = sub.add_parser("estimate", help="count instances, LLM calls, searches, tokens and cost of a config before it runs",
                       description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("config", nargs="?", default="config/config.yaml", help="config file (default: config/config.yaml)")
    p.add_argument("--datasets", default="results/datasets", help="directory of the built datasets (default: results/datasets)")
    p.add_argument("--db", default=None, help="after a run: compare with this results.duckdb (e.g. results/results.duckdb)")
    p.add_argument("--format", choices=("table", "csv", "json"), default="table", help="output format")
    p.add_argument("--by-step", action="store_true", help="one row per LLM call step instead of per run")
    d = Assumptions()
    p.add_argument("--claims", type=int, default=None, metavar="N",
                   help="assumed claims per answer (default: the method's max_evidence)")
    p.add_argument("--flagged-share", type=float, default=d.flagged_share, metavar="F",
                   help=f"assumed share of supervised instances regenerated (default {d.flagged_share})")
    p.add_argument("--retry-rate", type=float, default=d.retry_rate, metavar="F",
                   help=f"assumed share of answers asked again per retry round (default {d.retry_rate})")
    p.add_argument("--completion-share", type=float, default=d.completion_share, metavar="F",
                   help=f"assumed share of max_tokens an answer uses (default {d.completion_share}: upper bound)")
    p.set_defaults(func=cmd_estimate)


def _fmt(v: Any, usd: bool = False) -> str:
    """A number for the text table: ``?`` when unknown, dollars with cents (4 decimals below $1),
    counts whole or with one decimal (expected values)."""
    if is_null(v):
        return "?"
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return str(v)
    if usd:
        return f"{v:,.4f}" if abs(v) < 1 else f"{v:,.2f}"
    return f"{v:,.0f}" if float(v).is_integer() or abs(v) >= 100 else f"{v:,.1f}"


def _table(df: pd.DataFrame) -> str:
    """``df`` as a Markdown table with :func:`_fmt` numbers (all cells right-aligned as text)."""
    if not len(df):
        return "(no rows)\n"
    shown = df.astype(object).copy()
    for c in shown.columns:
        shown[c] = [_fmt(v, usd="cost" in c) for v in df[c]]
    return shown.to_markdown(index=False, disable_numparse=True) + "\n"


def cmd_estimate(args: argparse.Namespace) -> int:
    """The ``anachron estimate`` command (see :data:`HELP`)."""
    import yaml

    from anachron.config import load_config
    from anachron.errors import ConfigError

    for name in ("flagged_share", "retry_rate", "completion_share"):
        v = getattr(args, name)
        if not 0 <= v <= 1:
            print(f"anachron estimate: --{name.replace('_', '-')} must be between 0 and 1, got {v}", file=sys.stderr)
            return 2
    if args.claims is not None and args.claims < 0:
        print(f"anachron estimate: --claims must be >= 0, got {args.claims}", file=sys.stderr)
        return 2
    try:
        config = load_config(args.config)
        assume = Assumptions(args.claims, args.flagged_share, args.retry_rate, args.completion_share)
        est = estimate(config, args.datasets, assume)
    except (ConfigError, yaml.YAMLError) as exc:
        print(f"anachron estimate: {args.config}: {exc}", file=sys.stderr)
        return 2
    summary = summarize(est)
    table = est.steps if args.by_step else summary
    comparison, notes = None, list(est.notes)
    if args.db:
        from anachron.store import connect_readonly

        con = connect_readonly(args.db)
        try:
            actual, more = actual_usage(con, config)
        finally:
            con.close()
        notes += more
        comparison = compare(summary, actual)
    if args.format == "json":
        doc = {"config": str(args.config), "datasets": str(args.datasets), "assumptions": asdict(est.assumptions),
               "chars_per_token": CHARS_PER_TOKEN, "totals": totals(summary),
               "rows": json.loads(table.to_json(orient="records")), "notes": notes}
        if comparison is not None:
            doc["comparison"] = json.loads(comparison.to_json(orient="records"))
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
        return 0
    if args.format == "csv":
        sys.stdout.write((comparison if comparison is not None else table).to_csv(index=False))
        return 0
    a = est.assumptions
    claims = "the method's max_evidence" if a.claims_per_instance is None else a.claims_per_instance
    out = [f"Estimate of {args.config} (datasets: {args.datasets}); no model is called.",
           f"Assumptions: claims per answer {claims}; flagged share {a.flagged_share}; retry rate {a.retry_rate}; "
           f"completions at {a.completion_share:g} x max_tokens; prompt tokens = characters / {CHARS_PER_TOKEN:g} "
           f"+ {MESSAGE_TOKENS} per message, measured on {a.sample_rows} instances per task.", "", _table(table)]
    t = totals(summary)
    out.append("Total: " + ", ".join(f"{k.replace('_', ' ')} {_fmt(v)}" for k, v in t.items())
               + " (? = unknown; USD; completion tokens and cost are upper bounds at completion share 1)\n")
    if comparison is not None:
        out += [f"Estimate vs {args.db} (cost_spent: calls that were not cache hits; cost_all: every call):", "",
                _table(comparison)]
    out += [f"Note: {n}" for n in notes]
    sys.stdout.write("\n".join(out) + ("\n" if notes else ""))
    return 0
