"""The LLM claim extractor: :func:`extract_claims_llm` (a model, batched).

The TimeSPEC claim-extraction step (TEMPO App. I.3 structure, the project's own wording): the
prompt (:func:`extraction_request`, with the task's :func:`describe_instance`), the answer's
schema and parsing (:func:`parse_extraction`), and the matching of claims to evidence items
(:func:`match_evidence`). Claims the model does not categorise validly are categorised by
:func:`~anachron.verify.categorize.categorize`; an unusable answer falls back to the
deterministic extractor (:func:`~anachron.verify.extract.rules.extract_claims`), with the
reason in the trace.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from anachron.llm.decode import decode_json
from anachron.llm.types import ChatRequest
from anachron.verify.task_rules import TaskRules
from anachron.verify.categorize import categorize
from anachron.verify.citations import cited_in, split_sentences, strip_citations
from anachron.verify.dates import normalize_declared
from anachron.verify.extract.rules import evidence_dicts, extract_claims
from anachron.verify.features import norm_text
from anachron.verify.taxonomy import CATEGORIES, CATEGORY_NAMES, EXTRACTOR_DETERMINISTIC, EXTRACTOR_LLM, Claim
from anachron.words import STOP_WORDS

if TYPE_CHECKING:
    import pandas as pd

#: Caps of the extraction answer (kept within llama.cpp's 1000 repetition bound).
MAX_CLAIMS = 30
MAX_CLAIM_CHARS = 300
MAX_REF_CHARS = 40
MAX_REASON_CHARS = 160


def extraction_schema(max_claims: int = MAX_CLAIMS) -> dict[str, Any]:
    """JSON schema of the extractor's answer ``{"claims": [...]}`` (llama.cpp-grammar safe:
    no backslash classes, every bound ≤ 1000)."""
    return {
        "type": "object",
        "properties": {
            "claims": {
                "type": "array",
                "maxItems": max_claims,
                "items": {
                    "type": "object",
                    "properties": {
                        "claim_id": {"type": "integer"},
                        "text": {"type": "string", "maxLength": MAX_CLAIM_CHARS},
                        "original_span": {"type": "string", "maxLength": MAX_CLAIM_CHARS},
                        "temporal_ref": {"type": "string", "maxLength": MAX_REF_CHARS},
                        "category": {"type": "string", "enum": list(CATEGORIES)},
                        "category_reason": {"type": "string", "maxLength": MAX_REASON_CHARS},
                    },
                    "required": ["claim_id", "text", "original_span", "temporal_ref", "category", "category_reason"],
                },
            }
        },
        "required": ["claims"],
    }


def _row_get(row: Any, key: str, default: Any = None) -> Any:
    try:
        v = row[key]
    except (KeyError, IndexError, TypeError):
        return default
    return default if v is None else v


def _row_inputs(row: Any) -> dict[str, Any]:
    inp = _row_get(row, "inputs", {})
    if isinstance(inp, str):
        try:
            inp = json.loads(inp)
        except ValueError:
            inp = {}
    return inp if isinstance(inp, dict) else {}


def describe_instance(task: TaskRules, row: Any) -> tuple[str, str]:
    """``(task_description, target_event)`` for the extractor prompt, from the row's inputs only
    (fields the generator also saw; never the label): the task's
    :meth:`~anachron.tasks.base.Task.describe`."""
    return task.describe(_row_inputs(row))


def _rationale_text(evidence: list[dict[str, Any]], reasoning: str) -> str:
    lines = ["Evidence list:"]
    lines += [f"[{e['id']}] {e['fact']}" for e in evidence] or ["(none)"]
    lines += ["", "Reasoning:", (reasoning or "").strip() or "(none)"]
    return "\n".join(lines)


def extraction_request(
    task: TaskRules,
    row: Any,
    evidence: Sequence[Any] | None,
    reasoning: str | None,
    params: Mapping[str, Any] | None = None,
    *,
    max_claims: int = MAX_CLAIMS,
) -> ChatRequest:
    """The LLM claim-extraction request for one completion (TimeSPEC, TEMPO App. I.3 structure).

    One system and one user message: the task description, the target event, the cutoff,
    the categories with their meanings, the four requirements (comprehensive, faithful,
    self-contained, atomic), the exclusion of predictions / judgements / speculation, the
    evidence list (ids and facts, no dates) and the reasoning. The answer is constrained by
    :func:`extraction_schema`.

    Args:
        task: the :class:`~anachron.tasks.base.Task`.
        row: the instance row (``instance_id``, ``cutoff_date``, ``inputs``).
        evidence: the completion's evidence items; reasoning: its reasoning text.
        params: decoding parameters (only keys the provider knows).
        max_claims: ``maxItems`` of the claims array.
    """
    items = evidence_dicts(evidence)
    task_desc, event = describe_instance(task, row)
    cutoff = _row_get(row, "cutoff_date", "")
    cats = "\n".join(f"- {c}: {CATEGORY_NAMES[c]}" for c in CATEGORIES)
    system = (
        "You break an analyst's written rationale into atomic factual claims and label each claim with a "
        "temporal category. You do not judge whether claims are true."
    )
    user = (
        f"Prediction task: {task_desc}\n"
        f"What is being predicted: {event}\n"
        f"Knowledge cutoff of the analyst: {cutoff}\n\n"
        "Write out every factual claim made in the rationale below.\n"
        "1. Cover everything: each factual assertion in the evidence list and in the reasoning.\n"
        "2. Stay faithful: keep the rationale's own figures, names and dates; add nothing.\n"
        "3. Make each claim readable on its own: replace pronouns with the names they stand for.\n"
        "4. Keep claims atomic: one checkable fact per claim; split sentences that state several.\n"
        "Leave out predictions, opinions, judgements and speculation about what will or might happen.\n\n"
        "Categories:\n"
        f"{cats}\n"
        "Group A (A1-A5) can be dated. A4 is any statement of the very outcome being predicted; A5 is anything "
        "that follows from that outcome. Group B is timeless: B1 stable background facts, B2 definitions.\n\n"
        "For each claim give: claim_id (1, 2, ...); text (the self-contained claim); original_span (the words "
        "of the rationale it comes from, copied exactly); temporal_ref (the date or period the claim refers to, "
        "as written, e.g. 2019-10-31, Q3 2019, March 2020, or an empty string if none); category (A1-A5, B1, B2); "
        "category_reason (a few words).\n\n"
        f"{_rationale_text(items, reasoning or '')}\n\n"
        'Answer with one JSON object only: {"claims": [{"claim_id": 1, "text": "...", "original_span": "...", '
        '"temporal_ref": "...", "category": "A1", "category_reason": "..."}]}'
    )
    return ChatRequest(
        messages=[{"role": "system", "content": system}, {"role": "user", "content": user}],
        params=dict(params or {}),
        response_schema=extraction_schema(max_claims),
        tag={"instance_id": _row_get(row, "instance_id", ""), "step": "extract_claims"},
    )


def _tokens(text: str) -> list[str]:
    return [w for w in re.findall(r"[a-z0-9]+(?:\.[0-9]+)?", text.lower()) if w not in STOP_WORDS]


def match_evidence(text: str, evidence: list[dict[str, Any]], min_overlap: float = 0.6) -> dict[str, Any] | None:
    """The evidence item a claim (or span) restates, or None.

    A match: the normalized texts contain one another, or at least ``min_overlap`` of the
    claim's content words (and at least two) appear in the fact and every number of the claim
    appears in the fact. The best-overlapping item wins.
    """
    key = norm_text(strip_citations(text))
    if not key:
        return None
    toks = set(_tokens(key))
    nums = {t for t in toks if t[0].isdigit()}
    best, best_score = None, 0.0
    for e in evidence:
        fkey = norm_text(e["fact"])
        ftoks = set(_tokens(fkey))
        if key in fkey or (fkey and fkey in key):
            score = 2.0
        elif toks and len(toks & ftoks) >= 2 and nums <= ftoks:
            score = len(toks & ftoks) / len(toks)
            if score < min_overlap:
                continue
        else:
            continue
        if score > best_score:
            best, best_score = e, score
    return best


def _category_of(raw: Any) -> str | None:
    m = re.match(r"\s*([AaBb])\s*([1-5])", str(raw or ""))
    if not m:
        return None
    cat = m[1].upper() + m[2]
    return cat if cat in CATEGORIES else None


def _cites_of_span(span: str, reasoning: str) -> tuple[int, ...]:
    key = norm_text(strip_citations(span))
    if not key:
        return ()
    for sentence in split_sentences(reasoning):
        if key in norm_text(strip_citations(sentence)):
            return cited_in(sentence)
    return ()


def parse_extraction(
    text: str | None,
    evidence: Sequence[Any] | None,
    reasoning: str | None,
    context: Mapping[str, Any] | None = None,
    *,
    cover_evidence: bool = True,
) -> tuple[list[Claim] | None, str | None]:
    """Claims from the LLM extractor's answer; ``(claims, None)`` or ``(None, reason)``. Never raises.

    Decoding: the whole text, a fenced block, the outermost brackets
    (:func:`~anachron.llm.decode.decode_json`).
    Each claim needs a non-empty ``text`` (placeholders and repeats are dropped). Its
    category is the LLM's when it is one of :data:`CATEGORIES` ("a1", "A1 - event" accepted),
    rule ``"llm: <category_reason>"``; otherwise :func:`categorize` decides and the rule
    records that the LLM's category was invalid.

    Dating: a claim whose ``original_span`` (or text) restates an evidence fact
    (:func:`match_evidence`) takes that item's id and ``source_date``; otherwise it is a
    reasoning claim dated by its ``temporal_ref`` when that parses as a date
    (:func:`~anachron.verify.dates.normalize_declared`), else by the single evidence item
    cited in the reasoning sentence holding its span, else undated.

    With ``cover_evidence`` an evidence item that no LLM claim restates is added as a
    deterministic claim (rule ``"... (evidence item not covered by the LLM extractor)"``), so
    that the LLM never silently drops a declared fact.

    Unusable: empty / not JSON / no ``claims`` list / no claim with text -> ``(None, reason)``.
    """
    ctx: Mapping[str, Any] = context or {}
    items = evidence_dicts(evidence)
    decoded = decode_json(text, list, ("claims",))
    if decoded.value is None:
        return None, decoded.problem
    raw = decoded.value
    dates = {e["id"]: e["source_date"] for e in items}
    claims: list[Claim] = []
    seen: set[str] = set()
    covered: set[int] = set()
    for c in raw:
        if not isinstance(c, Mapping):
            continue
        ctext = " ".join(str(c.get("text") or "").split())
        if not ctext or not any(ch.isalnum() for ch in ctext):
            continue
        ctext = strip_citations(ctext)
        key = norm_text(ctext)
        if key in seen:
            continue
        seen.add(key)
        span = " ".join(str(c.get("original_span") or "").split()) or None
        tref = " ".join(str(c.get("temporal_ref") or "").split()) or None
        reason = " ".join(str(c.get("category_reason") or "").split())[:MAX_REASON_CHARS]
        cat = _category_of(c.get("category"))
        if cat is None:
            cat, rule = categorize(ctext, ctx)
            rule = f"{rule} (llm category {str(c.get('category'))[:20]!r} invalid)"
        else:
            rule = f"llm: {reason}" if reason else "llm"
        ev = (match_evidence(span, items) if span else None) or match_evidence(ctext, items)
        cites: tuple[int, ...] = ()
        if ev is not None:
            source, eid, declared = "evidence", ev["id"], ev["source_date"]
            covered.add(ev["id"])
        else:
            source, eid, declared = "reasoning", None, None
            if tref and normalize_declared(tref).status != "undated":
                declared = tref
            cites = _cites_of_span(span or ctext, reasoning or "")
            if declared is None:
                known = [k for k in cites if k in dates]
                if len(cites) == 1 and len(known) == 1:
                    declared = dates[known[0]]
        claims.append(
            Claim(text=ctext, source=source, evidence_id=eid, declared_date_raw=declared, category=cat,
                  category_rule=rule, extractor=EXTRACTOR_LLM, temporal_ref=tref, cited_ids=cites,
                  original_span=span)
        )
    if not claims:
        return None, "answer holds no usable claim"
    if cover_evidence:
        for item in items:
            if item["id"] in covered or norm_text(item["fact"]) in seen:
                continue
            seen.add(norm_text(item["fact"]))
            cat, rule = categorize(item["fact"], ctx)
            claims.append(
                Claim(text=item["fact"], source="evidence", evidence_id=item["id"],
                      declared_date_raw=item["source_date"], category=cat,
                      category_rule=f"{rule} (evidence item not covered by the LLM extractor)",
                      extractor=EXTRACTOR_DETERMINISTIC)
            )
    return claims, None


def _context_for(contexts: Any, i: int, row: Any, task: TaskRules) -> dict[str, Any]:
    ctx: Any = None
    if isinstance(contexts, Mapping):
        ctx = contexts.get(_row_get(row, "instance_id"))
    elif contexts is not None and i < len(contexts):
        ctx = contexts[i]
    out = dict(ctx or {})
    out.setdefault("task", task)
    out.setdefault("cutoff_date", _row_get(row, "cutoff_date"))
    return out


def extract_claims_llm(
    client: Any,
    task: TaskRules,
    rows: Sequence[Any] | "pd.DataFrame",
    outputs: Sequence[tuple[Sequence[Any] | None, str | None]],
    params: Mapping[str, Any] | None = None,
    contexts: Sequence[Mapping[str, Any]] | Mapping[str, Mapping[str, Any]] | None = None,
    *,
    max_claims: int = MAX_CLAIMS,
    cover_evidence: bool = True,
    desc: str = "extract claims",
) -> list[tuple[list[Claim], dict[str, Any]]]:
    """LLM claim extraction for many completions in one ``client.complete_many`` batch.

    Args:
        client: an :class:`~anachron.llm.client.LLMClient` (anything with
            ``complete_many(requests, desc=...) -> list[ChatResult]``).
        task: the Task.
        rows: instance rows (a DataFrame or a list of rows / dicts), aligned with ``outputs``.
        outputs: ``(evidence, reasoning)`` per row.
        params: decoding parameters of the extraction calls.
        contexts: per-row categorization contexts (a list aligned with ``rows``, or a mapping
            ``instance_id -> context``); ``task`` and ``cutoff_date`` are filled in if missing.

    Returns:
        One ``(claims, trace)`` per row, in order. ``trace`` = ``{"step": "extract_claims",
        "extractor": "llm"|"deterministic", "reason": None|str, "cache_key": str|None,
        "n_claims": int}``. A row with nothing to extract makes no call (reason ``"nothing to
        extract"``); an LLM error or an unusable answer (:func:`parse_extraction`) falls back to
        :func:`extract_claims`, the reason recorded.
    """
    if hasattr(rows, "iterrows"):
        rows = [r for _, r in rows.iterrows()]  # type: ignore[union-attr]
    rows = list(rows)
    if len(rows) != len(outputs):
        raise ValueError(f"rows ({len(rows)}) and outputs ({len(outputs)}) differ in length")
    ctxs = [_context_for(contexts, i, row, task) for i, row in enumerate(rows)]
    todo: list[int] = []
    requests: list[ChatRequest] = []
    for i, (row, (evidence, reasoning)) in enumerate(zip(rows, outputs)):
        if evidence_dicts(evidence) or (reasoning or "").strip():
            todo.append(i)
            requests.append(extraction_request(task, row, evidence, reasoning, params, max_claims=max_claims))
    results = client.complete_many(requests, desc=desc) if requests else []
    by_row = dict(zip(todo, results))
    out: list[tuple[list[Claim], dict[str, Any]]] = []
    for i, (evidence, reasoning) in enumerate(outputs):
        trace: dict[str, Any] = {"step": "extract_claims", "extractor": EXTRACTOR_LLM, "reason": None, "cache_key": None}
        res = by_row.get(i)
        claims: list[Claim] | None = None
        if res is None:
            trace.update(extractor=EXTRACTOR_DETERMINISTIC, reason="nothing to extract")
        else:
            trace["cache_key"] = res.cache_key or None
            if res.error is not None:
                trace["reason"] = f"llm error: {res.error}"
            else:
                claims, why = parse_extraction(res.text, evidence, reasoning, ctxs[i], cover_evidence=cover_evidence)
                trace["reason"] = why
        if claims is None:
            if trace["extractor"] == EXTRACTOR_LLM:
                trace["extractor"] = EXTRACTOR_DETERMINISTIC
                trace["reason"] = f"fallback to deterministic extractor: {trace['reason']}"
            claims = extract_claims(evidence, reasoning, ctxs[i])
        trace["n_claims"] = len(claims)
        out.append((claims, trace))
    return out
