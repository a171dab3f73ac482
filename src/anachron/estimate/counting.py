"""The count of a config before it runs: instances, LLM calls, searches, tokens and cost per step.

:func:`estimate` gives one row per task x stage x method x model x step (:data:`STEP_COLUMNS`) and the
searches per run; :func:`summarize` adds them up per run (:data:`SUMMARY_COLUMNS`). What is counted
and how: :mod:`anachron.estimate` and docs/running.md#estimate.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

import pandas as pd

from anachron.plan import clean_runs, method_sample, planned_runs, shapley_runs, split_variant
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

    method = split_variant(ctx.method)[0]  # a probe run calls as its method does
    settings = ctx.config["methods"].get(method, {})
    pattern = get_call_pattern(method, settings)
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


def _resample(ctx: _Ctx, sample: int | None) -> float | None:
    """Instances a rule that samples a run's answers again (shapley, perf_clean) reads: ``sample``
    per split of the run's own instances (nested, :func:`anachron.methods.runner.sample_instances`);
    ``ctx.inst`` becomes that sample. Without a dataset: at most ``sample`` per configured split."""
    from anachron.methods.runner import sample_instances

    rows = ctx.inst.rows
    if rows is not None:
        chosen = sample_instances(rows, sorted(rows["split"].unique()), sample, int(ctx.config["seed"]))
        ctx.inst = Instances(len(chosen), ctx.inst.basis, chosen)
        return len(chosen)
    if ctx.inst.n is not None and sample is not None:
        return min(ctx.inst.n, sample * len(ctx.config["run"]["splits"]))
    return ctx.inst.n


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
    n = _resample(ctx, cfg["sample"])
    step = Step("shapley", lambda task, row, facts: value_request(task, row, list(facts), {}).messages)
    limit = int(cfg["max_tokens"])
    return [_row(ctx, step, ctx.model, None if n is None else n * per, placeholder_facts(claims // 2), limit, n)]


def _clean_rows(ctx: _Ctx, claims: int) -> list[dict[str, Any]]:
    """Step rows of rule perf_clean for one run: ``perf_clean.sample`` instances per split, at most two
    closed-world calls each (one without the leaked claims, one with the verified-clean claims only;
    fewer where no claim leaked or both lists are equal), prompts with half the claims."""
    from anachron.attribution.clean import STEP
    from anachron.attribution.shapley import value_request

    cfg = ctx.config["perf_clean"]
    n = _resample(ctx, cfg["sample"])
    step = Step(STEP, lambda task, row, facts: value_request(task, row, list(facts), {}).messages)
    return [_row(ctx, step, ctx.model, None if n is None else 2 * n, placeholder_facts(claims // 2), int(cfg["max_tokens"]), n)]


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
    clean = set(clean_runs(config))
    order = {t: i for i, t in enumerate(tasks)}
    for task, method, model in sorted(planned_runs(config), key=lambda r: order[r[0]]):
        inst = run_instances(config, task, method, data[task])
        claims = assume.claims_per_instance
        if claims is None:
            claims = int(config["methods"].get(split_variant(method)[0], {}).get("max_evidence", 10))
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
        if (task, method, model) in clean:
            cctx = _Ctx(config, prices, assume, task, "perf_clean", method, model, inst, sample, notes=notes)
            rows += _clean_rows(cctx, claims)
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
