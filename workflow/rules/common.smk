# Config validation (schema + defaults + cross-checks), readiness checks that must
# pass before any job starts, the endpoint probe and limits, wildcard constraints and
# input functions.

import sys
import time

from snakemake.exceptions import WorkflowError

from anachron.config import check_ready, edgar_enabled, model_spec, snapshot_dir, validate_config
from anachron.cost import model_prices
from anachron.errors import ConfigError, EndpointError
from anachron.llm.endpoints import check_endpoints, endpoint_limits, job_endpoints, resource_name
from anachron.llm.runtime import build_record, check_local_models, rebuild_hint
from anachron.logs import native_crash_logs
from anachron.methods.runner import failed_runs_summary, retry_param, retry_state_path
from anachron.methods.registry import retrieval_methods, supervised_methods
from anachron.sources.registry import SOURCES, source_params
from anachron.tasks.registry import get_task
from anachron.plan import PROBES, clean_runs, method_sample as run_sample, planned_runs, probe_runs, shapley_runs, split_variant
from anachron.report import REPORT_LAYOUT
from anachron.retrieval.corpus import corpus_tables

try:
    validate_config(config)  # against the package's schema: anachron/schemas/config.schema.yaml
except ConfigError as exc:
    raise WorkflowError(f"anachron configuration error:\n{exc}") from None

WORKFLOW_START = time.time()  # job logs written after this are this invocation's
TASKS = config["run"]["tasks"]
METHODS = config["run"]["methods"]
MODELS = config["run"]["models"]
SNAPSHOT_DIR = str(snapshot_dir(config) or "")
GENERIC_SOURCES = sorted(SOURCES)
# tasks whose verifier calibration plants claims (a task without a planter is left out, with a note in the log)
CALIBRATED_TASKS = [t for t in TASKS if get_task(t).has_planter()]
EDGAR = edgar_enabled(config)
# EDGAR facts are fetched when enabled and a configured task's grounded checks read them
EDGAR_USED = EDGAR and any("edgar" in get_task(t).grounding_inputs(edgar=True) for t in TASKS)


# every run_method job: (task, method, model); methods.<m>.tasks selects within run.tasks, and a
# probe variant <method>@<probe> (config key probes) is a run of its own (anachron.plan)
RUNS = planned_runs(config)
PROBE_RUNS = probe_runs(config)
# runs whose leaked answers are asked again without the leaked evidence (config key perf_clean)
CLEAN_RUNS = clean_runs(config)


wildcard_constraints:
    task="|".join(TASKS),
    method="|".join(sorted({m for _, m, _ in RUNS} | set(METHODS))),
    model="[A-Za-z0-9_.-]+",
    probe="|".join(PROBES),


# Shared endpoint limits (config key endpoints; docs/running.md#endpoints): one Snakemake global
# resource per listed endpoint (jobs of that endpoint at once), unless --resources sets it; then the
# smaller value is also the endpoint's concurrency inside the jobs (run_method reads config["endpoints"]).
for _env, _entry in config["endpoints"].items():
    _res = resource_name(_env)
    if _res in workflow.global_resources:
        _given = workflow.global_resources[_res].value
        if isinstance(_given, int) and _given >= 1:
            _entry["concurrency"] = min(_entry["concurrency"], _given)
    else:
        workflow.register_resource(_res, _entry["concurrency"])
ENDPOINT_LIMITS = endpoint_limits(config["endpoints"])
RETRIEVAL_METHODS = retrieval_methods()
SUPERVISED_METHODS = supervised_methods()


def job_model_specs(wildcards):
    """ModelSpecs a run_method job calls: its model, and the supervisor of a supervised method."""
    names = [wildcards.model]
    method = split_variant(wildcards.method)[0]
    if method in SUPERVISED_METHODS and config["methods"].get(method, {}).get("supervisor_model"):
        names.append(config["methods"][method]["supervisor_model"])
    return [model_spec(config, n) for n in names]


def _endpoint_job(env):
    return lambda wildcards: int(env in job_endpoints(job_model_specs(wildcards), ENDPOINT_LIMITS))


#: resources of run_method: resource name -> 1 when the job calls that endpoint, else 0. The calls
#: themselves share the endpoint's concurrency through lock files (anachron.llm.slots), so a job
#: running alone uses all of it; the resource only keeps more jobs than slots from starting.
ENDPOINT_RESOURCES = {resource_name(env): _endpoint_job(env) for env in ENDPOINT_LIMITS}


def method_threads(wildcards):
    """Cores of a run_method job: a local/ model's n_threads (2 when unset); 1 for endpoint and mock
    models, whose calls wait on the network, so that independent remote runs overlap."""
    local = [s.n_threads or 2 for s in job_model_specs(wildcards) if s.provider == "local"]
    return max(local, default=1)


def method_retry(wildcards):
    """The retry param of run_method (anachron.methods.runner.retry_param, from the run's retry state):
    changes once after a run with failed calls, so the next snakemake run re-runs exactly those runs."""
    return retry_param(retry_state_path(f"results/runs/{wildcards.task}/{wildcards.method}/{wildcards.model}.meta.json"))


def job_models(job):
    """Keys of the models a planned job calls: run_method its model and supervisor, shapley its
    model, verify_claims and calibrate_verifier the verifier (verify.model, when set)."""
    kind = job.rule.name
    if kind == "run_method":
        return [s.name for s in job_model_specs(job.wildcards)]
    if kind == "shapley":
        return [job.wildcards.model]
    if kind in ("verify_claims", "calibrate_verifier") and config["verify"]["model"]:
        return [config["verify"]["model"]]
    return []


onstart:
    # after the DAG is built, before any job (not on -n, not when nothing is to be done): can every
    # configured model and source be used here (keys and URLs set, model files present, the train
    # extra for tempo), is every endpoint that the planned jobs call answering, and does every local
    # model load and decode here? A dry run needs
    # neither, so `snakemake -n` shows the DAG on a machine without keys.
    try:
        check_ready(config)
    except ConfigError as exc:
        raise WorkflowError(f"anachron configuration error:\n{exc}") from None
    if config["probe_endpoints"]:
        _names = dict.fromkeys(n for job in workflow.dag.needrun_jobs() for n in job_models(job))
        _specs = [model_spec(config, n) for n in _names]
        try:
            for _note in check_endpoints(_specs):
                print(f"anachron: {_note}", file=sys.stderr)
        except EndpointError as exc:
            raise WorkflowError(f"anachron endpoint error:\n{exc}") from None
        # local/ models: load each and decode a few tokens in a child process (anachron.llm.runtime),
        # so a runtime that crashes on this CPU or a model file that is no model is one message here
        try:
            for _note in check_local_models(_specs):
                print(f"anachron: {_note}", file=sys.stderr)
        except ConfigError as exc:
            raise WorkflowError(f"anachron local model error:\n{exc}") from None


def report_failed_runs():
    """Print the runs of this config that finished with failed calls below run.max_failed_share."""
    text = failed_runs_summary(run_outputs("runs", "meta.json"))
    if text:
        print(text, file=sys.stderr)


onsuccess:
    report_failed_runs()


def report_native_crashes():
    """Name the job logs of this invocation that hold a native crash (faulthandler's report, written by
    anachron.logs.log_to), and for one inside the local model's runtime the rebuild command."""
    for path, line, in_llama in native_crash_logs("logs", since=WORKFLOW_START):
        print(f"anachron: a job died in native code ({line.strip()}); its Python stack is in {path}", file=sys.stderr)
        if in_llama:
            print(f"anachron: the crash is inside llama_cpp, the local model's runtime: {rebuild_hint(build_record())}", file=sys.stderr)


onerror:
    report_failed_runs()
    report_native_crashes()


def run_outputs(kind, suffix="parquet", runs=None):
    """Paths of one per-run output kind for every configured task x method x model (or ``runs``)."""
    return [f"results/{kind}/{t}/{m}/{mo}.{suffix}" for t, m, mo in (RUNS if runs is None else runs)]


def probe_inputs(wildcards):
    """Inputs of score_probe: the probe run's and its method's completions and scores, the probe's
    records, and the task's instances (to redraw the probe run's sample)."""
    method, probe = split_variant(wildcards.method)
    base = f"{wildcards.task}/{method}/{wildcards.model}"
    return {
        "base_run": f"results/runs/{base}.parquet",
        "base_scores": f"results/scores/{base}.parquet",
        "probe_run": f"results/runs/{wildcards.task}/{wildcards.method}/{wildcards.model}.parquet",
        "probe_scores": f"results/scores/{wildcards.task}/{wildcards.method}/{wildcards.model}.parquet",
        "records": f"results/datasets/probes/{wildcards.task}.{probe}.records.parquet",
        "instances": f"results/datasets/{wildcards.task}.parquet",
    }


def dataset_inputs(wildcards):
    """Raw inputs that build_dataset needs for a task (the task's dataset_inputs)."""
    return get_task(wildcards.task).dataset_inputs()


def corpus_inputs(wildcards):
    """Raw tables the corpus is built from: those of the sources the configured tasks read (EDGAR
    when enabled; dated news only from a snapshot, since no public live news archive exists: live
    runs can use the hosted search backend)."""
    used = set()
    for t in TASKS:
        used |= {*get_task(t).dataset_inputs().values(), *get_task(t).grounding_inputs(edgar=EDGAR).values()}
    return corpus_tables(used, news=bool(SNAPSHOT_DIR))


def run_instances(wildcards):
    """The instance table a run answers and is scored on: the task's, or for a probe run
    (<method>@<probe>) the probe's (rule probe_dataset)."""
    probe = split_variant(wildcards.method)[1]
    if probe is None:
        return f"results/datasets/{wildcards.task}.parquet"
    return f"results/datasets/probes/{wildcards.task}.{probe}.parquet"


def method_inputs(wildcards):
    """Inputs of run_method: the instances (a probe run also its probe's), the dataset check, the
    corpus for retrieval methods, and for tempo the trained adapter (GGUF for a local/ model, the
    PEFT directory otherwise)."""
    method, probe = split_variant(wildcards.method)
    inputs = {"instances": f"results/datasets/{wildcards.task}.parquet", "report": "results/datasets/report.md"}
    if probe is not None:
        inputs["probe"] = run_instances(wildcards)
    if method in RETRIEVAL_METHODS:
        inputs["index"] = "results/corpus/bm25"
        inputs["entities"] = "results/corpus/entities.parquet"
    if method == "tempo":
        local = config["models"][wildcards.model]["model"].startswith("local/")
        inputs["adapter"] = f"results/training/{wildcards.model}/{wildcards.task}/adapter" + (".gguf" if local else "")
    return inputs


#: (task, model) pairs that get a TEMPO adapter: every run of method tempo (and its probes).
TRAINING_RUNS = sorted({(t, mo) for t, m, mo in RUNS if split_variant(m)[0] == "tempo"})


def training_inputs(wildcards):
    """Inputs of train_tempo besides the instances: the base weights of a local/ model (exported
    from its GGUF; an openai/ model's models.<m>.hf_path is read in place, with a vocabulary-only GGUF
    for the rollouts' output grammar), the task's grounding data and the corpus index when the
    reward's verifier layers (verify.layers but llm) have corpus."""
    inputs = {**grounding_inputs(wildcards), **corpus_index_input([[x for x in config["verify"]["layers"] if x != "llm"]])}
    if config["models"][wildcards.model]["model"].startswith("local/") and not config["models"][wildcards.model].get("hf_path"):
        inputs["base"] = f"data/models/{wildcards.model}/base"
    elif config["training"]["grammar"] and not config["training"].get("grammar_vocab"):
        inputs["grammar_vocab"] = f"data/models/{wildcards.model}/vocab.gguf"
    return inputs


def method_sample(wildcards):
    """Instances per split for a task x method: run.sample[task], capped by methods.<m>.sample."""
    return run_sample(config, wildcards.task, wildcards.method)


def grounding_inputs(wildcards):
    """Point-in-time data the grounded verifier layer reads for a task (the task's grounding_inputs:
    stock and forecast: prices, S&P 500 changes and names, EDGAR company facts when enabled;
    salary and legal read their instances' own contract / decision records)."""
    return get_task(wildcards.task).grounding_inputs(edgar=EDGAR)


def corpus_index_input(layer_sets):
    """{"corpus_index": the BM25 index} when a layer set uses the corpus layer, else {}."""
    return {"corpus_index": "results/corpus/bm25"} if any("corpus" in ls for ls in layer_sets) else {}


def verifier_inputs(wildcards):
    """Inputs of verify_claims besides the run: the task's grounding_inputs, and the corpus index
    when verify.layers has corpus."""
    return {**grounding_inputs(wildcards), **corpus_index_input([config["verify"]["layers"]])}


def resolved_model(name):
    """A model's config with its key as ``name`` (what ModelSpec takes), or None."""
    return {"name": name, **config["models"][name]} if name else None


def method_params(wildcards):
    """A method's settings for run_method (a probe run: its method's): sample/tasks removed, the
    supervisor model resolved."""
    method = split_variant(wildcards.method)[0]
    block = config["methods"].get(method, {})
    out = {k: v for k, v in block.items() if k not in ("sample", "tasks")}
    if method in SUPERVISED_METHODS:
        out["supervisor_model"] = resolved_model(block.get("supervisor_model"))
    return out


# (task, method, model) runs whose claims get Shapley attributions (config key shapley)
SHAPLEY_RUNS = shapley_runs(config)


def calibration_inputs(wildcards):
    """Datasets of every task, the point-in-time data the grounded layer reads (the union of the
    tasks' grounding_inputs; the planters draw facts from it too), the dated news of a snapshot
    (real headlines the planters re-word), the Temporal Hint runs whose evidence wording the
    planted claims imitate, and the corpus index when a layer set uses the corpus layer."""
    inputs = {f"dataset_{t}": f"results/datasets/{t}.parquet" for t in CALIBRATED_TASKS}
    for t in CALIBRATED_TASKS:
        inputs.update(get_task(t).grounding_inputs(edgar=EDGAR))
    if SNAPSHOT_DIR and CALIBRATED_TASKS:
        inputs["news"] = "data/raw/news/data.parquet"
    for t, m, mo in RUNS:
        if m == "temporal_hint" and t in CALIBRATED_TASKS:
            inputs[f"run_{t}_{mo}"] = f"results/runs/{t}/{m}/{mo}.parquet"
    inputs.update(corpus_index_input(config["calibration"]["layer_sets"]))
    return inputs


def report_file(path, name, kind):
    """``path`` flagged for Snakemake's HTML report: caption ``report/{kind}/{name}.rst``, category by topic."""
    return report(
        path,
        caption=f"../report/{kind}/{name}.rst",
        category=REPORT_LAYOUT[name],
        subcategory=kind.capitalize(),
    )
