"""Layer 3: the LLM date-plausibility verifier (docs/verification.md#llm; TEMPO paper App. I.4).

A verifier model reads claims with their declared dates and says, for each, whether the
declared date is plausible for that kind of information; when it is too early, it gives the
earliest realistic public date. The leak verdict itself stays deterministic: the caller
compares the effective date (corrected, else declared) with the cutoff.

Batching follows the paper: items are grouped by cutoff date (one prompt states one cutoff)
and sent in batches of at most 80. An answer that is not valid JSON, or that leaves items
unanswered, is asked again once (same prompt, ``sample_index=1``: a distinct cache key).
Items still without a valid verdict come back with ``status="fallback"`` and the reason, so
that the caller applies the rules layer instead (never silently dropped, never raised).

The prompt follows the structure of the paper's verifier prompt (cutoff, per-item fact and
declared date, the publication-lag rules, the correction rule, a JSON answer); the wording is
the project's own.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from anachron.dates import is_iso_day, to_date, to_iso
from anachron.llm.decode import decode_json
from anachron.llm.types import ChatRequest, ChatResult

#: Items per verifier prompt (the paper's chunk size).
BATCH_SIZE = 80
MAX_REASON_CHARS = 160
#: ISO day pattern written with character classes (llama.cpp's converter mishandles ``\\d``).
ISO_DAY_PATTERN = "^(19|20)[0-9]{2}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$"

STATUS_OK = "ok"
STATUS_FALLBACK = "fallback"


@dataclass
class LLMVerdict:
    """The verifier's word on one item.

    Attributes:
        plausible: True if the declared date fits the kind of information, False if it is too
            early; None when ``status == "fallback"``.
        corrected_date: the earliest realistic public date when ``plausible`` is False (may be
            None if the model gave none); always None when ``plausible`` is True.
        reason: the model's short reason, or why there is no verdict.
        status: ``"ok"``, or ``"fallback"`` (no usable answer after one retry: the caller
            applies the rules layer and records ``reason``).
    """

    plausible: bool | None
    corrected_date: dt.date | None
    reason: str
    status: str = STATUS_OK

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable form (date as ISO string)."""
        return {
            "plausible": self.plausible,
            "corrected_date": self.corrected_date.isoformat() if self.corrected_date else None,
            "reason": self.reason,
            "status": self.status,
        }


def verdict_schema(n_items: int) -> dict[str, Any]:
    """JSON schema of one batch's answer: ``{"verdicts": [{"index", "plausible", "corrected_date",
    "reason"}, ...]}`` with exactly ``n_items`` entries (llama.cpp-grammar safe).

    The array sits under an object key because OpenAI-compatible ``json_object`` modes only
    return objects; the parser accepts a bare array too.
    """
    return {
        "type": "object",
        "properties": {
            "verdicts": {
                "type": "array",
                "minItems": n_items,
                "maxItems": n_items,
                "items": {
                    "type": "object",
                    "properties": {
                        "index": {"type": "integer"},
                        "plausible": {"type": "boolean"},
                        "corrected_date": {"anyOf": [{"type": "string", "pattern": ISO_DAY_PATTERN}, {"type": "null"}]},
                        "reason": {"type": "string", "maxLength": MAX_REASON_CHARS},
                    },
                    "required": ["index", "plausible", "corrected_date", "reason"],
                },
            }
        },
        "required": ["verdicts"],
    }


def plausibility_requests(
    cutoff: str | dt.date, items: Sequence[Mapping[str, Any]], params: Mapping[str, Any] | None = None,
    *, sample_index: int = 0,
) -> ChatRequest:
    """One verifier request for a batch of items that share ``cutoff``.

    Args:
        cutoff: the instances' cutoff date (ISO).
        items: ``{"fact", "declared_date"}`` dicts (declared date ISO or None); their position
            in the list is the ``index`` the model answers with (0-based).
        params: decoding parameters.
        sample_index: 0 for the first ask, 1 for the retry (a distinct cache key).

    Returns:
        A :class:`ChatRequest` (system + user message, :func:`verdict_schema` attached).
    """
    cutoff_s = to_iso(cutoff) or ""
    listing = [
        {"index": i, "fact": str(it.get("fact") or ""), "declared_date": to_iso(it.get("declared_date"))}
        for i, it in enumerate(items)
    ]
    system = (
        "You check the dates attached to facts in financial, sports and legal analyses. You judge only "
        "whether each date is believable for that kind of information, not whether the fact is true."
    )
    user = (
        f"Cutoff date of the analysis: {cutoff_s}\n\n"
        "Each item below gives a fact and declared_date, the day the analyst says the information first "
        "became public (YYYY-MM-DD). For every item, decide whether that day is plausible: could this kind "
        "of information really have been public by then?\n\n"
        "When information becomes public:\n"
        "- Full-year results for a year Y appear in January or February of year Y+1.\n"
        "- Quarterly results appear one to two months after the quarter ends.\n"
        "- A stock price is known on its own trading day.\n"
        "- A merger or acquisition: the day of the press release or the 8-K filing.\n"
        "- A player contract: the day the signing was announced.\n"
        "- A court decision: the day the decision or opinion was issued.\n"
        "- A 10-K annual report: about 60 to 90 days after the fiscal year ends.\n\n"
        "If the declared date is earlier than the information could have been public, answer "
        "plausible=false and give in corrected_date the earliest realistic public date (YYYY-MM-DD). "
        "If the declared date is believable, answer plausible=true and corrected_date=null. If an item has "
        "no declared date, give the earliest realistic public date with plausible=false, or plausible=true "
        "and corrected_date=null when nothing can be said. Keep each reason to a few words.\n\n"
        f"Items:\n{json.dumps(listing, ensure_ascii=False)}\n\n"
        f"Answer with one JSON object only, with exactly one verdict per item index 0 to {len(listing) - 1}: "
        '{"verdicts": [{"index": 0, "plausible": true, "corrected_date": null, "reason": "..."}]}'
    )
    return ChatRequest(
        messages=[{"role": "system", "content": system}, {"role": "user", "content": user}],
        params=dict(params or {}),
        response_schema=verdict_schema(len(listing)),
        sample_index=sample_index,
        tag={"step": "plausibility", "cutoff_date": cutoff_s, "n_items": len(listing)},
    )


def _parse_date(value: Any) -> tuple[dt.date | None, bool]:
    """``(date, ok)``: None/"" /"null" -> (None, True); a valid ISO day -> (date, True); else (None, False)."""
    if value is None:
        return None, True
    s = str(value).strip()
    if s.lower() in ("", "null", "none"):
        return None, True
    return (to_date(s), True) if is_iso_day(s) else (None, False)


def _as_bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    return None


def parse_verdicts(text: str | None, n_items: int) -> tuple[dict[int, LLMVerdict], str | None]:
    """Valid verdicts of one answer, by item index, and what was wrong with it (None if nothing).

    A verdict is valid when its ``index`` is an integer in ``[0, n_items)`` answered once (an
    index answered twice with different verdicts counts as unanswered), ``plausible`` is a
    boolean (or "true"/"false"), and, when ``plausible`` is false, ``corrected_date`` is null or a
    real ISO day (with ``plausible`` true any ``corrected_date`` is ignored). Never raises.
    """
    decoded = decode_json(text, list, ("verdicts", "items", "results"))
    if decoded.value is None:
        return {}, f"not valid JSON ({decoded.problem})"
    raw = decoded.value
    got: dict[int, LLMVerdict] = {}
    clash: set[int] = set()
    problems: list[str] = []
    for entry in raw:
        if not isinstance(entry, Mapping):
            problems.append("non-object entry")
            continue
        idx = entry.get("index")
        if isinstance(idx, str) and idx.strip().isdigit():
            idx = int(idx.strip())
        if isinstance(idx, bool) or not isinstance(idx, int) or not 0 <= idx < n_items:
            problems.append(f"bad index {idx!r}")
            continue
        plausible = _as_bool(entry.get("plausible"))
        corrected, date_ok = _parse_date(entry.get("corrected_date"))
        if plausible:
            corrected, date_ok = None, True  # nothing to correct: a stray date is ignored
        if plausible is None or not date_ok:
            problems.append(f"index {idx}: bad plausible/corrected_date")
            continue
        reason = " ".join(str(entry.get("reason") or "").split())[:MAX_REASON_CHARS]
        v = LLMVerdict(plausible=plausible, corrected_date=corrected, reason=reason, status=STATUS_OK)
        if idx in got and got[idx] != v:
            clash.add(idx)
            problems.append(f"index {idx} answered twice")
        got.setdefault(idx, v)
    for idx in clash:
        got.pop(idx, None)
    missing = n_items - len(got)
    if missing:
        problems.append(f"{missing} of {n_items} items unanswered")
    return got, ("; ".join(dict.fromkeys(problems)) or None)


def _batches(items: Sequence[Mapping[str, Any]], batch_size: int) -> list[tuple[str, list[int]]]:
    """``(cutoff, item positions)`` per batch: grouped by cutoff in order of first appearance,
    each group cut into chunks of at most ``batch_size``."""
    groups: dict[str, list[int]] = {}
    for i, it in enumerate(items):
        groups.setdefault(to_iso(it.get("cutoff_date")) or "", []).append(i)
    out = []
    for cutoff, idxs in groups.items():
        for k in range(0, len(idxs), batch_size):
            out.append((cutoff, idxs[k : k + batch_size]))
    return out


def _result_problem(res: ChatResult, n: int) -> tuple[dict[int, LLMVerdict], str | None]:
    if res.error is not None:
        return {}, f"call failed ({res.error})"
    return parse_verdicts(res.text, n)


def check_plausibility(
    client: Any,
    items: Sequence[Mapping[str, Any]],
    params: Mapping[str, Any] | None = None,
    batch_size: int = BATCH_SIZE,
    *,
    desc: str = "plausibility",
) -> list[LLMVerdict]:
    """Date-plausibility verdicts for ``items``, in input order.

    Args:
        client: an :class:`~anachron.llm.client.LLMClient` on the verifier model (anything with
            ``complete_many(requests, desc=...) -> list[ChatResult]``).
        items: ``{"fact", "declared_date" (ISO or None), "cutoff_date"}`` dicts.
        params: decoding parameters of the verifier calls.
        batch_size: items per prompt (≤ 80 in the paper).

    Every batch is sent once (one ``complete_many``); batches whose answer is not valid JSON,
    failed, or left items without a valid verdict are asked again once with ``sample_index=1``
    (a second ``complete_many``). Verdicts of the first answer are kept, gaps are filled from
    the second; items with no valid verdict after that get ``status="fallback"`` and a reason
    ("verifier answer not valid JSON twice: ..." when neither answer decoded). Never raises on
    model output.

    Raises:
        ValueError: ``batch_size`` < 1.
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    items = list(items)
    batches = _batches(items, batch_size)
    first = client.complete_many(
        [plausibility_requests(c, [items[i] for i in idxs], params) for c, idxs in batches], desc=desc
    ) if batches else []
    answers: list[tuple[dict[int, LLMVerdict], str | None]] = [
        _result_problem(res, len(idxs)) for res, (_, idxs) in zip(first, batches)
    ]
    redo = [b for b, (got, _) in enumerate(answers) if len(got) < len(batches[b][1])]
    second: dict[int, tuple[dict[int, LLMVerdict], str | None]] = {}
    if redo:
        retry = client.complete_many(
            [plausibility_requests(batches[b][0], [items[i] for i in batches[b][1]], params, sample_index=1)
             for b in redo],
            desc=f"{desc} (retry)",
        )
        for b, res in zip(redo, retry):
            second[b] = _result_problem(res, len(batches[b][1]))
    out: list[LLMVerdict | None] = [None] * len(items)
    for b, (_, idxs) in enumerate(batches):
        got1, why1 = answers[b]
        got2, why2 = second.get(b, ({}, None))
        for k, pos in enumerate(idxs):
            v = got1.get(k) or got2.get(k)
            if v is None:
                if not got1 and not got2 and (why1 or "").startswith("not valid JSON") and (why2 or "").startswith(
                    "not valid JSON"
                ):
                    reason = f"verifier answer not valid JSON twice: {why1}; retry: {why2}"
                else:
                    reason = f"no valid verifier verdict after one retry: {why1}; retry: {why2}"
                v = LLMVerdict(plausible=None, corrected_date=None, reason=reason, status=STATUS_FALLBACK)
            out[pos] = v
    return [v for v in out if v is not None]
