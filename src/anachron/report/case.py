"""Case study of one instance of a run, read from ``results.duckdb`` (what ``anachron show`` prints).

Like the appendix case studies of the TEMPO and TimeSPEC papers, it puts side by side what a
model said about one instance and what the verifier made of it:

* the run, the instance (split, cutoff date, inputs) and its label;
* every claim (table ``claims``: evidence items and claims found in the reasoning) with its
  declared date (as written and as parsed), effective date, verdict, deciding layer and reason,
  marked ``[LEAKED]``, ``[UNDATED]``, ``[AMBIGUOUS]`` or ``[ok]``, and whether the reasoning cites it;
* the reasoning, sentence by sentence, each ``[k]`` citation resolved to evidence item ``k``
  with the same parser that sets the ``cited`` flag behind Cov
  (:mod:`anachron.verify.citations`);
* prediction vs label, Perf, OLR and strict OLR, parse status (table ``instance_scores``);
* for retrieval methods the search calls (table ``tool_calls``) with their flag reasons; for
  every method the steps of its trace (``completions.trace``), the supervisor's verdicts in full
  for supervised methods; the instance's LLM calls (table ``llm_calls``).

:func:`case_study` builds a JSON-able document, :func:`case_text` renders it for a terminal of
:data:`WIDTH` columns; :func:`list_runs` / :func:`runs_text` list what can be shown. Everything
reads the tables and columns that exist: what an older database lacks is named in the document's
``missing`` list (with the command that rebuilds the database) instead of failing. A run or an
instance that is not there raises :class:`CaseError` with the runs or instances that are.
"""

from __future__ import annotations

import json
import textwrap
from typing import Any

from anachron.errors import AnachronError
from anachron.frames import is_nan
from anachron.methods.registry import retrieval_methods
from anachron.store import database_columns
from anachron.tables import PREDICTION_USABLE
from anachron.verify.citations import cited_in, split_sentences, strip_citations
from anachron.verify.features import norm_text

#: Columns of the text output.
WIDTH = 100
#: The command that rebuilds ``results.duckdb`` from the workflow's outputs (older database).
REBUILD = "snakemake --forcerun load_results"
#: The command that runs the workflow (a missing database or run).
BUILD = "snakemake --cores N"
#: The mark of each verdict in the text output.
MARKS = {"leaked": "[LEAKED]", "undated": "[UNDATED]", "ambiguous": "[AMBIGUOUS]", "clean": "[ok]"}
#: Other instances listed under a case study chosen by default.
OTHER_INSTANCES = 30

_SCORE_COLUMNS = ("instance_id", "split", "parse_status", "parsed", "n_claims", "n_leaked", "n_undated",
                  "n_ambiguous", "n_reasoning_claims", "n_reasoning_leaked", "olr", "olr_strict", "perf",
                  "n_evidence", "n_cited", "cov")
_CLAIM_COLUMNS = ("claim_id", "source", "evidence_id", "fact", "declared_date_raw", "declared_date", "date_status",
                  "date_rule", "effective_date", "cutoff_date", "category", "leaked", "verdict", "layer", "reason",
                  "cited", "declared_only")
_COMPLETION_COLUMNS = ("split", "cutoff_date", "completion", "finish_reason", "llm_error", "parse_status",
                       "parse_error", "evidence", "n_evidence_dropped", "reasoning", "prediction", "n_llm_calls", "trace")
_TOOL_COLUMNS = ("seq", "query", "mode", "returned", "consumed", "after_cutoff", "invalid_entities", "restatements",
                 "query_intent_after_cutoff", "error", "flag_reason")
_TRACE_SCORE_COLUMNS = ("n_calls", "tclr", "survivorship", "restatement", "query_intent")
_CALL_COLUMNS = ("step", "retry", "sample_index", "model", "prompt_tokens", "completion_tokens", "latency_s",
                 "cache_hit", "attempts", "error", "finish_reason", "started_at")
_RUN_COLUMNS = ("model_id", "knowledge_cutoff", "code_version", "n_instances", "n_llm_calls", "n_cache_hits",
                "n_tool_calls")
#: Trace-step fields not shown in the text (hashes; the claims are rendered apart).
_STEP_HIDDEN = ("step", "claims", "cache_key")


class CaseError(AnachronError):
    """A run or instance that the database does not hold; the message lists what it does hold."""


# ------------------------------------------------------------------------------------------------
# Reading what exists
# ------------------------------------------------------------------------------------------------


class _Reader:
    """Reads rows of the tables and columns a database has and notes each one asked for that it lacks."""

    def __init__(self, con: Any):
        self.con = con
        self.columns: dict[str, set[str]] = database_columns(con)
        self.missing: list[str] = []

    def _note(self, what: str) -> None:
        if what not in self.missing:
            self.missing.append(what)

    def has(self, table: str) -> bool:
        return table in self.columns

    def rows(self, table: str, columns: tuple[str, ...], where: dict[str, Any] | None = None,
             order: tuple[str, ...] = (), *, purpose: str = "") -> list[dict[str, Any]]:
        """Rows of ``table`` as dicts over ``columns`` (None for a column the table lacks), filtered by
        equality on ``where``; ``[]`` when the table (or a ``where`` column) is missing."""
        if table not in self.columns:
            self._note(f"table {table}" + (f" ({purpose})" if purpose else ""))
            return []
        have = self.columns[table]
        for c in (*columns, *(where or {})):
            if c not in have:
                self._note(f"column {table}.{c}")
        if any(c not in have for c in where or {}):
            return []
        cols = [c for c in columns if c in have]
        if not cols:
            return []
        sql = f'SELECT {", ".join(map(_quoted, cols))} FROM {_quoted(table)}'
        if where:
            sql += " WHERE " + " AND ".join(f"{_quoted(c)} = ?" for c in where)
        order = tuple(c for c in order if c in have)
        if order:
            sql += " ORDER BY " + ", ".join(map(_quoted, order))
        got = self.con.execute(sql, list((where or {}).values())).fetchall()
        return [{c: None for c in columns} | {c: _clean(v) for c, v in zip(cols, r)} for r in got]


def _quoted(name: str) -> str:
    """A SQL identifier in double quotes."""
    return '"' + name.replace('"', '""') + '"'


def _clean(v: Any) -> Any:
    """NaN as None (DuckDB may hold NaN for a score pandas wrote as NaN)."""
    return None if is_nan(v) else v


def _json(v: Any) -> Any:
    """A stored JSON document decoded; the text itself when it is not JSON; None stays None."""
    if not isinstance(v, str):
        return v
    try:
        return json.loads(v)
    except ValueError:
        return v


def _run_keys(reader: _Reader) -> list[tuple[str, str, str]]:
    """Every (task, method, model) with completions or instance scores, sorted."""
    keys: set[tuple[str, str, str]] = set()
    for table in ("instance_scores", "completions"):
        if reader.has(table) and {"task", "method", "model"} <= reader.columns[table]:
            keys |= set(reader.con.execute(f"SELECT DISTINCT task, method, model FROM {table}").fetchall())
    return sorted(keys)


def _spec(key: tuple[str, str, str]) -> str:
    return "/".join(key)


def _instance_rows(reader: _Reader, key: tuple[str, str, str]) -> list[dict[str, Any]]:
    """Per-instance scores of a run (``instance_scores``; ``completions`` when an older database has
    no scores), each with ``n_leaked_all``: its leaked claims, evidence and reasoning."""
    where = dict(zip(("task", "method", "model"), key))
    rows = reader.rows("instance_scores", _SCORE_COLUMNS, where, ("instance_id",), purpose="per-instance OLR, Perf, Cov")
    if not rows:
        rows = [{c: None for c in _SCORE_COLUMNS} | r
                for r in reader.rows("completions", ("instance_id", "split", "parse_status"), where, ("instance_id",))]
        for r in rows:
            r["parsed"] = r["parse_status"] in PREDICTION_USABLE
    for r in rows:
        r["n_leaked_all"] = None if r["n_leaked"] is None else r["n_leaked"] + (r["n_reasoning_leaked"] or 0)
    return rows


def _most_leaked(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The row with the most leaked claims; ties: the highest OLR, then the smallest id."""
    return min(rows, key=lambda r: (-(r["n_leaked_all"] or 0), -(r["olr"] if r["olr"] is not None else -1.0),
                                    str(r["instance_id"])))


def parse_run_spec(spec: str) -> tuple[str, str, str]:
    """``"task/method/model"`` as a tuple; :class:`CaseError` for anything else."""
    parts = spec.split("/")
    if len(parts) != 3 or not all(parts):
        raise CaseError(f"{spec!r} is not a run: write TASK/METHOD/MODEL, e.g. stock/rag/smollm2 "
                        "(`anachron show` without arguments lists the runs)")
    return parts[0], parts[1], parts[2]


def _no_run(key: tuple[str, str, str], db: str, runs: list[tuple[str, str, str]]) -> CaseError:
    there = ", ".join(_spec(k) for k in runs) if runs else "none"
    return CaseError(
        f"no run {_spec(key)} in {db}; runs there: {there}. To produce it, add the task to `tasks`, the method to "
        f"`run.methods` and the model to `run.models` in the config, and run `{BUILD}`"
    )


# ------------------------------------------------------------------------------------------------
# The list of runs
# ------------------------------------------------------------------------------------------------


def list_runs(con: Any) -> dict[str, Any]:
    """What ``anachron show`` can show: one entry per run.

    Returns:
        ``{"runs": [...], "missing": [...]}``; each run has ``task``, ``method``, ``model``,
        ``splits`` (split -> instances), ``n_instances``, ``parse_rate`` (share parsed with a usable
        prediction), ``mean_olr`` (over the instances of every split that have claims; None without),
        ``n_olr``, ``n_with_leak`` (instances with at least one leaked claim, evidence or reasoning)
        and ``command``. ``missing`` names the tables or columns an older database lacks.
    """
    reader = _Reader(con)
    out = []
    for key in _run_keys(reader):
        rows = _instance_rows(reader, key)
        splits: dict[str, int] = {}
        for r in rows:
            splits[str(r["split"])] = splits.get(str(r["split"]), 0) + 1
        olrs = [r["olr"] for r in rows if r["olr"] is not None]
        leaks = [r["n_leaked_all"] for r in rows if r["n_leaked_all"] is not None]
        out.append({"task": key[0], "method": key[1], "model": key[2], "splits": splits, "n_instances": len(rows),
                    "parse_rate": sum(bool(r["parsed"]) for r in rows) / len(rows) if rows else None,
                    "mean_olr": sum(olrs) / len(olrs) if olrs else None, "n_olr": len(olrs),
                    "n_with_leak": sum(n > 0 for n in leaks) if leaks else None,
                    "command": f"anachron show {_spec(key)}"})
    return {"runs": out, "missing": reader.missing}


def _split_rank(split: Any) -> tuple[int, str]:
    """Sort key of a split: eval, control, then the others by name."""
    return ({"eval": 0, "control": 1}.get(str(split), 2), str(split))


def _split_order(splits: set[str]) -> list[str]:
    return sorted(splits, key=_split_rank)


def runs_text(listing: dict[str, Any], db: str) -> str:
    """The text of :func:`list_runs`: a table of runs and example commands."""
    runs = listing["runs"]
    if not runs:
        return (f"No runs in {db}. Add tasks, `run.methods` and `run.models` to the config and run `{BUILD}`.\n"
                + _missing_text(listing["missing"]))
    splits = _split_order({s for r in runs for s in r["splits"]})
    head = ["run", *splits, "parse", "mean OLR", "with leak"]
    body = [[_spec((r["task"], r["method"], r["model"])), *(str(r["splits"].get(s, 0)) for s in splits),
             _pct(r["parse_rate"]), _num(r["mean_olr"]), "–" if r["n_with_leak"] is None else str(r["n_with_leak"])]
            for r in runs]
    widths = [max(len(row[i]) for row in [head, *body]) for i in range(len(head))]
    fmt = "  ".join(f"{{:{'<' if i == 0 else '>'}{w}}}" for i, w in enumerate(widths))
    lines = [*_wrap(f"Runs in {db}: instances per split, parse rate, mean OLR over all splits, "
                    "instances with a leaked claim.", "", ""), "", fmt.format(*head),
             fmt.format(*("-" * w for w in widths))]
    lines += [fmt.format(*row) for row in body]
    best = max(runs, key=lambda r: (r["n_with_leak"] or 0, r["mean_olr"] or 0.0))
    spec = _spec((best["task"], best["method"], best["model"]))
    examples = ((f"anachron show {spec}", "its most leaked instance"),
                (f"anachron show {spec} INSTANCE_ID", "a given instance"),
                (f"anachron show {spec} --format json", "as JSON"))
    w = max(len(c) for c, _ in examples)
    lines += ["", "Show one instance as a case study:", *(f"  {c:<{w}}  # {what}" for c, what in examples),
              "Main table and flagged search calls: anachron summary"]
    return "\n".join(lines) + "\n" + _missing_text(listing["missing"])


# ------------------------------------------------------------------------------------------------
# One instance
# ------------------------------------------------------------------------------------------------


def case_study(con: Any, task: str, method: str, model: str, instance_id: str | None = None,
               *, db: str = "results.duckdb") -> dict[str, Any]:
    """One instance of run ``task/method/model`` as a JSON-able document.

    Args:
        con: an open (read-only) connection to ``results.duckdb``.
        task, method, model: the run.
        instance_id: the instance; None picks the run's instance with the most leaked claims
            (evidence and reasoning; ties: the highest OLR, then the smallest id) and adds the
            run's other instances (``other_instances``) to choose from.
        db: the database's path, for messages.

    Returns:
        A dict with ``run``, ``instance`` (id, split, cutoff, inputs, label), ``chosen_by``,
        ``scores``, ``completion`` (parse status, prediction, raw answer), ``claims`` (each with
        ``mark``), ``reasoning`` (sentences with resolved ``cites``), ``retrieval`` (None for a method
        that does not search; ``available`` False without a ``tool_calls`` table), ``steps`` (the
        method's trace), ``supervised``, ``llm_calls`` (calls and totals), ``side_by_side`` (the
        answers of the run's probes on this instance beside its own, and its perf_clean; None
        without either), ``other_instances`` and ``missing`` (tables / columns the database lacks). Dates are ISO strings; absent values None.

    Raises:
        CaseError: the run, or the instance in the run, is not in the database.
    """
    reader = _Reader(con)
    key = (task, method, model)
    runs = _run_keys(reader)
    if key not in runs:
        raise _no_run(key, db, runs)
    rows = _instance_rows(reader, key)
    by_id = {r["instance_id"]: r for r in rows}
    if instance_id is None:
        score, chosen_by = _most_leaked(rows), "most leaked claims"
    elif instance_id in by_id:
        score, chosen_by = by_id[instance_id], "given"
    else:
        ids = sorted(by_id)
        shown = ", ".join(ids[:10]) + (f", ... ({len(ids)} in all)" if len(ids) > 10 else "")
        raise CaseError(f"no instance {instance_id!r} in run {_spec(key)} of {db}; its instances: {shown}. "
                        f"`anachron show {_spec(key)}` shows its most leaked one and lists the others")
    iid = score["instance_id"]
    where = {"task": task, "method": method, "model": model, "instance_id": iid}

    inst = next(iter(reader.rows("instances", ("split", "cutoff_date", "inputs", "label"),
                                 {"instance_id": iid}, purpose="inputs and label")), {})
    comp = next(iter(reader.rows("completions", _COMPLETION_COLUMNS, where, purpose="the model's answer")), {})
    meta = next(iter(reader.rows("runs", _RUN_COLUMNS, {"task": task, "method": method, "model": model})), {})
    claims = reader.rows("claims", _CLAIM_COLUMNS, where, ("claim_id",), purpose="verdicts")
    claims.sort(key=lambda c: (c["source"] != "evidence", _claim_order(c["claim_id"])))
    for c in claims:
        c["mark"] = MARKS.get(c["verdict"], f"[{str(c['verdict']).upper()}]")
    if not claims and not reader.has("claims"):
        claims = _claims_from_evidence(comp.get("evidence"))
    trace = _json(comp.get("trace")) or []
    steps = [s for s in trace if isinstance(s, dict)] if isinstance(trace, list) else []
    doc: dict[str, Any] = {
        "run": {"task": task, "method": method, "model": model, **meta},
        "instance": {"instance_id": iid, "split": score["split"] or comp.get("split") or inst.get("split"),
                     "cutoff_date": comp.get("cutoff_date") or inst.get("cutoff_date"),
                     "inputs": _json(inst.get("inputs")), "label": _json(inst.get("label"))},
        "chosen_by": chosen_by,
        "scores": {c: score.get(c) for c in _SCORE_COLUMNS if c not in ("instance_id", "split")}
        | {"n_leaked_all": score["n_leaked_all"]},
        "completion": {"parse_status": comp.get("parse_status", score["parse_status"]),
                       "parse_error": comp.get("parse_error"), "finish_reason": comp.get("finish_reason"),
                       "llm_error": comp.get("llm_error"), "n_evidence_dropped": comp.get("n_evidence_dropped"),
                       "n_llm_calls": comp.get("n_llm_calls"), "prediction": _json(comp.get("prediction")),
                       "text": comp.get("completion")},
        "claims": claims,
        "reasoning": _reasoning(comp.get("reasoning"), claims),
        "retrieval": None,
        "steps": steps,
        "supervised": any(s.get("step") in ("supervise", "resupervise") for s in steps),
        "llm_calls": _llm_calls(reader, where),
        "other_instances": [],
    }
    if method in retrieval_methods() or reader.has("tool_calls"):
        calls = reader.rows("tool_calls", _TOOL_COLUMNS, where, ("seq",), purpose="the retrieval trace")
        if calls or method in retrieval_methods():
            for c in calls:
                for k in ("returned", "consumed", "after_cutoff", "invalid_entities", "restatements"):
                    c[k] = _json(c[k])
            ts = next(iter(reader.rows("trace_scores", _TRACE_SCORE_COLUMNS, where))) if calls and reader.has(
                "trace_scores") else None
            doc["retrieval"] = {"n_calls": len(calls), "n_flagged": sum(c["flag_reason"] is not None for c in calls),
                                "scores": ts, "calls": calls, "available": reader.has("tool_calls")}
    if chosen_by != "given":
        others = sorted((r for r in rows if r["instance_id"] != iid),
                        key=lambda r: (_split_rank(r["split"]), -(r["n_leaked_all"] or 0), str(r["instance_id"])))
        doc["other_instances"] = [{k: r[k] for k in ("instance_id", "split", "n_leaked_all", "olr", "perf",
                                                     "parse_status")} for r in others]
    doc["side_by_side"] = _side_by_side(reader, task, method, model, iid, doc)
    doc["missing"] = reader.missing
    return doc


def _side_by_side(reader: _Reader, task: str, method: str, model: str, iid: str, doc: dict[str, Any]) -> dict[str, Any] | None:
    """The instance's answer beside its probe answers (``<method>@<probe>``) and its perf_clean
    (docs/metrics.md#probes); None when the run has neither (or the run is itself a probe run)."""
    if "@" in method:
        return None
    where = {"task": task, "method": method, "model": model, "instance_id": iid}
    clean = next(iter(reader.rows("clean_scores", ("perf_clean", "perf_clean_strict", "status", "status_strict", "n_leaked"),
                                  where)), None) if reader.has("clean_scores") else None
    pairs = reader.rows("probe_scores", ("probe", "status", "reason", "probe_cutoff_date", "perf_probe", "olr_probe",
                                         "prediction_changed", "reidentified", "reid_forms"), where, ("probe",)) \
        if reader.has("probe_scores") else []
    answers = []
    for pr in pairs:
        variant = {"task": task, "method": f"{method}@{pr['probe']}", "model": model, "instance_id": iid}
        comp = next(iter(reader.rows("completions", ("parse_status", "prediction", "reasoning", "cutoff_date"), variant)), {})
        answers.append({**pr, "reid_forms": _json(pr["reid_forms"]), "parse_status": comp.get("parse_status"),
                        "prediction": _json(comp.get("prediction")), "reasoning": comp.get("reasoning")})
    if clean is None and not answers:
        return None
    raw = {"probe": "raw", "status": "answered", "probe_cutoff_date": doc["instance"]["cutoff_date"],
           "perf_probe": doc["scores"].get("perf"), "olr_probe": doc["scores"].get("olr"),
           "parse_status": doc["completion"]["parse_status"], "prediction": doc["completion"]["prediction"],
           "reasoning": (doc["reasoning"] or {}).get("text") if isinstance(doc["reasoning"], dict) else None}
    return {"answers": [raw, *answers], "perf_clean": clean}


def _side_by_side_text(sbs: dict[str, Any]) -> list[str]:
    out = ["", "Side by side: the method's answer, its probes (same instance) and perf_clean:"]
    for a in sbs["answers"]:
        if a["status"] not in ("answered", "paired"):
            out += _wrap(f"{a['probe']:<11} {a['status']}: {a['reason'] or 'no reason recorded'}", " " * 14, "  ")
            continue
        notes = []
        if a.get("reidentified") is not None:
            notes.append("names the entity: " + (", ".join(a["reid_forms"] or []) if a["reidentified"] else "no"))
        if a.get("prediction_changed") is not None:
            notes.append("prediction changed: " + ("yes" if a["prediction_changed"] else "no"))
        line = (f"{a['probe']:<11} cutoff {a['probe_cutoff_date']}  parse {a['parse_status']}  prediction "
                f"{_compact(a['prediction'], 120)}  Perf {_num(a['perf_probe'])}  OLR {_num(a['olr_probe'])}")
        out += _wrap(line + ("; " + "; ".join(notes) if notes else ""), " " * 14, "  ")
        if a.get("reasoning") and a["probe"] != "raw":
            out += _wrap(f"reasoning: {_compact(a['reasoning'], 300)}", " " * 16, " " * 14)
    c = sbs["perf_clean"]
    if c is not None:
        out += _wrap(f"perf_clean {_num(c['perf_clean'])} ({c['status']}), strict {_num(c['perf_clean_strict'])} "
                     f"({c['status_strict']}): the prediction asked again without the {c['n_leaked'] or 0} leaked claim(s)",
                     " " * 14, "  ")
    return out


def _claim_order(claim_id: Any) -> tuple[int, int, str]:
    """Sort key of claim ids ``{instance}:{k}`` / ``{instance}:r{k}``: numerically by k."""
    tail = str(claim_id).rsplit(":", 1)[-1].lstrip("re")
    return (0, int(tail), "") if tail.isdigit() else (1, 0, str(claim_id))


def _claims_from_evidence(evidence: Any) -> list[dict[str, Any]]:
    """The completion's evidence items as unverified claims (a database without ``claims``)."""
    from anachron.verify.extract.rules import evidence_dicts

    items = _json(evidence)
    out = []
    for item in evidence_dicts(items if isinstance(items, list) else []):
        c = {k: None for k in _CLAIM_COLUMNS} | {"source": "evidence", "evidence_id": item["id"], "fact": item["fact"],
                                                  "declared_date_raw": item["source_date"]}
        c["mark"] = "[?]"
        out.append(c)
    return out


def _reasoning(text: Any, claims: list[dict[str, Any]]) -> dict[str, Any]:
    """The reasoning split into sentences (:func:`~anachron.verify.citations.split_sentences`), each
    with its citations resolved to evidence claims (:func:`~anachron.verify.citations.cited_in`, the
    parser behind the ``cited`` flag and Cov) and the reasoning claims stated in it."""
    if not isinstance(text, str) or not text.strip():
        return {"text": text, "sentences": []}
    evidence = {c["evidence_id"]: c for c in claims if c["source"] == "evidence" and c["evidence_id"] is not None}
    stated = {norm_text(str(c["fact"])): c for c in claims if c["source"] == "reasoning"}
    sentences = []
    for s in split_sentences(text):
        cites = []
        for k in cited_in(s):
            c = evidence.get(k)
            cites.append({"id": k, "claim_id": c["claim_id"] if c else None, "fact": c["fact"] if c else None,
                          "verdict": c["verdict"] if c else None, "mark": c["mark"] if c else None})
        own = stated.get(norm_text(strip_citations(s)))
        sentences.append({"text": s, "cites": cites, "claim_id": own["claim_id"] if own else None,
                          "mark": own["mark"] if own else None})
    return {"text": text, "sentences": sentences}


def _llm_calls(reader: _Reader, where: dict[str, Any]) -> dict[str, Any]:
    """The instance's LLM calls (``llm_calls`` keys the model as ``model_key``) and their totals."""
    w = {"task": where["task"], "method": where["method"], "model_key": where["model"],
         "instance_id": where["instance_id"]}
    calls = reader.rows("llm_calls", _CALL_COLUMNS, w, ("started_at",), purpose="LLM calls")

    def total(col: str) -> float:
        return sum(c[col] or 0 for c in calls)

    return {"calls": calls, "n_calls": len(calls), "prompt_tokens": int(total("prompt_tokens")),
            "completion_tokens": int(total("completion_tokens")), "latency_s": total("latency_s"),
            "n_cache_hits": sum(bool(c["cache_hit"]) for c in calls)}


# ------------------------------------------------------------------------------------------------
# Text
# ------------------------------------------------------------------------------------------------


def _num(v: Any, spec: str = ".3f") -> str:
    return "–" if v is None else format(v, spec)


def _pct(v: Any) -> str:
    return "–" if v is None else f"{100 * v:.0f}%"


def _compact(v: Any, limit: int = 400) -> str:
    """A value on one line: strings as they are, other values as compact JSON; cut at ``limit``."""
    s = v if isinstance(v, str) else json.dumps(v, ensure_ascii=False, separators=(", ", ": "))
    s = " ".join(s.split())
    return s if len(s) <= limit else s[: limit - 1] + "…"


def _wrap(text: str, indent: str, first: str | None = None) -> list[str]:
    """``text`` wrapped to :data:`WIDTH` columns, ``first`` (default ``indent``) before line one."""
    return textwrap.wrap(text, WIDTH, initial_indent=indent if first is None else first, subsequent_indent=indent,
                         break_long_words=False, break_on_hyphens=False) or [(first or indent).rstrip()]


def _missing_text(missing: list[str]) -> str:
    """What the database lacks, and the command that rebuilds it (on a line of its own)."""
    if not missing:
        return ""
    lines = _wrap(f"Not in this database (written by an older anachron?): {'; '.join(missing)}.", "  ", "")
    return "\n".join([*lines, f"  Rebuild it from the run outputs with this version: {REBUILD}"]) + "\n"


def _claim_lines(c: dict[str, Any], cutoff: Any) -> list[str]:
    where = "evidence" if c["source"] == "evidence" else "reasoning"
    ref = f"#{c['evidence_id']}" if c["evidence_id"] is not None else (str(c["claim_id"] or "").rsplit(":", 1)[-1])
    cited = ", cited" if c["cited"] else (", not cited" if c["source"] == "evidence" and c["cited"] is not None else "")
    cat = f" {c['category']}" if c["category"] else ""
    pad = " " * 14
    out = _wrap(f"{where} {ref}{cited}{cat}: {c['fact']}", pad, f"  {c['mark']:<12}")
    raw, parsed = c["declared_date_raw"], c["declared_date"]
    if c["verdict"] is None:  # an evidence item of a database without claims
        return [*out, *_wrap(f"declared {raw or 'none'} (as written); not verified", pad)]
    if raw is None and parsed is None:
        declared = "none"
    else:
        declared = str(parsed) if raw == parsed or raw is None else f"{raw!r} -> {parsed or 'unparsed'}"
    if c["date_status"] and c["date_status"] not in ("exact",):
        declared += f" ({c['date_status']}{', ' + c['date_rule'] if c['date_rule'] else ''})"
    dates = f"declared {declared}; effective {c['effective_date'] or 'none'}; cutoff {c['cutoff_date'] or cutoff}"
    if c["declared_only"]:
        dates += "; dated by the declared date alone"
    out += _wrap(dates, pad)
    if c["layer"] or c["reason"]:
        by = f" by the {c['layer']} layer" if c["layer"] not in (None, "none") else ""
        out += _wrap(f"{c['verdict']}{by}: {c['reason'] or 'no reason given'}", pad)
    return out


def _step_line(k: int, s: dict[str, Any]) -> list[str]:
    fields = ", ".join(f"{key} {_compact(v, 120)}" for key, v in s.items() if key not in _STEP_HIDDEN and v is not None)
    lines = _wrap(f"{s.get('step', '?')}" + (f": {fields}" if fields else ""), "      ", f"  {k:>2}. ")
    for c in s.get("claims") or []:
        mark = "[FLAGGED]" if c.get("flagged") else "[kept]"
        cached = " (cached)" if c.get("cached") else ""
        date = f"dated {c['effective_date']} by {c.get('how')}" if c.get("effective_date") else f"not dated ({c.get('how')})"
        lines += _wrap(f"{c.get('source', '')} {c.get('category') or ''}: {c.get('text')}", " " * 17, f"      {mark:<11}")
        lines += _wrap(f"{date}{cached}: {c.get('reason')}", " " * 17)
    return lines


def case_text(doc: dict[str, Any]) -> str:
    """The text of a :func:`case_study` document, lines of at most :data:`WIDTH` columns where the
    content allows (a single long token, such as a document id, is never broken)."""
    run, inst, sc, comp = doc["run"], doc["instance"], doc["scores"], doc["completion"]
    spec = _spec((run["task"], run["method"], run["model"]))
    cutoff = inst["cutoff_date"]
    out = _wrap(f"Case study: {spec}, instance {inst['instance_id']} ({inst['split']} split)", "  ", "")
    if doc["chosen_by"] != "given":
        why = (f"the run's instance with the most leaked claims ({sc['n_leaked_all']})" if sc["n_leaked_all"]
               else "no instance of the run has a leaked claim: the first by OLR, then id")
        out += _wrap(f"chosen by default, {why}; the other instances are listed at the end", "  ")
    model = f"model {run.get('model_id') or run['model']}"
    if run.get("knowledge_cutoff"):
        model += f" (knowledge cutoff {run['knowledge_cutoff']})"
    out += [f"Cutoff date: {cutoff}   {model}"]
    if doc["missing"]:
        out += _missing_text(doc["missing"]).rstrip("\n").split("\n")
    if isinstance(inst["inputs"], dict):
        out += ["", "Input:"]
        for k, v in inst["inputs"].items():
            out += _wrap(f"{k}: {_compact(v, 300)}", "      ", "  ")
    out += ["", "Result:"]
    status = comp["parse_status"] or "no completion"
    out += _wrap(f"parse {status}" + (f" ({comp['parse_error']})" if comp["parse_error"] else "")
                 + (f"; LLM error: {comp['llm_error']}" if comp["llm_error"] else ""), "      ", "  ")
    out += _wrap(f"prediction: {_compact(comp['prediction'], 300)}", "      ", "  ")
    label = inst["label"]
    out += _wrap(f"truth (label): {_compact(label, 300) if label is not None else 'not in this database'}", "      ", "  ")
    out += _wrap(f"Perf {_num(sc['perf'])}   OLR {_num(sc['olr'])}   strict OLR {_num(sc['olr_strict'])}   "
                 f"Cov {_num(sc['cov'])}   claims: {sc['n_claims'] if sc['n_claims'] is not None else '–'} evidence "
                 f"({sc['n_leaked'] if sc['n_leaked'] is not None else '–'} leaked, {sc['n_undated'] or 0} undated, "
                 f"{sc['n_ambiguous'] or 0} ambiguous), {sc['n_reasoning_claims'] or 0} in the reasoning "
                 f"({sc['n_reasoning_leaked'] or 0} leaked)", "  ", "  ")
    if status not in PREDICTION_USABLE and comp["text"]:
        out += _wrap(f"raw answer: {_compact(comp['text'], 600)}", "      ", "  ")

    claims = doc["claims"]
    out += ["", f"Claims ({len(claims)}; [LEAKED] after the cutoff, [UNDATED] no usable date, "
                "[AMBIGUOUS] straddles the cutoff):"]
    if not claims:
        out += ["  none" + ("" if status in PREDICTION_USABLE or status == "invalid_prediction"
                            else f" (the answer did not parse: {status})")]
    for c in claims:
        out += _claim_lines(c, cutoff)
    if comp["n_evidence_dropped"]:
        out += [f"  ({comp['n_evidence_dropped']} evidence item(s) dropped as repeats or placeholders)"]

    out += ["", "Reasoning (citations [k] resolved to evidence #k):"]
    if not doc["reasoning"]["sentences"]:
        out += ["  none"]
    for s in doc["reasoning"]["sentences"]:
        first = f"  {s['mark']:<12}" if s["mark"] else "  " + " " * 12
        out += _wrap(s["text"], " " * 14, first)
        for c in s["cites"]:
            got = f"{c['mark']} {c['fact']}" if c["claim_id"] else "no evidence item with this id"
            out += _wrap(f"[{c['id']}] -> {got}", " " * 22, " " * 16)

    ret = doc["retrieval"]
    if ret is not None and not ret["available"]:
        out += ["", "Retrieval trace: not in this database (table tool_calls)"]
    elif ret is not None:
        out += ["", f"Retrieval trace ({ret['n_calls']} search calls, {ret['n_flagged']} flagged):"]
        if ret["scores"]:
            t = ret["scores"]
            out += [f"  TCLR {_num(t['tclr'])}   survivorship {_num(t['survivorship'])}   "
                    f"restatement {_num(t['restatement'])}   query intent {_num(t['query_intent'])}"]
        for c in ret["calls"]:
            out += _wrap(f"query {c['query']!r} (mode {c['mode']})", "        ", f"  #{c['seq']:<3} ")
            returned, consumed = c["returned"] or [], c["consumed"] or []
            unread = [d for d in returned if d not in consumed]
            docs = f"consumed {len(consumed)} of {len(returned)} returned: {', '.join(map(str, consumed)) or 'none'}"
            out += _wrap(docs + (f"; not consumed: {', '.join(map(str, unread))}" if unread else ""), " " * 10, "        ")
            if c["error"]:
                out += _wrap(f"error: {c['error']}", " " * 10, "        ")
            if c["flag_reason"]:
                out += _wrap(f"FLAGGED: {c['flag_reason']}", " " * 10, "        ")

    if doc.get("side_by_side"):
        out += _side_by_side_text(doc["side_by_side"])

    if doc["steps"]:
        title = "Method steps (the supervisor's verdicts under supervise)" if doc["supervised"] else "Method steps"
        out += ["", f"{title}:"]
        for k, s in enumerate(doc["steps"], start=1):
            out += _step_line(k, s)

    calls = doc["llm_calls"]
    out += ["", f"LLM calls ({calls['n_calls']}; {calls['prompt_tokens']} prompt + {calls['completion_tokens']} "
                f"completion tokens; cache hits {calls['n_cache_hits']}; {calls['latency_s']:.1f} s):"]
    if any(c["step"] == "shapley" for c in calls["calls"]):
        out += ["  (shapley: calls of the Shapley-DCLR attribution of the claims, not of the method)"]
    for c in calls["calls"]:
        extra = "".join(f"; {k} {c[k]}" for k in ("retry", "error") if c[k])
        extra += f"; {c['attempts']} attempts" if (c["attempts"] or 0) > 1 else ""
        out += [f"  {str(c['step']):<12} {c['prompt_tokens'] or 0:>7} + {c['completion_tokens'] or 0:<6} tokens "
                f"{c['latency_s'] or 0:>7.1f} s  {'cache hit' if c['cache_hit'] else 'called'}{extra}"]

    if doc["other_instances"]:
        others = doc["other_instances"]
        out += ["", *_wrap(f"Other instances of {spec} ({len(others)}); show one: anachron show {spec} INSTANCE_ID",
                           "  ", "")]
        w = max(len("instance"), *(len(str(r["instance_id"])) for r in others[:OTHER_INSTANCES]))
        out += [f"  {'instance':<{w}}  {'split':<8} {'leaked':>6} {'OLR':>6} {'Perf':>6}  parse"]
        for r in others[:OTHER_INSTANCES]:
            out += [f"  {str(r['instance_id']):<{w}}  {str(r['split']):<8} "
                    f"{'–' if r['n_leaked_all'] is None else r['n_leaked_all']:>6} {_num(r['olr']):>6} "
                    f"{_num(r['perf']):>6}  {r['parse_status']}"]
        if len(others) > OTHER_INSTANCES:
            out += [f"  ... and {len(others) - OTHER_INSTANCES} more (--format json lists all)"]
    return "\n".join(out) + "\n"
