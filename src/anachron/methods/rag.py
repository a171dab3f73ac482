"""RAG: model-written search queries, date-filtered retrieval, passages prepended to the prompt.

Follows the TEMPO paper's RAG baseline (App. F.2, query prompt structure App. I.2) and
docs/methods.md#rag:

1. **Query generation** — one LLM call (a single user message) gets the task's user prompt
   and the cutoff date and returns a JSON array ``[{"query": ...}, ...]`` of as many queries
   as the task's :attr:`~anachron.tasks.base.Task.rag_query_counts` (7–12 for the stock task,
   3–6 otherwise), each naming the year. When the answer is unusable (LLM error, not JSON,
   not a list, too few distinct queries with words) a deterministic fallback builds the
   queries from the instance's entities (:meth:`Task.entities`), the task's
   :attr:`~anachron.tasks.base.Task.rag_query_aspects` and the cutoff year. Which path was
   taken is recorded in the trace.
2. **Search** — every query goes to a :class:`~anachron.retrieval.search.SearchBackend` with
   ``as_of=cutoff`` (mode ``"enforced"``: hard date filter) or ``as_of=None`` (mode
   ``"unrestricted"``, the Anachron v0 "Mode A"), up to ``results_per_query`` hits each.
   An empty query, a query not in English, or a backend error is logged as a tool call
   with its ``error`` and the method goes on with the results it has.
3. **Context** — hits are deduplicated by ``doc_id`` and taken in relevance order (rank 1 of
   every query in query order, then rank 2, ...), until ``token_budget * chars_per_token``
   characters of passages are used (the passage that crosses the budget is cut at a word
   boundary). Passages are numbered ``[k] title — snippet`` and carry **no dates**.
4. **Generation** — the task's own system prompt, unchanged, and its user message with the
   passages block prepended; otherwise exactly the Temporal Hint request.

Every search call becomes one row of the tool-call log (:data:`~anachron.tables.TOOL_CALL_COLUMNS`), from
which :mod:`anachron.metrics.traces` computes TCLR, survivorship, restatement and
query-intent leakage (Anachron v0 scorer; docs/metrics.md#trace-metrics).
"""

from __future__ import annotations

import datetime as dt
import logging
import re
import unicodedata
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

import pandas as pd

from anachron.dates import to_date
from anachron.errors import ConfigError
from anachron.llm.client import LLMClient
from anachron.llm.decode import EMPTY_ANSWER, decode_json
from anachron.llm.types import ChatRequest, ChatResult
from anachron.methods.base import PARSE_RETRIES, MethodResult, generate_and_parse, generation_request
from anachron.methods.pattern import CallPattern, Render, Step
from anachron.methods.registry import register_method
from anachron.retrieval.trace import EntityValidityLike, score_call
from anachron.progress import track
from anachron.tables import TOOL_CALL_COLUMNS
from anachron.tasks.base import Task, instance_inputs
from anachron.tasks.registry import get_task
from anachron.verify.dates import find_periods

if TYPE_CHECKING:  # pragma: no cover - typing only
    from anachron.retrieval.search import SearchBackend

log = logging.getLogger(__name__)

MODES = ("enforced", "unrestricted")
#: Method names of the two modes (config keys under ``methods``).
METHOD_NAMES = {"enforced": "rag", "unrestricted": "rag_unrestricted"}
#: Header line of the passages block (neutral: no dates, no validity framing, no guidance).
PASSAGES_HEADER = "Search results:"
#: A cut passage keeps at least this many characters; with less room left it is dropped.
MIN_PARTIAL_CHARS = 40


# ---------------------------------------------------------------------------------------------
# Query generation
# ---------------------------------------------------------------------------------------------


def query_count_range(task: Task | str, queries_min: int | None = None, queries_max: int | None = None) -> tuple[int, int]:
    """``(min, max)`` number of queries for a task (a Task or its registered name): its
    :attr:`~anachron.tasks.base.Task.rag_query_counts` (7–12 for stock, 3–6 otherwise); overrides win.

    Raises:
        ConfigError: when a bound is below 1 or ``min > max``, or for an unknown task name.
    """
    lo, hi = (get_task(task) if isinstance(task, str) else task).rag_query_counts
    lo = lo if queries_min is None else int(queries_min)
    hi = hi if queries_max is None else int(queries_max)
    if lo < 1 or hi < lo:
        raise ConfigError(f"rag: need 1 <= queries_min <= queries_max, got queries_min={lo}, queries_max={hi}")
    return lo, hi


def query_schema(queries_min: int, queries_max: int) -> dict[str, Any]:
    """JSON Schema of the query-generation answer: an array of ``{"query": str}`` objects."""
    return {
        "type": "array",
        "items": {
            "type": "object",
            "properties": {"query": {"type": "string", "maxLength": 200}},
            "required": ["query"],
        },
        "minItems": queries_min,
        "maxItems": queries_max,
    }


def _user_content(messages: list[dict[str, Any]]) -> str:
    users = [m for m in messages if m.get("role") == "user"]
    return str(users[-1]["content"]) if users else ""


def query_prompt(task: Task, row: pd.Series | dict[str, Any], queries_min: int, queries_max: int) -> str:
    """The query-generation prompt (one user message; structure of TEMPO App. I.2, own wording).

    It carries the cutoff date and the task's user prompt, asks for ``queries_min`` to
    ``queries_max`` queries on distinct aspects, each with the year, as a JSON array.
    """
    return (
        "You write web search queries that collect background evidence for an analysis task. "
        f"The analysis is done as of {row['cutoff_date']}: only material published on or before that "
        "date may be used.\n\n"
        f"AS-OF DATE: {row['cutoff_date']}\n"
        f"TASK (as the analyst sees it):\n{_user_content(task.messages(row))}\n\n"
        f"Write from {queries_min} to {queries_max} search queries. Let each one look for a different "
        "piece of information the analyst would need, and put the year in every query so that results "
        'are anchored in time. Reply with a JSON array only: [{"query": "..."}, {"query": "..."}]'
    )


@dataclass
class QueryPlan:
    """The queries an instance searches with, and where they came from.

    ``source`` is ``"model"`` or ``"fallback"``; ``reason`` says why the model's answer was not
    used (``llm_error``, ``not_json``, ``not_a_list``, ``empty``, ``too_few`` — fewer than the
    minimum of distinct queries with words) or, for a model
    plan, ``"truncated"`` when it wrote more than the maximum (else None). ``n_model`` counts
    the query strings found in the model's answer (0 when it had none).
    """

    queries: list[str]
    source: str
    reason: str | None
    n_model: int


def _has_words(query: str) -> bool:
    """True when ``query`` has a word of at least two letters (a bare date or number is no query)."""
    return re.search(r"[^\W\d_]{2,}", query) is not None


def parse_queries(text: str, queries_min: int, queries_max: int) -> tuple[list[str] | None, str | None, int]:
    """Read the model's query list (never raises).

    Accepts a JSON array of ``{"query": str}`` objects or of strings, or an object with a
    ``queries`` array (else its first array), also inside a fenced block or surrounded by text
    (:func:`~anachron.llm.decode.decode_json`). Queries are
    whitespace-normalised; repeated non-empty queries (case-insensitive) are dropped; empty
    queries are kept (they are logged as failed calls). The answer is usable when at least
    ``queries_min`` distinct queries contain a word (two or more letters): a list of bare
    dates or numbers is "too_few". The list is cut to ``queries_max``.

    Returns:
        ``(queries, reason, n_found)``: ``queries`` is None when the answer is unusable, with
        ``reason`` in {``not_json``, ``not_a_list``, ``empty``, ``too_few``}; otherwise
        ``reason`` is ``"truncated"`` when queries were cut, else None.
    """
    decoded = decode_json(text, list, ("queries",))
    if decoded.value is None:
        if decoded.problem == EMPTY_ANSWER:
            return None, "empty", 0
        return None, ("not_a_list" if decoded.found_json else "not_json"), 0
    data = decoded.value
    found: list[str] = []
    for item in data:
        q = item.get("query") if isinstance(item, dict) else item
        if isinstance(q, str):
            found.append(" ".join(q.split()))
    if not found:
        return None, "empty", 0
    seen: set[str] = set()
    queries: list[str] = []
    for q in found:
        key = q.lower()
        if q and key in seen:
            continue
        seen.add(key)
        queries.append(q)
    n_contentful = sum(1 for q in queries if _has_words(q))
    if n_contentful < queries_min:
        return None, "too_few", len(found)
    reason = None
    if len(queries) > queries_max:
        queries, reason = queries[:queries_max], "truncated"
    return queries, reason, len(found)


#: Entity keys used by the fallback, most identifying first.
_SUBJECT_KEYS = ("players", "case_name", "parties", "names", "tickers", "series")


def _fallback_subjects(task: Task, row: pd.Series | dict[str, Any]) -> list[str]:
    ents = task.entities(row) or {}
    subjects: list[str] = []

    def add(s: Any) -> None:
        s = " ".join(str(s or "").split())
        if s and s.lower() not in {x.lower() for x in subjects}:
            subjects.append(s)

    names, tickers = list(ents.get("names") or []), list(ents.get("tickers") or [])
    if names and len(names) == len(tickers):
        for n, t in zip(names, tickers):
            add(f"{n} {t}")
        ents = {k: v for k, v in ents.items() if k not in ("names", "tickers")}
    for key in _SUBJECT_KEYS:
        for v in ents.get(key) or []:
            add(v)
    if not subjects:
        try:
            add(instance_inputs(row).get("question", ""))
        except (KeyError, TypeError, ValueError):
            pass
    if not subjects:  # last resort: the first line of the task's user message
        first = next((ln for ln in _user_content(task.messages(row)).splitlines() if ln.strip()), task.name)
        add(first[:100])
    return [s[:150] for s in subjects]


def fallback_queries(task: Task, row: pd.Series | dict[str, Any], queries_min: int, queries_max: int) -> list[str]:
    """Deterministic queries from the instance's entities and the cutoff year.

    Subjects come from :meth:`Task.entities` (stock: "name ticker" per company; salary: the
    player; legal: the case name, then the parties; otherwise tickers, series, or the
    question), each combined with the task's :attr:`~anachron.tasks.base.Task.rag_query_aspects`
    ("{subject} quarterly earnings {year}", ...) aspect by aspect, so the first queries cover
    every subject. Returns
    ``queries_max`` queries when that many combinations exist (at least ``queries_min`` is
    the aim; fewer only when subjects x aspects is smaller).
    """
    year = str(row["cutoff_date"])[:4]
    out: list[str] = []
    for aspect in task.rag_query_aspects:
        for s in _fallback_subjects(task, row):
            out.append(aspect.format(s=s, y=year))
            if len(out) >= queries_max:
                return out
    return out


def plan_queries(
    task: Task, row: pd.Series | dict[str, Any], result: ChatResult, queries_min: int, queries_max: int
) -> QueryPlan:
    """The model's queries when usable, else the deterministic fallback (reason recorded)."""
    if not result.ok:
        return QueryPlan(fallback_queries(task, row, queries_min, queries_max), "fallback", "llm_error", 0)
    queries, reason, n_found = parse_queries(result.text, queries_min, queries_max)
    if queries is None:
        return QueryPlan(fallback_queries(task, row, queries_min, queries_max), "fallback", reason, n_found)
    return QueryPlan(queries, "model", reason, n_found)


# ---------------------------------------------------------------------------------------------
# Query checks
# ---------------------------------------------------------------------------------------------

#: Function words of other languages that do not occur in English queries or common names.
_FOREIGN_WORDS = frozenset(
    "los las para con una por que qué cómo año noticias empresa acciones precio und der das mit für "
    "nicht nachrichten aktie aktien jahr les une pour avec dans sur année prix entreprise résultats "
    "della che anno notizie het een voor jaar".split()
)
_ENGLISH_WORDS = frozenset("the of and in for on to with a an is by at from about vs v news".split())


def query_problem(query: str) -> str | None:
    """Why a query is not searched, or None when it is fine.

    ``"empty query"`` for blank text; ``"query not in English: ..."`` when most letters are
    not Latin script, or when it has at least two function words of another language and no
    English ones (a heuristic tuned to leave company, player and case names alone).
    """
    if not query or not query.strip():
        return "empty query"
    letters = [c for c in query if c.isalpha()]
    if letters:
        non_latin = sum(1 for c in letters if not unicodedata.name(c, "").startswith("LATIN"))
        if non_latin / len(letters) > 0.5:
            return "query not in English: mostly non-Latin script"
    words = re.findall(r"[^\W\d_]+", query.lower())
    foreign = sum(1 for w in words if w in _FOREIGN_WORDS)
    english = sum(1 for w in words if w in _ENGLISH_WORDS)
    if foreign >= 2 and english == 0:
        return "query not in English: foreign function words"
    return None


def query_intent_after_cutoff(query: str, cutoff: dt.date) -> bool:
    """True when the query names a time after the cutoff (Anachron v0 query-intent leakage).

    A time reference found by :func:`anachron.verify.dates.find_periods` counts when its period
    starts after ``cutoff``: a year after the cutoff year, a month or quarter that begins after
    the cutoff, or an explicit day after it. The cutoff's own year / month is not intent.
    """
    return any(p.start > cutoff for p in find_periods(query or ""))


# ---------------------------------------------------------------------------------------------
# Context building
# ---------------------------------------------------------------------------------------------


def relevance_order(hits_per_call: Sequence[Sequence[Any]]) -> list[Any]:
    """Unique hits (by ``doc_id``) in relevance order across queries.

    Rank 1 of every query (in query order), then rank 2, and so on; a document seen
    before keeps its first place. Scores of different queries are not comparable, so
    ranks, not raw scores, interleave the lists.
    """
    seen: set[str] = set()
    out: list[Any] = []
    depth = max((len(h) for h in hits_per_call), default=0)
    for rank in range(depth):
        for hits in hits_per_call:
            if rank < len(hits) and hits[rank].doc_id not in seen:
                seen.add(hits[rank].doc_id)
                out.append(hits[rank])
    return out


def _clean(s: Any) -> str:
    return " ".join(str(s or "").split())


def _cut(text: str, room: int) -> str:
    """``text`` cut to at most ``room`` characters at a word boundary, ending with an ellipsis."""
    head = text[: max(room - 1, 0)]
    if " " in head[len(head) // 2 :]:
        head = head[: head.rfind(" ")]
    return head.rstrip() + "…"


@dataclass
class Context:
    """The passages block and what went into it.

    ``text`` is ``PASSAGES_HEADER`` plus one line per passage ("" when there are none);
    ``chars`` counts the passage lines and their separating newlines (the budgeted part);
    ``truncated`` is True when a passage was cut or dropped for the budget.
    """

    text: str
    consumed: list[str]
    chars: int
    truncated: bool


def build_context(hits: Sequence[Any], budget_chars: int) -> Context:
    """Numbered ``[k] title — snippet`` passages, no dates, within ``budget_chars`` characters.

    Hits are taken in the given order while they fit; the first that does not fit is cut
    at a word boundary when at least :data:`MIN_PARTIAL_CHARS` characters are left, and
    nothing after it is used.
    """
    lines: list[str] = []
    consumed: list[str] = []
    used = 0
    truncated = False
    for hit in hits:
        title, snippet = _clean(getattr(hit, "title", "")), _clean(getattr(hit, "snippet", ""))
        body = f"{title} — {snippet}" if title and snippet else (title or snippet)
        if not body:
            continue
        line = f"[{len(lines) + 1}] {body}"
        sep = 1 if lines else 0
        room = budget_chars - used - sep
        if len(line) <= room:
            lines.append(line)
            used += sep + len(line)
            consumed.append(hit.doc_id)
            continue
        truncated = True
        if room >= MIN_PARTIAL_CHARS:
            line = _cut(line, room)
            lines.append(line)
            used += sep + len(line)
            consumed.append(hit.doc_id)
        break
    text = PASSAGES_HEADER + "\n" + "\n".join(lines) if lines else ""
    return Context(text=text, consumed=consumed, chars=used, truncated=truncated)


def augment_messages(messages: list[dict[str, Any]], context: str) -> list[dict[str, Any]]:
    """A copy of ``messages`` with ``context`` prepended to the last user message (system untouched)."""
    out = [dict(m) for m in messages]
    if not context:
        return out
    for m in reversed(out):
        if m.get("role") == "user":
            m["content"] = f"{context}\n\n{m['content']}"
            break
    return out


# ---------------------------------------------------------------------------------------------
# The method
# ---------------------------------------------------------------------------------------------


def _check_config(mode: str, results_per_query: int, token_budget: int, chars_per_token: int, max_evidence: int) -> None:
    if mode not in MODES:
        raise ConfigError(f"rag: mode must be one of {MODES}, got {mode!r}")
    for key, value in (
        ("results_per_query", results_per_query),
        ("token_budget", token_budget),
        ("chars_per_token", chars_per_token),
        ("max_evidence", max_evidence),
    ):
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ConfigError(f"rag: {key} must be a positive integer, got {value!r}")


def _search_instance(
    row: pd.Series,
    queries: list[str],
    *,
    search: "SearchBackend",
    mode: str,
    cutoff: dt.date,
    results_per_query: int,
) -> tuple[list[list[Any]], list[str | None]]:
    """Run each query; return the hits and the error (or None) per call."""
    hits_per_call: list[list[Any]] = []
    errors: list[str | None] = []
    as_of = cutoff if mode == "enforced" else None
    for q in queries:
        hits: list[Any] = []
        err = query_problem(q)
        if err is None:
            try:
                hits = list(search.search(q, k=results_per_query, as_of=as_of))[:results_per_query]
            except Exception as exc:  # SearchError or a backend bug: log it, go on with what we have
                err = f"{type(exc).__name__}: {exc}"
                log.warning("search failed for %s query %r: %s", row["instance_id"], q, err)
        hits_per_call.append(hits)
        errors.append(err)
    return hits_per_call, errors


@dataclass
class RagPlan:
    """What retrieval prepared for each instance: the generation requests, traces, tool calls."""

    rows: list[pd.Series]
    requests: list[ChatRequest]
    traces: list[list[dict[str, Any]]]
    tool_calls: pd.DataFrame


def prepare_rag(
    instances: pd.DataFrame,
    task: Task,
    client: LLMClient,
    *,
    params: dict[str, Any],
    search: "SearchBackend",
    entity_validity: EntityValidityLike | None = None,
    mode: str = "enforced",
    max_evidence: int = 10,
    queries_min: int | None = None,
    queries_max: int | None = None,
    results_per_query: int = 5,
    token_budget: int = 3000,
    chars_per_token: int = 4,
    method_name: str | None = None,
) -> RagPlan:
    """Steps 1-3 of :func:`run_rag` (queries, search, context): the generation requests, not yet run.

    TimeSPEC (:mod:`anachron.methods.supervised`) starts from the same plan. Arguments as in
    :func:`run_rag`; one LLM call per instance (the queries). Raises :class:`ConfigError` on a bad
    ``mode`` or a non-positive count / budget.
    """
    _check_config(mode, results_per_query, token_budget, chars_per_token, max_evidence)
    qmin, qmax = query_count_range(task, queries_min, queries_max)
    method = method_name or METHOD_NAMES[mode]
    model = client.spec.name
    budget_chars = token_budget * chars_per_token
    rows = [r for _, r in instances.iterrows()]

    q_requests = [
        ChatRequest(
            messages=[{"role": "user", "content": query_prompt(task, r, qmin, qmax)}],
            params=params,
            response_schema=query_schema(qmin, qmax),
            tag={"instance_id": r["instance_id"], "step": "queries"},
        )
        for r in rows
    ]
    q_results = client.complete_many(q_requests, desc=f"{method}/{task.name} queries", unit="inst")

    tool_rows: list[dict[str, Any]] = []
    gen_requests: list[ChatRequest] = []
    traces: list[list[dict[str, Any]]] = []

    for row, q_res in zip(track(rows, f"{method}/{task.name} search", calls=False), q_results):
        cutoff = to_date(row["cutoff_date"])
        if cutoff is None:
            raise ValueError(f"instance {row['instance_id']}: cutoff_date {row['cutoff_date']!r} is not an ISO date")
        plan = plan_queries(task, row, q_res, qmin, qmax)
        hits_per_call, errors = _search_instance(
            row, plan.queries, search=search, mode=mode, cutoff=cutoff, results_per_query=results_per_query
        )
        ordered = relevance_order(hits_per_call)
        ctx = build_context(ordered, budget_chars)
        for seq, (q, hits, err) in enumerate(zip(plan.queries, hits_per_call, errors)):
            intent = query_intent_after_cutoff(q, cutoff)
            tool_rows.append(
                {
                    "task": task.name,
                    "method": method,
                    "model": model,
                    "instance_id": row["instance_id"],
                    "seq": seq,
                    "query": q,
                    "mode": mode,
                    "cutoff_date": cutoff.isoformat(),
                    **score_call(hits, cutoff, consumed=ctx.consumed, validity=entity_validity, query_intent=intent),
                    "query_intent_after_cutoff": intent,
                    "error": err,
                }
            )
        req = generation_request(task, row, params, max_evidence)
        req = req.model_copy(update={"messages": augment_messages(req.messages, ctx.text)})
        gen_requests.append(req)
        traces.append(
            [
                {"step": "queries", "source": plan.source, "reason": plan.reason, "n_model_queries": plan.n_model,
                 "n_queries": len(plan.queries), "cache_key": q_res.cache_key, "llm_error": q_res.error},
                {"step": "search", "mode": mode, "as_of": cutoff.isoformat() if mode == "enforced" else None,
                 "n_calls": len(plan.queries), "n_errors": sum(e is not None for e in errors),
                 "n_hits": sum(len(h) for h in hits_per_call), "n_unique": len(ordered)},
                {"step": "context", "n_passages": len(ctx.consumed), "chars": ctx.chars,
                 "budget_chars": budget_chars, "truncated": ctx.truncated},
            ]
        )

    tool_calls = pd.DataFrame(tool_rows, columns=TOOL_CALL_COLUMNS)
    tool_calls["seq"] = tool_calls["seq"].astype("int64")
    tool_calls["query_intent_after_cutoff"] = tool_calls["query_intent_after_cutoff"].astype(bool)
    tool_calls["error"] = pd.Series([r["error"] for r in tool_rows], index=tool_calls.index, dtype=object)
    return RagPlan(rows=rows, requests=gen_requests, traces=traces, tool_calls=tool_calls)


def run_rag(
    instances: pd.DataFrame,
    task: Task,
    client: LLMClient,
    *,
    params: dict[str, Any],
    search: "SearchBackend",
    mode: str = "enforced",
    method_name: str | None = None,
    **settings: Any,
) -> tuple[list[MethodResult], pd.DataFrame]:
    """Run RAG on every row of ``instances`` (TEMPO App. F.2; docs/methods.md#rag).

    Args:
        instances: rows with :data:`~anachron.tasks.base.INSTANCE_COLUMNS`.
        task: the task implementation (prompt, schema, entities).
        client: LLM client; two calls per instance (queries, then generation), both cached.
        params: decoding parameters for both calls (greedy: ``temperature`` 0).
        search: retrieval backend (``search(query, k=, as_of=)``; ``as_of`` a date or None).
        mode: ``"enforced"`` (search with ``as_of`` = the instance cutoff) or ``"unrestricted"``
            (no date filter; measures retrieval leakage).
        settings: the retrieval settings of :func:`prepare_rag`, listed here:
        entity_validity: point-in-time validity of entities
            (:class:`~anachron.retrieval.search.EntityValidity`: ``is_valid``, ``spells``, ``in``);
            None means no survivorship check (no call has an entity-bearing document).
        max_evidence: ``maxItems`` of the evidence list in the output schema.
        queries_min, queries_max: query-count bounds; default 7–12 for stock, 3–6 otherwise.
        results_per_query: hits kept per query (``k``).
        token_budget, chars_per_token: the passages block holds at most
            ``token_budget * chars_per_token`` characters (3,000 tokens x 4 chars by default).
        method_name: ``method`` value of the tool-call rows; default ``"rag"`` (enforced) or
            ``"rag_unrestricted"``.

    Returns:
        ``(results, tool_calls)``: one :class:`MethodResult` per row in row order
        (``n_llm_calls`` 2; ``trace`` steps ``queries``, ``search``, ``context``, ``generate``),
        and a DataFrame with :data:`TOOL_CALL_COLUMNS`, one row per search call (``seq`` 0, 1,
        ... per instance, in query order). ``consumed`` lists the call's returned ids that
        made it into the prompt (a document returned by two calls is consumed by both); the
        leak columns and ``flag_reason`` come from :func:`anachron.metrics.traces.score_call`.
        Model, parse and search failures are recorded, never raised.

    Raises:
        ConfigError: on a bad ``mode`` or a non-positive count / budget.
    """
    plan = prepare_rag(
        instances, task, client, params=params, search=search, mode=mode, method_name=method_name, **settings
    )
    method = method_name or METHOD_NAMES[mode]
    out = generate_and_parse(
        task, plan.rows, plan.requests, client, desc=f"{method}/{task.name} generate", traces=plan.traces, calls_before=1
    )
    return out, plan.tool_calls


def _fixed_mode(method_config: dict[str, Any], mode: str) -> None:
    given = method_config.pop("mode", mode)
    if given != mode:
        raise ConfigError(f"rag: method {METHOD_NAMES[mode]!r} always runs in mode {mode!r}; remove mode={given!r}")


def _mode_runner(mode: str, name: str, summary: str):
    """A method runner (the registry's signature) that always runs :func:`run_rag` in ``mode``."""

    def runner(
        instances: pd.DataFrame,
        task: Task,
        client: LLMClient,
        *,
        params: dict[str, Any],
        search: "SearchBackend",
        entity_validity: EntityValidityLike | None = None,
        **method_config: Any,
    ) -> tuple[list[MethodResult], pd.DataFrame]:
        _fixed_mode(method_config, mode)
        return run_rag(instances, task, client, params=params, search=search, entity_validity=entity_validity,
                       mode=mode, **{"method_name": name, **method_config})

    runner.__name__ = runner.__qualname__ = f"run_{name}"
    runner.__doc__ = summary
    return runner


def retrieval_steps(settings: Mapping[str, Any]) -> tuple[Step, Render, Callable[[Task], tuple[int, int]]]:
    """The retrieval part of a pattern (RAG and TimeSPEC; :mod:`anachron.methods.pattern`).

    Returns:
        ``(queries step, render of the generation request, searches per instance)``: one
        query-writing call (its unusable answer falls back to entity queries, so it is never asked
        again); the generation request with a passages block that fills the budget
        (``token_budget * chars_per_token`` characters: an upper bound); ``(queries_min,
        queries_max)`` searches (:func:`query_count_range`: the model's list is cut at the most,
        the fallback writes the most when the task has enough subjects).
    """
    max_evidence = int(settings.get("max_evidence", 10))
    qmin_set, qmax_set = settings.get("queries_min"), settings.get("queries_max")
    budget_chars = int(settings.get("token_budget", 3000)) * int(settings.get("chars_per_token", 4))
    passages = PASSAGES_HEADER + "\n" + "[1] " + "lorem " * (budget_chars // 6)

    def queries(task: Task, row: pd.Series, facts: Sequence[str]) -> list[dict[str, Any]]:
        qmin, qmax = query_count_range(task, qmin_set, qmax_set)
        return [{"role": "user", "content": query_prompt(task, row, qmin, qmax)}]

    def generation(task: Task, row: pd.Series, facts: Sequence[str]) -> list[dict[str, Any]]:
        return augment_messages(generation_request(task, row, {}, max_evidence).messages, passages)

    return Step("queries", queries), generation, lambda task: query_count_range(task, qmin_set, qmax_set)


def call_pattern(settings: Mapping[str, Any]) -> CallPattern:
    """RAG's calls per instance (both modes): one query-writing call, ``queries_min`` to
    ``queries_max`` searches, one generation request asked again up to
    :data:`~anachron.methods.base.PARSE_RETRIES` times when its answer does not parse
    (:func:`retrieval_steps`)."""
    queries, generation, searches = retrieval_steps(settings)
    return CallPattern(steps=(queries, Step("generate", generation, retries=PARSE_RETRIES)), searches=searches)


run_rag_enforced = _mode_runner(
    "enforced", "rag", "The ``rag`` method: :func:`run_rag` with the hard date filter (``mode=\"enforced\"``)."
)
run_rag_unrestricted = _mode_runner(
    "unrestricted", "rag_unrestricted",
    "The ``rag_unrestricted`` method: :func:`run_rag` without a date filter (Anachron Mode A).",
)


register_method("rag", runner=run_rag_enforced, call_pattern=call_pattern, retrieves=True)
register_method("rag_unrestricted", runner=run_rag_unrestricted, call_pattern=call_pattern, retrieves=True)
