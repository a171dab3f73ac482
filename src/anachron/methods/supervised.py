"""Supervised methods: Self-Correction and TimeSPEC (TimeSPEC paper §3 and Table 6; TEMPO App. F.3).

Both wrap a first generation in a verify -> regenerate -> aggregate loop (docs/methods.md#supervised-methods):

1. **generate** — Self-Correction: the Temporal Hint request; TimeSPEC: the RAG request
   (model-written queries, date-filtered retrieval; its search calls are the run's tool calls).
2. **supervise** — claims are extracted from the evidence and reasoning and categorised
   (A1-A5 / B1-B2, :mod:`anachron.verify.categorize`). A4 (outcome) and A5 (consequence) are
   always flagged, B1 / B2 never. A1-A3 claims get a date:

   * Self-Correction ("LLM-only", no search): the supervisor model's date-plausibility
     judgement (:mod:`anachron.verify.layers.llm`), falling back to the plausibility rules when
     its answer is unusable;
   * TimeSPEC ("LLM + search"): a search of the corpus **without** a date filter; the earliest
     document that supports the claim (the corpus layer's test,
     :mod:`anachron.verify.layers.corpus`) gives its earliest public date. Without a supporting
     document the plausibility rules date the claim.

   A claim dated after the cutoff is flagged.
3. **regenerate** (at most once, only when something was flagged) — the first request again,
   with a plain numbered list of facts to leave out appended to the user message. The list
   carries no dates, no temporal words and no reasons (:func:`avoid_list_block`).
4. **resupervise** — the regenerated output is supervised the same way; claims already judged
   reuse their cached verdicts.
5. **aggregate** (always) — a closed world: the task's system prompt plus one constraint, and a
   user message with the validated facts (every claim not flagged, from both rounds) as plain
   numbered text, without dates or labels, before the task's original user message. The output
   schema lists those facts as the only allowed evidence texts (``enum``), so a grammar-constrained
   model cannot add a fact. Its output is the method's answer.

Information surface: the generator sees only the task prompt, its own retrieved passages (TimeSPEC)
and the avoid-list; the aggregator sees only the task prompt and the validated facts. No
verdict, date, category or search result of the supervisor reaches either. The supervisor's
context is derived from the task input alone (:func:`supervisor_context`): it never sees the
instance's label, so the avoid-list cannot reveal which claim matches the true outcome.
"""

from __future__ import annotations

import datetime as dt
import logging
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Mapping, Sequence

import pandas as pd

from anachron.errors import ConfigError
from anachron.llm.client import LLMClient
from anachron.llm.structured import EVIDENCE_USABLE, ParsedOutput, output_schema
from anachron.llm.types import ChatRequest
from anachron.methods.base import PARSE_RETRIES, MethodResult, complete_and_parse, generation_request
from anachron.methods.pattern import CallPattern, Render, Step, render_extraction, render_plausibility
from anachron.methods.registry import register_method
from anachron.tasks.base import Task
from anachron.verify.dates import find_periods, normalize_declared
from anachron.verify.extract import extract_claims, extract_claims_llm
from anachron.verify.layers.corpus import MIN_SUPPORT, CorpusLayer
from anachron.verify.pipeline import verify_claim
from anachron.verify.taxonomy import ALWAYS_CLEAN, ALWAYS_LEAKED
from anachron.words import MONTH_WORDS, WEEKDAY_NAMES

if TYPE_CHECKING:  # pragma: no cover
    from anachron.retrieval.search import SearchBackend
    from anachron.verify.taxonomy import Claim

log = logging.getLogger(__name__)


#: Words that speak about time or about the verification; never shown to the generator.
TEMPORAL_WORDS = re.compile(
    r"\b(?:cut-?offs?|leak\w*|future|temporal\w*|anachron\w*|dates?|dated|dating|timeline\w*|later|earlier|"
    r"before|after|afterwards?|until|till|since|upcoming|subsequent\w*|recent\w*|previous\w*|prior|ago|yet|"
    r"already|today|tomorrow|yesterday|tonight|now|currently|post-?\w*|pre-?cutoff|as of|deadline\w*|"
    + "|".join(MONTH_WORDS + WEEKDAY_NAMES) + "|"
    r"q[1-4]|h[12]|fy\s?\d{2,4}|quarter(?:ly)?|annual(?:ly)?|year(?:s|ly)?|month(?:s|ly)?|week(?:s|ly)?|"
    r"days?|daily|season(?:s|al)?|term)\b",
    re.I,
)
_DANGLING = re.compile(r"\b(?:on|in|of|by|during|from|to|at|for|through|the|and|as)\s*(?=[,.;:)]|$)", re.I)


def scrub_temporal(text: str) -> str:
    """``text`` without its time references and temporal words (for the avoid-list).

    Removes every span :func:`anachron.verify.dates.find_periods` finds (days, months,
    quarters, fiscal years, years), any remaining number that looks like a year or a
    day of month next to a removed span, and the words in :data:`TEMPORAL_WORDS`; then tidies
    punctuation and dangling prepositions. The result may read tersely; it only has to
    identify the fact.
    """
    out = text
    for p in sorted(find_periods(text), key=lambda p: -len(p.text)):
        out = re.sub(rf"(?:\b(?:on|in|during|as of|by|since|from|for|at|through|of)\s+)?{re.escape(p.text)}", " ", out, flags=re.I)
    out = re.sub(r"\b\d{1,2}/\d{1,2}(?:/\d{2,4})?\b", " ", out)
    out = re.sub(r"(?<![\d$.,])(?:19|20)\d{2}(?![\d%])", " ", out)
    out = TEMPORAL_WORDS.sub(" ", out)
    out = re.sub(r"\s+", " ", out)
    out = re.sub(r"\s+([,.;:)])", r"\1", out)
    out = re.sub(r"\(\s*\)", "", out)
    for _ in range(3):
        out = _DANGLING.sub("", out).strip()
        out = re.sub(r"^[,.;:\s]+|[,;:\s]+$", "", out)
        out = re.sub(r",\s*,", ",", out)
    return re.sub(r"\s+", " ", out).strip()


AVOID_HEADER = "Leave the following facts out of your analysis:"
AVOID_FOOTER = "Write your answer again without them."


def avoid_list_block(facts: Sequence[str]) -> str:
    """The regeneration constraint: a plain numbered list of facts to leave out.

    Each fact is :func:`scrub_temporal`-ed; duplicates and facts that scrub to nothing are
    dropped. No dates, no temporal words, no corrected values, no reasons (TimeSPEC paper,
    App. on regeneration; docs/methods.md#avoid-list). Returns "" when nothing is left to avoid.
    """
    lines: list[str] = []
    seen: set[str] = set()
    for f in facts:
        s = scrub_temporal(f)
        key = s.lower()
        if len(re.findall(r"[^\W\d_]{2,}", s)) < 2 or key in seen:
            continue
        seen.add(key)
        lines.append(f"{len(lines) + 1}. {s}")
    if not lines:
        return ""
    return "\n".join([AVOID_HEADER, *lines, AVOID_FOOTER])


def append_to_user(messages: list[dict[str, Any]], block: str) -> list[dict[str, Any]]:
    """A copy of ``messages`` with ``block`` appended to the last user message."""
    out = [dict(m) for m in messages]
    if block:
        for m in reversed(out):
            if m.get("role") == "user":
                m["content"] = f"{m['content']}\n\n{block}"
                break
    return out


CLOSED_WORLD_RULE = (
    "CLOSED LIST OF FACTS: the user message starts with a numbered list of facts. In step 1, every "
    "evidence item must be one of those facts, copied as written. Do not bring in any other fact, "
    "figure, event or name. Give each item the source_date you judge right from its text."
)
CLOSED_WORLD_EMPTY = (
    "CLOSED LIST OF FACTS: no facts are available for this case. Leave the evidence list empty and base "
    "your prediction on the task description alone, without bringing in any fact, figure, event or name."
)
FACTS_HEADER = "Facts you may use:"
PREDICTION_ONLY = "For this request skip steps 1 and 2: answer with {\"prediction\": ...} only."


def closed_world_messages(
    task: Task, row: pd.Series | dict[str, Any], facts: Sequence[str], *, prediction_only: bool = False
) -> list[dict[str, str]]:
    """The closed-world prompt: task system prompt + one constraint; facts, then the task's user message.

    Facts are plain numbered text: no dates, categories or other metadata (TimeSPEC paper, the
    aggregator; docs/methods.md#aggregator). With ``prediction_only`` (Shapley coalition values, docs/metrics.md#shapley-dclr) the
    model is asked for the prediction alone.
    """
    msgs = [dict(m) for m in task.messages(row)]
    rule = CLOSED_WORLD_RULE if facts else CLOSED_WORLD_EMPTY
    if prediction_only:
        rule += " " + PREDICTION_ONLY
    msgs[0]["content"] = f"{msgs[0]['content']}\n\n{rule}"
    if facts:
        listing = "\n".join(f"{k}. {f}" for k, f in enumerate(facts, start=1))
        for m in reversed(msgs):
            if m["role"] == "user":
                m["content"] = f"{FACTS_HEADER}\n{listing}\n\n{m['content']}"
                break
    return msgs


def aggregator_schema(task: Task, row: pd.Series | dict[str, Any], facts: Sequence[str], max_evidence: int) -> dict[str, Any]:
    """The shared output schema with evidence facts restricted to ``facts`` (empty list when none)."""
    schema = output_schema(task.prediction_schema(row), max_evidence=max_evidence)
    ev = schema["properties"]["evidence"]
    if facts:
        ev["items"]["properties"]["fact"] = {"type": "string", "enum": list(facts)}
        ev["maxItems"] = min(max_evidence, len(facts))
    else:
        ev["minItems"], ev["maxItems"] = 0, 0
    return schema


def aggregator_request(
    task: Task, row: pd.Series | dict[str, Any], facts: Sequence[str], params: dict[str, Any], max_evidence: int
) -> ChatRequest:
    """The aggregator's request (closed world over ``facts``)."""
    return ChatRequest(
        messages=closed_world_messages(task, row, facts),
        params=params,
        response_schema=aggregator_schema(task, row, facts, max_evidence),
        tag={"instance_id": row["instance_id"], "step": "aggregate"},
    )


# ---------------------------------------------------------------------------------------------
# Supervision
# ---------------------------------------------------------------------------------------------


def supervisor_context(task: Task, row: pd.Series | dict[str, Any]) -> dict[str, Any]:
    """What the supervisor may know of an instance: the task, the cutoff and its named subjects.

    Derived from the task input only (never the label), as the TimeSPEC paper requires of its
    claim-extraction prompt.
    """
    return {"task": task, "cutoff_date": row["cutoff_date"], **task.entities(row)}


def claim_key(text: str) -> str:
    """Cache key of a claim: lower-cased, whitespace-normalised text without citations."""
    return " ".join(re.sub(r"\[[\d,\s-]+\]", " ", text).lower().split())


@dataclass
class Judged:
    """One supervised claim: the claim, whether it is flagged, the date used and how it was decided.

    ``how``: ``taxonomy``, ``llm``, ``search``, ``rules``, ``declared`` or ``undated``;
    ``cached`` is True when the verdict was reused from an earlier round.
    """

    claim: "Claim"
    flagged: bool
    effective_date: str | None
    how: str
    reason: str
    cached: bool = False

    def to_dict(self) -> dict[str, Any]:
        """The trace form: claim text, category, source, flag, date, how, reason, cached."""
        return {
            "text": self.claim.text,
            "category": self.claim.category,
            "source": self.claim.source,
            "flagged": self.flagged,
            "effective_date": self.effective_date,
            "how": self.how,
            "reason": self.reason,
            "cached": self.cached,
        }


def _rules_date(claim: "Claim", cutoff: dt.date) -> tuple[dt.date | None, str, str]:
    v = verify_claim(claim.text, claim.declared_date_raw, cutoff, layers=("rules",))
    d = dt.date.fromisoformat(v["effective_date"]) if v["effective_date"] else None
    how = {"rules": "rules", "declared": "declared"}.get(v["layer"], "undated")
    return d, how, v["reason"]


def _taxonomy(claim: "Claim") -> Judged | None:
    if claim.category in ALWAYS_LEAKED:
        return Judged(claim, True, None, "taxonomy", f"category {claim.category}: the outcome or its consequence")
    if claim.category in ALWAYS_CLEAN:
        return Judged(claim, False, None, "taxonomy", f"category {claim.category}: not time-bound")
    return None


def _dated(claim: "Claim", cutoff: dt.date, day: dt.date | None, how: str, reason: str) -> Judged:
    if day is None:
        return Judged(claim, False, None, "undated", reason)
    return Judged(claim, day > cutoff, day.isoformat(), how, reason)


class Supervisor:
    """Extracts claims and flags those not public by the cutoff. Subclasses date A1-A3 claims.

    Args:
        client: the supervisor model's client (claim extraction; Self-Correction's date judge).
        params: decoding parameters of the supervisor's calls.
        extractor: ``"llm"`` (the LLM claim extractor, deterministic fallback when its answer is
            unusable) or ``"deterministic"``.
    """

    name = "supervisor"

    def __init__(self, client: LLMClient, params: dict[str, Any], *, extractor: str = "llm"):
        if extractor not in ("llm", "deterministic"):
            raise ConfigError(f"supervisor extractor must be 'llm' or 'deterministic', got {extractor!r}")
        self.client, self.params, self.extractor = client, params, extractor

    def extract(
        self, task: Task, rows: list[pd.Series], outputs: list[ParsedOutput]
    ) -> list[tuple[list["Claim"], dict[str, Any]]]:
        """Claims of each usable output (none for an unusable one), with an extraction trace."""
        contexts = [supervisor_context(task, r) for r in rows]
        pairs = [([e.model_dump() for e in o.evidence], o.reasoning or "") for o in outputs]
        usable = [i for i, o in enumerate(outputs) if o.status in EVIDENCE_USABLE]
        out: list[tuple[list[Claim], dict[str, Any]]] = [([], {"extractor": None, "reason": "output unusable"})] * len(rows)
        if not usable:
            return out
        if self.extractor == "llm":
            got = extract_claims_llm(
                self.client, task, [rows[i] for i in usable], [pairs[i] for i in usable], self.params,
                [contexts[i] for i in usable],
            )
        else:
            got = [(extract_claims(*pairs[i], contexts[i]), {"extractor": "deterministic", "reason": None}) for i in usable]
        out = list(out)
        for i, g in zip(usable, got):
            out[i] = g
        return out

    def date_claims(self, rows: list[pd.Series], claims: list[list["Claim"]]) -> list[list[Judged]]:
        """Verdicts for A1-A3 claims (per instance, in order); implemented by subclasses."""
        raise NotImplementedError

    def supervise(
        self,
        task: Task,
        rows: list[pd.Series],
        outputs: list[ParsedOutput],
        cache: list[dict[str, Judged]] | None = None,
    ) -> tuple[list[list[Judged]], list[dict[str, Any]]]:
        """Judge every claim of every output; reuse ``cache`` (claim_key -> Judged) per instance.

        Returns the verdicts per instance and a trace step per instance.
        """
        extracted = self.extract(task, rows, outputs)
        cache = cache or [{} for _ in rows]
        verdicts: list[list[Judged | None]] = []
        pending: list[list[Claim]] = []
        for (claims, _), known in zip(extracted, cache):
            vs: list[Judged | None] = []
            todo: list[Claim] = []
            for c in claims:
                hit = known.get(claim_key(c.text))
                if hit is not None:
                    vs.append(Judged(c, hit.flagged, hit.effective_date, hit.how, hit.reason, cached=True))
                    continue
                t = _taxonomy(c)
                vs.append(t)
                if t is None:
                    todo.append(c)
            verdicts.append(vs)
            pending.append(todo)
        dated = self.date_claims(rows, pending)
        final: list[list[Judged]] = []
        traces: list[dict[str, Any]] = []
        for vs, claims_dated, (claims, ext) in zip(verdicts, dated, extracted):
            it = iter(claims_dated)
            done = [v if v is not None else next(it) for v in vs]
            final.append(done)
            traces.append(
                {
                    "extractor": ext.get("extractor"),
                    "extractor_note": ext.get("reason"),
                    "n_claims": len(done),
                    "n_flagged": sum(v.flagged for v in done),
                    "n_cached": sum(v.cached for v in done),
                    "claims": [v.to_dict() for v in done],
                }
            )
        return final, traces


class LLMOnlySupervisor(Supervisor):
    """Self-Correction's supervisor: the supervisor model judges each A1-A3 claim's date (no search).

    Claims with a usable declared date go to the date-plausibility judge
    (:func:`anachron.verify.layers.llm.check_plausibility`, batches of ``batch_size``); an
    implausible date is replaced by the judge's corrected date. When the judge's answer is
    unusable (after its one retry), or a claim has no declared date, the plausibility rules
    date the claim from its text.
    """

    name = "llm_only"

    def __init__(self, client: LLMClient, params: dict[str, Any], *, extractor: str = "llm", batch_size: int = 80):
        super().__init__(client, params, extractor=extractor)
        self.batch_size = int(batch_size)

    def date_claims(self, rows: list[pd.Series], claims: list[list["Claim"]]) -> list[list[Judged]]:
        """Date A1-A3 claims by the judge model (one batched call set for all instances)."""
        from anachron.verify.layers.llm import check_plausibility

        items: list[dict[str, Any]] = []
        where: list[tuple[int, int]] = []
        for i, (row, cs) in enumerate(zip(rows, claims)):
            for j, c in enumerate(cs):
                d = normalize_declared(c.declared_date_raw).date
                if d is not None:
                    items.append({"fact": c.text, "declared_date": d.isoformat(), "cutoff_date": row["cutoff_date"]})
                    where.append((i, j))
        judged = check_plausibility(self.client, items, self.params, batch_size=self.batch_size) if items else []
        by_pos = dict(zip(where, judged))
        out: list[list[Judged]] = []
        for i, (row, cs) in enumerate(zip(rows, claims)):
            cutoff = dt.date.fromisoformat(str(row["cutoff_date"]))
            res: list[Judged] = []
            for j, c in enumerate(cs):
                v = by_pos.get((i, j))
                if v is not None and v.status == "ok":
                    declared = normalize_declared(c.declared_date_raw).date
                    day = declared if v.plausible or v.corrected_date is None else v.corrected_date
                    res.append(_dated(c, cutoff, day, "llm", v.reason))
                    continue
                day, how, reason = _rules_date(c, cutoff)
                if v is not None:
                    reason = f"judge unusable ({v.reason}); {reason}"
                res.append(_dated(c, cutoff, day, how, reason))
            out.append(res)
        return out


class SearchSupervisor(Supervisor):
    """TimeSPEC's supervisor: A1-A3 claims are dated by a search **without** a date filter.

    Each claim's text is the query (``k`` hits, ``as_of=None``). A hit supports the claim by the
    corpus layer's test (:meth:`anachron.verify.layers.corpus.CorpusLayer.supporting`: its event
    verbs and every number in the hit, at least ``min_support`` of its IDF-weighted content words,
    a date not before the periods the claim names); the earliest supporting hit's date is the
    claim's earliest public date. Without support, the plausibility rules date the claim from its
    text and declared date. Search errors are recorded and fall back the same way.
    """

    name = "search"

    def __init__(
        self,
        client: LLMClient,
        params: dict[str, Any],
        *,
        search: "SearchBackend",
        extractor: str = "llm",
        k: int = 10,
        min_support: float = MIN_SUPPORT,
    ):
        super().__init__(client, params, extractor=extractor)
        self.corpus = CorpusLayer(search, k=k, min_support=min_support)

    @property
    def n_searches(self) -> int:
        """Verification searches made so far."""
        return self.corpus.n_searches

    def date_claims(self, rows: list[pd.Series], claims: list[list["Claim"]]) -> list[list[Judged]]:
        """Date A1-A3 claims by an unfiltered search (one query per claim)."""
        out: list[list[Judged]] = []
        for row, cs in zip(rows, claims):
            cutoff = dt.date.fromisoformat(str(row["cutoff_date"]))
            res: list[Judged] = []
            for c in cs:
                try:
                    found, err = self.corpus.supporting(c.text), None
                except Exception as exc:  # a backend failure falls back to the rules, recorded
                    found, err = [], f"{type(exc).__name__}: {exc}"
                if found:
                    first = found[0]
                    res.append(_dated(c, cutoff, first.day, "search", f"earliest supporting document {first.doc_id} dated {first.day}"))
                    continue
                day, how, reason = _rules_date(c, cutoff)
                note = f"search failed ({err})" if err else "no supporting document"
                res.append(_dated(c, cutoff, day, how, f"{note}; {reason}"))
            out.append(res)
        return out


# ---------------------------------------------------------------------------------------------
# The loop
# ---------------------------------------------------------------------------------------------


@dataclass
class _State:
    row: pd.Series
    request: ChatRequest
    trace: list[dict[str, Any]] = field(default_factory=list)
    calls: int = 0
    verdicts: list[Judged] = field(default_factory=list)


def supervised_loop(
    task: Task,
    rows: list[pd.Series],
    requests: list[ChatRequest],
    client: LLMClient,
    supervisor: Supervisor,
    *,
    params: dict[str, Any],
    method: str,
    max_evidence: int = 10,
    max_regenerations: int = 1,
    max_facts: int = 20,
    traces: list[list[dict[str, Any]]] | None = None,
    calls_before: int = 0,
) -> list[MethodResult]:
    """Generate -> supervise -> regenerate (<= ``max_regenerations``) -> resupervise -> aggregate.

    Args:
        task: the task.
        rows: instance rows, in the order of ``requests``.
        requests: the first generation request per row (Temporal Hint's or RAG's).
        client: the generator's client (generation, regeneration, aggregation).
        supervisor: claim extraction and dating (:class:`LLMOnlySupervisor`, :class:`SearchSupervisor`).
        params: decoding parameters of the generator's calls.
        method: the method name (progress labels).
        max_evidence: ``maxItems`` of the evidence list.
        max_regenerations: 0 or 1 (the papers use one cycle).
        max_facts: at most this many validated facts reach the aggregator (first found first).
        traces, calls_before: steps and LLM calls each instance already made (TimeSPEC's queries).

    Returns:
        One :class:`MethodResult` per row: the aggregator's completion and its parse, with a trace
        of every step (each supervised claim with its verdict and how it was reached).
    """
    if max_regenerations not in (0, 1):
        raise ConfigError(f"{method}: max_regenerations must be 0 or 1, got {max_regenerations!r}")
    states = [
        _State(row=r, request=q, trace=(traces[i] if traces else []), calls=calls_before)
        for i, (r, q) in enumerate(zip(rows, requests))
    ]
    first = complete_and_parse(task, rows, requests, client, desc=f"{method}/{task.name} generate")
    outputs = []
    for s, c in zip(states, first):
        s.calls += c.n_calls
        outputs.append(c.parsed)
        s.trace.extend(c.steps("generate"))
    verdicts, steps = supervisor.supervise(task, rows, outputs)
    for s, v, st in zip(states, verdicts, steps):
        s.verdicts = list(v)
        s.trace.append({"step": "supervise", **st})

    regen = [i for i, v in enumerate(verdicts) if max_regenerations and any(j.flagged for j in v)]
    regen = [i for i in regen if avoid_list_block([j.claim.text for j in verdicts[i] if j.flagged])]
    if regen:
        reqs = []
        for i in regen:
            block = avoid_list_block([j.claim.text for j in verdicts[i] if j.flagged])
            base = states[i].request
            reqs.append(
                base.model_copy(
                    update={"messages": append_to_user(base.messages, block), "tag": {**base.tag, "step": "regenerate"}}
                )
            )
        second = complete_and_parse(task, [rows[i] for i in regen], reqs, client, desc=f"{method}/{task.name} regenerate")
        outs2 = []
        for i, c in zip(regen, second):
            states[i].calls += c.n_calls
            outs2.append(c.parsed)
            states[i].trace.extend(c.steps("regenerate", n_avoided=sum(j.flagged for j in verdicts[i])))
        cache = [{claim_key(j.claim.text): j for j in verdicts[i]} for i in regen]
        v2, steps2 = supervisor.supervise(task, [rows[i] for i in regen], outs2, cache=cache)
        for i, v, st in zip(regen, v2, steps2):
            states[i].verdicts.extend(v)
            states[i].trace.append({"step": "resupervise", **st})

    facts_per: list[list[str]] = []
    for s in states:
        flagged = {claim_key(j.claim.text) for j in s.verdicts if j.flagged}
        facts: list[str] = []
        seen: set[str] = set()
        for j in s.verdicts:
            key = claim_key(j.claim.text)
            if j.flagged or key in flagged or key in seen or not key:
                continue
            seen.add(key)
            facts.append(" ".join(j.claim.text.split())[:400])
        facts_per.append(facts[:max_facts])
    agg_reqs = [aggregator_request(task, s.row, f, params, max_evidence) for s, f in zip(states, facts_per)]
    final = complete_and_parse(task, rows, agg_reqs, client, desc=f"{method}/{task.name} aggregate")
    out: list[MethodResult] = []
    for s, f, c in zip(states, facts_per, final):
        s.calls += c.n_calls
        s.trace.extend(c.steps("aggregate", n_facts=len(f)))
        out.append(
            MethodResult(
                instance_id=s.row["instance_id"],
                completion=c.result.text,
                parsed=c.parsed,
                finish_reason=c.result.finish_reason,
                llm_error=c.result.error,
                n_llm_calls=s.calls,
                trace=s.trace,
            )
        )
    return out


def _supervisor_client(client: LLMClient, supervisor_model: dict[str, Any] | None) -> tuple[LLMClient, dict[str, Any]]:
    """The supervisor's client and decoding params: a configured model, or the generator itself."""
    if not supervisor_model:
        return client, {}
    from anachron.llm.types import ModelSpec

    spec = ModelSpec(**supervisor_model)
    return LLMClient(spec, client.cache, client.call_log), dict(spec.params)


def run_self_correction(
    instances: pd.DataFrame,
    task: Task,
    client: LLMClient,
    *,
    params: dict[str, Any],
    max_evidence: int = 10,
    extractor: str = "llm",
    batch_size: int = 80,
    max_regenerations: int = 1,
    max_facts: int = 20,
    supervisor_model: dict[str, Any] | None = None,
) -> list[MethodResult]:
    """Self-Correction (TimeSPEC paper, Table 6): Temporal Hint, then LLM-only supervision.

    Args:
        instances, task, client, params, max_evidence: as for Temporal Hint.
        extractor: claim extractor of the supervisor (``llm`` or ``deterministic``).
        batch_size: claims per date-plausibility call (the paper: 80).
        max_regenerations: 0 or 1.
        max_facts: validated facts passed to the aggregator at most.
        supervisor_model: a resolved model config (``name``, ``model``, ...) for the supervisor;
            None = the generating model supervises itself.

    Returns:
        One :class:`MethodResult` per row; calls per instance: generate, extract, judge,
        [regenerate, extract, judge], aggregate.
    """
    sup_client, sup_params = _supervisor_client(client, supervisor_model)
    supervisor = LLMOnlySupervisor(sup_client, sup_params or params, extractor=extractor, batch_size=batch_size)
    rows = [r for _, r in instances.iterrows()]
    requests = [generation_request(task, r, params, max_evidence) for r in rows]
    return supervised_loop(
        task, rows, requests, client, supervisor, params=params, method="self_correction",
        max_evidence=max_evidence, max_regenerations=max_regenerations, max_facts=max_facts,
    )


def run_timespec(
    instances: pd.DataFrame,
    task: Task,
    client: LLMClient,
    *,
    params: dict[str, Any],
    search: "SearchBackend",
    entity_validity: Any = None,
    max_evidence: int = 10,
    extractor: str = "llm",
    verify_k: int = 10,
    min_support: float = MIN_SUPPORT,
    max_regenerations: int = 1,
    max_facts: int = 20,
    supervisor_model: dict[str, Any] | None = None,
    **rag_config: Any,
) -> tuple[list[MethodResult], pd.DataFrame]:
    """TimeSPEC (TimeSPEC paper §3; TEMPO App. F.3): RAG generation, search-verified supervision.

    Args:
        instances, task, client, params, max_evidence: as for RAG.
        search: the corpus; generation searches with the as-of filter (its calls are the
            returned tool calls, method ``timespec``), verification without it.
        entity_validity: point-in-time entity validity for the survivorship metric.
        extractor: the supervisor's claim extractor (``llm`` or ``deterministic``).
        verify_k, min_support: hits per verification search and the support threshold
            (:class:`SearchSupervisor`).
        max_regenerations, max_facts, supervisor_model: as for :func:`run_self_correction`.
        rag_config: retrieval settings of :func:`anachron.methods.rag.prepare_rag`
            (``queries_min``, ``token_budget``, ...).

    Returns:
        ``(results, tool_calls)`` as for RAG.
    """
    from anachron.methods.rag import prepare_rag

    plan = prepare_rag(
        instances, task, client, params=params, search=search, entity_validity=entity_validity, mode="enforced",
        max_evidence=max_evidence, method_name="timespec", **rag_config,
    )
    sup_client, sup_params = _supervisor_client(client, supervisor_model)
    supervisor = SearchSupervisor(
        sup_client, sup_params or params, search=search, extractor=extractor, k=verify_k, min_support=min_support
    )
    results = supervised_loop(
        task, plan.rows, plan.requests, client, supervisor, params=params, method="timespec",
        max_evidence=max_evidence, max_regenerations=max_regenerations, max_facts=max_facts,
        traces=plan.traces, calls_before=1,
    )
    return results, plan.tool_calls


# ---------------------------------------------------------------------------------------------
# Call patterns (anachron estimate; anachron.methods.pattern)
# ---------------------------------------------------------------------------------------------


def _loop_steps(settings: Mapping[str, Any], generation: Render, judge: bool) -> list[Step]:
    """The steps of :func:`supervised_loop` after the first generation: extract (llm extractor
    only) and, with ``judge``, the date judge's batched calls; the same for the regenerated answers
    of flagged instances (``max_regenerations`` 1); then the aggregator."""
    max_evidence, max_facts = int(settings.get("max_evidence", 10)), int(settings.get("max_facts", 20))
    batch = int(settings.get("batch_size", 80))
    supervise = []
    if settings.get("extractor", "llm") == "llm":
        supervise.append(Step("extract_claims", render_extraction, model="supervisor"))
    if judge:
        supervise.append(Step("plausibility", render_plausibility, model="supervisor", retries=1, batched=True,
                              batch_size=batch))

    def regenerate(task: Task, row: pd.Series, facts: Sequence[str]) -> list[dict[str, Any]]:
        return append_to_user(generation(task, row, facts), avoid_list_block(facts))

    def aggregate(task: Task, row: pd.Series, facts: Sequence[str]) -> list[dict[str, Any]]:
        return aggregator_request(task, row, list(facts)[:max_facts], {}, max_evidence).messages

    steps = list(supervise)
    if int(settings.get("max_regenerations", 1)):
        steps.append(Step("regenerate", regenerate, retries=PARSE_RETRIES, when="flagged"))
        steps += [Step(s.step, s.render, s.model, s.retries, "flagged", s.batched, s.batch_size) for s in supervise]
    steps.append(Step("aggregate", aggregate, retries=PARSE_RETRIES))
    return steps


def self_correction_pattern(settings: Mapping[str, Any]) -> CallPattern:
    """Self-Correction's calls per instance: the Temporal Hint request; the supervisor's claim
    extraction (``extractor: llm``) and date judgement (``batch_size`` claims per call, per cutoff
    date, over the run); for an instance with a flagged claim the regeneration and its supervision;
    the aggregator. Generation, regeneration and aggregation are asked again up to
    :data:`~anachron.methods.base.PARSE_RETRIES` times when unparsed, the judge once. No search."""
    max_evidence = int(settings.get("max_evidence", 10))

    def generation(task: Task, row: pd.Series, facts: Sequence[str]) -> list[dict[str, Any]]:
        return generation_request(task, row, {}, max_evidence).messages

    steps = [Step("generate", generation, retries=PARSE_RETRIES), *_loop_steps(settings, generation, judge=True)]
    return CallPattern(steps=tuple(steps))


def timespec_pattern(settings: Mapping[str, Any]) -> CallPattern:
    """TimeSPEC's calls per instance: RAG's query call, searches and generation
    (:func:`anachron.methods.rag.retrieval_steps`); the supervisor's claim extraction
    (``extractor: llm``) and one unfiltered search per A1-A3 claim (not logged as tool calls); for
    an instance with a flagged claim the regeneration and its supervision; the aggregator."""
    from anachron.methods.rag import retrieval_steps

    queries, generation, searches = retrieval_steps(settings)
    steps = [queries, Step("generate", generation, retries=PARSE_RETRIES), *_loop_steps(settings, generation, judge=False)]
    return CallPattern(steps=tuple(steps), searches=searches, claim_searches=1)


register_method("self_correction", runner=run_self_correction, call_pattern=self_correction_pattern, supervised=True)
register_method("timespec", runner=run_timespec, call_pattern=timespec_pattern, retrieves=True, supervised=True)
