"""Citations and sentences of a completion's reasoning: ``[k]`` references to evidence items.

Pure text functions, shared by the claim extractors (:mod:`anachron.verify.extract`) and the
verification pipeline (:mod:`anachron.verify.pipeline`, the ``cited`` column).
"""

from __future__ import annotations

import re

#: A bracket citation with its numbers (group 1), for :func:`cited_ids`.
_CITE_NUMBERS = re.compile(r"\[([\d\s,;\-–]+)\]")


def cited_ids(reasoning: str) -> set[int]:
    """Evidence numbers cited in ``reasoning`` as [k], [1, 3], [1][2] or [2-4]."""
    out: set[int] = set()
    for m in _CITE_NUMBERS.finditer(reasoning or ""):
        for part in re.split(r"[,;\s]+", m[1].strip()):
            if not part:
                continue
            rng = re.fullmatch(r"(\d+)\s*[-–]\s*(\d+)", part)
            if rng:
                a, b = int(rng[1]), int(rng[2])
                if 0 < b - a < 50:
                    out.update(range(a, b + 1))
            elif part.isdigit():
                out.add(int(part))
    return out


_ABBREV = frozenset(
    "inc corp co ltd llc plc no nos v vs u.s u.k u.n mr mrs ms dr jr sr st jan feb mar apr jun jul aug sep sept "
    "oct nov dec e.g i.e etc approx est fig al dept gov sen rep ave bros mt ft lt gen col capt sgt cf p pp ed "
    "n.a s.a a.g d.c j op cert".split()
)
_BOUNDARY = re.compile(r"([.!?])([\"')\]]*)\s+")
#: A bracket citation starting with a digit, with the space before it: what :func:`strip_citations` removes.
_CITE = re.compile(r"\s*\[[0-9][0-9\s,;\-–]*\]")
_LEADING_CITES = re.compile(r"^((?:\s*\[[0-9][0-9\s,;\-–]*\])+)\s*")


def split_sentences(text: str) -> list[str]:
    """Split reasoning text into sentences (and "; " clauses and lines).

    A period after a known abbreviation ("Inc.", "U.S.", "v.", "No.", "Jan."), an initial
    ("J. Smith") or inside a number ("$3.5B") does not end a sentence. Citations that
    follow a sentence's final period ("... fell. [2] Next") stay with that sentence.
    """
    out: list[str] = []
    for block in re.split(r"\n+|;\s+", text or ""):
        start = 0
        pieces: list[str] = []
        for m in _BOUNDARY.finditer(block):
            end = m.end()
            nxt = block[end : end + 1]
            if not nxt or not (nxt.isupper() or nxt.isdigit() or nxt in "\"'([$"):
                continue
            before = block[start : m.start()]
            word = re.search(r"([A-Za-z.]+)$", before)
            if m[1] == "." and word:
                w = word[1].lower().strip(".")
                if w in _ABBREV or (len(w) == 1 and word[1][-1:].isalpha()) or re.fullmatch(r"(?:[a-z]\.)+[a-z]", w):
                    continue
            pieces.append(block[start:end])
            start = end
        pieces.append(block[start:])
        for p in pieces:
            p = p.strip()
            if not p:
                continue
            lead = _LEADING_CITES.match(p)
            if lead and out:
                out[-1] = out[-1] + " " + lead[1].strip()
                p = p[lead.end() :].strip()
            if p:
                out.append(p)
    return [s for s in out if any(ch.isalnum() for ch in _CITE.sub("", s))]


def strip_citations(text: str) -> str:
    """``text`` without bracket citations ([1], [1, 3], [2-4]) and with tidy spacing."""
    out = _CITE.sub("", text)
    out = re.sub(r"\s+([.,;:!?])", r"\1", out)
    return " ".join(out.split())


def cited_in(sentence: str) -> tuple[int, ...]:
    """The evidence numbers ``sentence`` cites (:func:`cited_ids`), in increasing order."""
    return tuple(sorted(cited_ids(sentence)))
