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

Strict decoding rejects an object that repeats a key (``{"a": 1, "a": 2}``: which value is
meant?): :attr:`Decoded.duplicate_keys` names the keys and there is no value.

When no candidate is strict JSON, two cases are told apart by scanning the text from its first
opening bracket, skipping string contents (:func:`ends_inside_value`):

* **truncated**: the text ends inside a JSON value (an open string or an unclosed bracket), as
  an answer cut off at the token limit does. It is *not* repaired: closing its brackets would
  give a valid but shorter answer (a ranking missing its last names, an evidence list missing
  its last items) that nobody could tell from a complete one. Truncation thus wins over repair,
  also when the text has other slips too. :attr:`Decoded.truncated` is True, no value.
* **repairable**: otherwise the candidates are handed, in the same order, to the ``json_repair``
  library (trailing commas, single quotes, comments, Python literals, a mismatched or extra
  bracket); the first repaired value of the wanted kind wins, with source :data:`FROM_REPAIR`.
  Its duplicate keys are not seen (the library keeps the last value).

This detection does not look at ``finish_reason``, which some servers misreport; an answer that
lacks only its final closing bracket is therefore ``truncated`` too, unless it sits in a code
fence the model closed (then it was not cut off, and is repaired).

Never raises on model text.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Sequence

import json_repair

#: Where the decoded value came from (:attr:`Decoded.source`).
FROM_WHOLE = "whole"
FROM_FENCE = "fenced"
FROM_SPAN = "span"
FROM_REPAIR = "repaired"

#: :attr:`Decoded.problem` of a None or blank answer.
EMPTY_ANSWER = "empty answer"

_FENCE = re.compile(r"```(?:json)?\s*\n?(.*?)```", re.DOTALL | re.IGNORECASE)
_OPENERS = {dict: "{", list: "[{"}
_CLOSER_OF = {"}": "{", "]": "["}


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
        truncated: True when no candidate is strict JSON and the text ends inside a JSON value
            (:func:`ends_inside_value`); there is no value then.
        duplicate_keys: the keys repeated within one object of the first candidate that decoded
            (sorted); non-empty means the answer was rejected and there is no value.
    """

    value: Any = None
    source: str | None = None
    problem: str | None = None
    found_json: bool = False
    truncated: bool = False
    duplicate_keys: tuple[str, ...] = ()


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


class _Strict:
    """A strict JSON decoder that records the keys repeated within one object (``object_pairs_hook``)."""

    def __init__(self) -> None:
        self.duplicates: set[str] = set()
        self.decoder = json.JSONDecoder(object_pairs_hook=self._pairs)

    def _pairs(self, pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for k, v in pairs:
            if k in out:
                self.duplicates.add(k)
            out[k] = v
        return out

    def loads(self, source: str, cand: str) -> Any:
        """``json.loads(cand)``; a bracket span with extra data after its first value gives that value,
        unless a comma or closing bracket follows it (then it is an item of a larger, broken value)."""
        self.duplicates.clear()
        try:
            return self.decoder.decode(cand)
        except json.JSONDecodeError as exc:
            if source != FROM_SPAN or exc.msg != "Extra data":
                raise
            self.duplicates.clear()
            value, end = self.decoder.raw_decode(cand)
            if cand[end:].lstrip()[:1] in (",", "]", "}"):
                raise
            return value


def ends_inside_value(text: str | None, kind: type = dict) -> bool:
    """True when ``text`` ends inside a JSON value: cut off (see the module docstring).

    The scan starts at the first ``{`` (``kind=dict``) or at the first ``[`` or ``{``
    (``kind=list``) and follows brackets outside double-quoted strings (a closer pops back to its
    own opener; a stray closer is ignored). It ends with False as soon as the first value is
    closed, so prose after it does not count; it is True when the text ends inside a string or
    with a bracket still open. False for text without an opening bracket, and when that bracket
    lies inside a closed code fence (the model ended the block itself: not cut off).
    """
    if not text:
        return False
    starts = [i for i in (text.find(o) for o in _OPENERS.get(kind, "{")) if i != -1]
    if not starts:
        return False
    start = min(starts)
    if any(m.start(1) <= start < m.end(1) for m in _FENCE.finditer(text)):
        return False
    stack: list[str] = []
    in_string = escaped = False
    for ch in text[start:]:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            stack.append(ch)
        elif ch in _CLOSER_OF and _CLOSER_OF[ch] in stack:
            while stack.pop() != _CLOSER_OF[ch]:
                pass
            if not stack:
                return False
    return True


def _repaired(text: str, kind: type, list_keys: Sequence[str]) -> Any:
    """The first candidate that ``json_repair`` turns into a value of ``kind`` (after ``list_keys``), or None."""
    for _, cand in _candidates(text, kind):
        try:
            val = json_repair.loads(cand)
        except Exception:  # the library must not crash a run on model text
            continue
        val = _of_kind(val, kind, list_keys)
        if val is not None:
            return val
    return None


def _of_kind(val: Any, kind: type, list_keys: Sequence[str]) -> Any:
    """``val`` when it is a ``kind``; for ``kind=list``, an object's list under ``list_keys`` (else its
    first list value); None otherwise."""
    if kind is list and isinstance(val, dict):
        lists = [val[k] for k in list_keys if isinstance(val.get(k), list)]
        lists += [v for v in val.values() if isinstance(v, list)]
        if lists:
            return lists[0]
    return val if isinstance(val, kind) else None


def decode_json(text: str | None, kind: type = dict, list_keys: Sequence[str] = ()) -> Decoded:
    """Decode the JSON ``kind`` (``dict`` or ``list``) in a model answer; never raises.

    Args:
        text: the answer (None or blank gives problem :data:`EMPTY_ANSWER`); not a str: its ``str``.
        kind: ``dict`` or ``list``. A candidate that decodes to another type is skipped.
        list_keys: with ``kind=list``, an object holding a list is accepted too: its value under
            the first of ``list_keys`` that holds a list, else its first list value
            (``{"verdicts": [...]}`` -> the list).

    Returns:
        A :class:`Decoded`: a strict value; or rejected for duplicate keys; or ``truncated``; or a
        repaired value (source :data:`FROM_REPAIR`); or no value (module docstring).
    """
    if text is None or not str(text).strip():
        return Decoded(problem=EMPTY_ANSWER)
    text = str(text)
    last_err = "not valid JSON"
    found = False
    strict = _Strict()
    for source, cand in _candidates(text, kind):
        try:
            val = strict.loads(source, cand)
        except (json.JSONDecodeError, ValueError, RecursionError) as exc:
            last_err = f"not valid JSON ({exc.msg} at char {exc.pos})" if isinstance(exc, json.JSONDecodeError) else "not valid JSON"
            continue
        found = True
        if strict.duplicates:
            dups = tuple(sorted(strict.duplicates))
            return Decoded(problem=f"duplicate key(s) {', '.join(map(repr, dups))}", found_json=True, duplicate_keys=dups)
        got = _of_kind(val, kind, list_keys)
        if got is not None:
            return Decoded(got, source, None, True)
        last_err = f"JSON is a {type(val).__name__}, expected a {kind.__name__}"
    if found:
        return Decoded(problem=last_err, found_json=True)
    if ends_inside_value(text, kind):
        return Decoded(problem=f"{last_err}; the text ends inside a JSON value (cut off)", truncated=True)
    repaired = _repaired(text, kind, list_keys)
    if repaired is not None:
        return Decoded(repaired, FROM_REPAIR, None, True)
    return Decoded(problem=last_err)


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
