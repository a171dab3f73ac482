"""One decoder for every JSON answer of a model.

Models wrap the JSON they were asked for in prose and Markdown fences. Every reader of a
model answer goes through :func:`decode_json`: the shared output parser
(:func:`anachron.llm.structured.parse_output`), the LLM claim extractor
(:func:`anachron.verify.extract.llm.parse_extraction`), the date-plausibility verifier
(:func:`anachron.verify.layers.llm.parse_verdicts`), RAG's query generation
(:func:`anachron.methods.rag.parse_queries`) and the Shapley value calls.

Candidates, tried in this order; the first that decodes to the wanted kind wins:

1. ``whole``: the whole text (surrounding whitespace ignored);
2. ``fenced``: the content of the first Markdown code fence, untagged or tagged ``json`` in
   any case (```` ```json ````, ```` ```JSON ````, ```` ```Json ````);
3. ``span``: the outermost bracket span, from the first opening to the last closing
   bracket of a kind: ``[...]`` then ``{...}`` when a list is wanted, ``{...}`` otherwise.
   When the span holds more than one JSON value (``{"a": 1} and then {"b": 2}``), the first
   complete value at its start is taken, unless a comma or closing bracket follows it: then it
   is an item of a larger value that does not decode (``[{"a": 1}, {"b": 2}]`` is no object;
   nor is the inner list of a truncated object).

Never raises on model text.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Sequence

#: Where the decoded value came from (:attr:`Decoded.source`).
FROM_WHOLE = "whole"
FROM_FENCE = "fenced"
FROM_SPAN = "span"

#: :attr:`Decoded.problem` of a None or blank answer.
EMPTY_ANSWER = "empty answer"

_FENCE = re.compile(r"```(?:json)?\s*\n?(.*?)```", re.DOTALL | re.IGNORECASE)
_DECODER = json.JSONDecoder()


@dataclass(frozen=True)
class Decoded:
    """Result of :func:`decode_json`.

    Attributes:
        value: the decoded value, of the wanted kind; None when no candidate gave one.
        source: the candidate it came from (:data:`FROM_WHOLE`, :data:`FROM_FENCE`,
            :data:`FROM_SPAN`); None when there is no value.
        problem: None when there is a value; else why not, from the last candidate tried:
            :data:`EMPTY_ANSWER`, ``"not valid JSON (<msg> at char <pos>)"`` or
            ``"JSON is a <type>, expected a <kind>"``.
        found_json: True when some candidate decoded as JSON, of whatever kind (tells an
            answer that is not JSON from one that is JSON of the wrong shape).
    """

    value: Any = None
    source: str | None = None
    problem: str | None = None
    found_json: bool = False


def _candidates(text: str, kind: type) -> list[tuple[str, str]]:
    """``(source, candidate text)`` pairs of ``text``, in the order of the module docstring."""
    out = [(FROM_WHOLE, text.strip())]
    m = _FENCE.search(text)
    if m:
        out.append((FROM_FENCE, m.group(1).strip()))
    for open_, close in (("[", "]"), ("{", "}")) if kind is list else (("{", "}"),):
        i, j = text.find(open_), text.rfind(close)
        if i != -1 and j > i:
            out.append((FROM_SPAN, text[i : j + 1]))
    return out


def _loads(source: str, cand: str) -> Any:
    """``json.loads(cand)``; a bracket span with extra data after its first value gives that value,
    unless a comma or closing bracket follows it (then it is an item of a larger, broken value)."""
    try:
        return json.loads(cand)
    except json.JSONDecodeError as exc:
        if source != FROM_SPAN or exc.msg != "Extra data":
            raise
        value, end = _DECODER.raw_decode(cand)
        if cand[end:].lstrip()[:1] in (",", "]", "}"):
            raise
        return value


def decode_json(text: str | None, kind: type = dict, list_keys: Sequence[str] = ()) -> Decoded:
    """Decode the JSON ``kind`` (``dict`` or ``list``) in a model answer; never raises.

    Args:
        text: the answer (None or blank gives problem :data:`EMPTY_ANSWER`); not a str: its ``str``.
        kind: ``dict`` or ``list``. A candidate that decodes to another type is skipped.
        list_keys: with ``kind=list``, an object holding a list is accepted too: its value under
            the first of ``list_keys`` that holds a list, else its first list value
            (``{"verdicts": [...]}`` -> the list).

    Returns:
        A :class:`Decoded`.
    """
    if text is None or not str(text).strip():
        return Decoded(problem=EMPTY_ANSWER)
    text = str(text)
    last_err = "not valid JSON"
    found = False
    for source, cand in _candidates(text, kind):
        try:
            val = _loads(source, cand)
        except (json.JSONDecodeError, ValueError) as exc:
            last_err = f"not valid JSON ({exc.msg} at char {exc.pos})" if isinstance(exc, json.JSONDecodeError) else "not valid JSON"
            continue
        found = True
        if kind is list and isinstance(val, dict):
            lists = [val[k] for k in list_keys if isinstance(val.get(k), list)]
            lists += [v for v in val.values() if isinstance(v, list)]
            if lists:
                return Decoded(lists[0], source, None, True)
        if isinstance(val, kind):
            return Decoded(val, source, None, True)
        last_err = f"JSON is a {type(val).__name__}, expected a {kind.__name__}"
    return Decoded(problem=last_err, found_json=found)


def complete_objects(text: str | None, required_keys: Sequence[str] = ()) -> list[dict[str, Any]]:
    """Every complete JSON object in ``text`` that has all ``required_keys``, outermost first.

    Meant for answers that are not valid JSON as a whole, e.g. cut off at the token limit:
    ``'{"evidence": [{"id": 1, "fact": "A", "source_date": "2019-01-02"}, {"id": 2, "fa'``
    holds one complete evidence object. The text is scanned left to right; at each ``{`` a JSON
    value is decoded (:meth:`json.JSONDecoder.raw_decode`); a decoded object with the keys is kept
    and the scan continues after it, otherwise at the next ``{``. Never raises.

    Returns:
        The objects (dicts), in text order; empty for None or no such object.
    """
    if not text:
        return []
    dec = json.JSONDecoder()
    out: list[dict[str, Any]] = []
    i = text.find("{")
    while i != -1:
        try:
            val, end = dec.raw_decode(text, i)
        except (json.JSONDecodeError, ValueError, RecursionError):
            i = text.find("{", i + 1)
            continue
        if isinstance(val, dict) and all(k in val for k in required_keys):
            out.append(val)
            i = text.find("{", end)
        else:
            i = text.find("{", i + 1)
    return out
