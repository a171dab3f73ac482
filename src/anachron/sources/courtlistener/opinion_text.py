"""An opinion's text: the fields CourtListener stores, the PDF, and an excerpt without the outcome."""

from __future__ import annotations

import re
from typing import Any, Mapping

from anachron.sources.html_text import html_to_text
from anachron.sources.pdf import MAX_CHARS, MAX_PDF_PAGES, PAGE_TIMEOUT, join_pages, read_pdf_pages


def extract_pdf_text(
    data: bytes, *, max_pages: int = MAX_PDF_PAGES, max_chars: int = MAX_CHARS, page_timeout: float | None = PAGE_TIMEOUT
) -> str:
    """Text of the first ``max_pages`` pages of a PDF, cut to ``max_chars`` characters.

    :func:`anachron.sources.pdf.read_pdf_pages` (pdfplumber; blank and slow pages give no
    text, words hyphenated at a line end are rejoined) joined by :func:`~anachron.sources.pdf.join_pages`.
    Raises ``ValueError`` when the bytes are not a readable PDF.
    """
    return join_pages(read_pdf_pages(data, max_pages=max_pages, page_timeout=page_timeout), max_chars)


#: Where an opinion's text comes from, in order of preference: CourtListener's
#: ``html_with_citations`` (its cleanest, most complete rendering, tags stripped), ``html``,
#: ``plain_text`` (often an OCR or PDF extraction with page headers), then the opinion PDF.
TEXT_SOURCES = ("html_with_citations", "html", "plain_text", "pdf")


def stored_opinion_text(opinion: Mapping[str, Any], max_chars: int = MAX_CHARS) -> tuple[str, str]:
    """The text an opinion object carries, from the first non-blank field of :data:`TEXT_SOURCES`.

    Args:
        opinion: a ``/opinions/{id}/`` answer (``html_with_citations``, ``html``, ``plain_text``).
        max_chars: characters kept.

    Returns:
        ``(text, field)``: HTML fields as plain text (tags stripped, entities decoded,
        paragraphs on their own lines), cut to ``max_chars``; ``("", "none")`` when every
        field is blank (the caller then reads the PDF, the last source).
    """
    for field in TEXT_SOURCES[:-1]:
        raw = opinion.get(field)
        if not raw or not str(raw).strip():
            continue
        text = str(raw) if field == "plain_text" else html_to_text(str(raw))
        if text.strip():
            return text[:max_chars], field
    return "", "none"


def background_excerpt(text: Any, max_chars: int = 1500) -> str:
    """Opening of an opinion with every sentence that states or hints at the outcome removed.

    Sentences mentioning affirm/reverse/vacate/remand/dismiss, "we hold"/"we conclude",
    "for the reasons" or "judgment" are dropped; the rest is kept in order up to
    ``max_chars`` characters. Used to give appellate training prompts some facts without
    handing the model the disposition.
    """
    if not text:
        return ""
    flat = " ".join(str(text).split())
    sentences = re.split(r"(?<=[.!?])\s+(?=[A-Z\"“(])", flat)
    bad = re.compile(
        r"\b(?:affirm\w*|revers\w*|vacat\w*|remand\w*|dismiss\w*|judgment|we\s+(?:hold|conclude|agree|disagree)|"
        r"for\s+the\s+(?:following\s+)?reasons|grant\w*\s+the\s+petition|den(?:y|ied)\s+the\s+petition)\b",
        re.I,
    )
    out, total = [], 0
    for s in sentences:
        if bad.search(s):
            continue
        if total + len(s) + 1 > max_chars:
            break
        out.append(s)
        total += len(s) + 1
    return " ".join(out)
