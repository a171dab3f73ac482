"""Text of PDF pages through pdfplumber, with a flag for every page that gave no text.

One helper for every reader that needs the text of a PDF (today the CourtListener opinion
PDFs of :mod:`anachron.sources.courtlistener`). Each page read gives a :class:`PageText`:
its text and a flag saying why the text is empty or partial:

* ``None`` — text extracted;
* ``"blank"`` — the page has no text layer or only whitespace (a blank or scanned page;
  scanned pages would need OCR, which this package does not do): text ``""``;
* ``"timeout"`` — ``page.extract_text()`` took longer than ``page_timeout`` seconds: the page
  is skipped (text ``""``). The extraction runs in a daemon thread that is abandoned, not
  killed, when the limit passes (Python cannot stop a thread), so it may finish in the
  background; the next page is read meanwhile;
* ``"error"`` — ``extract_text`` raised: text ``""``, the exception in the log.

Line-break hyphenation (:func:`rejoin_hyphenated`): a word split at a line end with a hyphen
is rejoined. The rule: ``"<letters>-\\n<lower-case letters>"`` becomes one word without the
hyphen (``"immuni-\\nty"`` -> ``"immunity"``) unless the hyphen is a real one, which it is
taken to be when (a) the same two parts occur hyphenated within a line elsewhere in the
text (``"well-known"`` written whole somewhere keeps ``"well-\\nknown"`` as ``"well-known"``),
or (b) the first part is one of :data:`HYPHEN_PREFIXES` (``self``, ``well``, ``ex``, ...), or
(c) the second part starts with a capital or a digit (``"Anti-\\nTerrorism"``,
``"pre-\\n1990"``). A real hyphen is kept and the line break removed. Without a dictionary,
a compound first seen split at a line end and not in those lists loses its hyphen (a known
limitation).
"""

from __future__ import annotations

import io
import logging
import re
import threading
from dataclasses import dataclass
from typing import Any, Iterable

log = logging.getLogger(__name__)

#: Pages read by default, and characters kept (the TEMPO paper's legal task reads the
#: first pages of an opinion, Appendix on the legal dataset).
MAX_PDF_PAGES = 12
MAX_CHARS = 8000
#: Seconds one page's text extraction may take before the page is skipped.
PAGE_TIMEOUT = 20.0
#: First parts of compounds whose line-end hyphen is always kept ("self-\nincrimination").
HYPHEN_PREFIXES = frozenset({"self", "well", "ex", "all", "half", "quasi", "cross"})

#: Flags of :class:`PageText`.
FLAG_BLANK = "blank"
FLAG_TIMEOUT = "timeout"
FLAG_ERROR = "error"


@dataclass(frozen=True)
class PageText:
    """One page's text: ``index`` (0-based page number), ``text`` (``""`` when flagged),
    ``flag`` (None, ``"blank"``, ``"timeout"`` or ``"error"``; see the module docstring)."""

    index: int
    text: str
    flag: str | None = None


_SPLIT = re.compile(r"([A-Za-z]+)-[ \t]*\n[ \t]*([A-Za-z0-9]+)")


def rejoin_hyphenated(text: str) -> str:
    """Rejoin words hyphenated across a line break (the rule is in the module docstring).

    Args:
        text: text with ``\\n`` line breaks (as ``page.extract_text()`` gives).

    Returns:
        The text with each ``word-\\nrest`` replaced by ``wordrest`` or ``word-rest``; other
        line breaks are kept.
    """
    if "-" not in text:
        return text
    whole = {m.group(0).lower() for m in re.finditer(r"[A-Za-z]+-[A-Za-z0-9]+", text)}

    def join(m: re.Match[str]) -> str:
        left, right = m.group(1), m.group(2)
        real = (
            f"{left}-{right}".lower() in whole
            or left.lower() in HYPHEN_PREFIXES
            or not right[0].islower()
        )
        return f"{left}-{right}" if real else left + right

    return _SPLIT.sub(join, text)


def _extract(page: Any, timeout: float | None) -> tuple[str | None, BaseException | None, bool]:
    """``page.extract_text()`` in a daemon thread; returns (text, error, timed_out)."""
    if timeout is None:
        try:
            return page.extract_text(), None, False
        except Exception as exc:  # pdfminer raises many types for broken content
            return None, exc, False
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            box["text"] = page.extract_text()
        except Exception as exc:
            box["error"] = exc

    worker = threading.Thread(target=work, name="pdf-page-text", daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        return None, None, True
    return box.get("text"), box.get("error"), False


def page_texts(pages: Iterable[Any], *, page_timeout: float | None = PAGE_TIMEOUT) -> list[PageText]:
    """Text of each page object (anything with ``extract_text()``, e.g. a pdfplumber page).

    Args:
        pages: the pages to read, in order (already cut to the pages wanted).
        page_timeout: seconds one page may take (None: no limit); a slower page is flagged
            ``"timeout"`` and skipped.

    Returns:
        One :class:`PageText` per page; flagged pages have text ``""``. Never raises for a
        page's content.
    """
    out: list[PageText] = []
    for i, page in enumerate(pages):
        text, error, timed_out = _extract(page, page_timeout)
        if timed_out:
            log.warning("PDF page %d: text extraction took longer than %.1f s; page skipped", i + 1, page_timeout)
            out.append(PageText(i, "", FLAG_TIMEOUT))
        elif error is not None:
            log.warning("PDF page %d: text extraction failed (%s: %s); page skipped", i + 1, type(error).__name__, error)
            out.append(PageText(i, "", FLAG_ERROR))
        elif not (text or "").strip():
            out.append(PageText(i, "", FLAG_BLANK))
        else:
            out.append(PageText(i, rejoin_hyphenated(str(text))))
    return out


def read_pdf_pages(data: bytes, *, max_pages: int = MAX_PDF_PAGES, page_timeout: float | None = PAGE_TIMEOUT) -> list[PageText]:
    """:func:`page_texts` of the first ``max_pages`` pages of the PDF ``data``.

    Raises:
        ValueError: the bytes are not a PDF pdfplumber can open.
    """
    import pdfplumber

    try:
        pdf = pdfplumber.open(io.BytesIO(data))
    except Exception as exc:  # pdfminer raises a zoo of types for broken files
        raise ValueError(f"not a readable PDF ({type(exc).__name__}: {exc})") from exc
    with pdf:
        try:
            pages = pdf.pages[:max_pages]
        except Exception as exc:
            raise ValueError(f"not a readable PDF ({type(exc).__name__}: {exc})") from exc
        return page_texts(pages, page_timeout=page_timeout)


def join_pages(pages: Iterable[PageText], max_chars: int = MAX_CHARS) -> str:
    """The pages' texts joined by a newline (flagged pages contribute nothing), cut to ``max_chars``."""
    return "\n".join(p.text for p in pages if p.text)[:max_chars]


def page_flags(pages: Iterable[PageText]) -> dict[str, int]:
    """Count of pages per flag (``{"blank": 2, "timeout": 1}``; unflagged pages not counted)."""
    counts: dict[str, int] = {}
    for p in pages:
        if p.flag:
            counts[p.flag] = counts.get(p.flag, 0) + 1
    return counts
