"""Plain text of HTML fragments (Oyez case facts and questions, CourtListener opinions)."""

from __future__ import annotations

import re
from typing import Any

from anachron.frames import is_null


def html_to_text(html: Any) -> str:
    """Plain text of an Oyez HTML fragment (``<p>...</p>`` paragraphs, ``<br>``, entities).

    Paragraphs and list items become lines separated by a blank line; runs of whitespace
    inside a paragraph collapse to one space. ``None`` or empty input gives ``""``.
    """
    if is_null(html):
        return ""
    text = str(html)
    if not text.strip():
        return ""
    import lxml.html

    try:
        root = lxml.html.fragment_fromstring(text, create_parent="div")
    except (ValueError, TypeError, lxml.etree.ParserError):  # type: ignore[attr-defined]
        return " ".join(text.split())
    for br in root.iter("br"):
        br.tail = "\n" + (br.tail or "")
    for el in root.iter("p", "li", "div", "h1", "h2", "h3", "h4", "blockquote", "tr"):
        el.tail = "\n\n" + (el.tail or "")
    raw = root.text_content()
    paragraphs = []
    for block in re.split(r"\n\s*\n", raw):
        lines = [" ".join(line.split()) for line in block.split("\n")]
        joined = "\n".join(line for line in lines if line)
        if joined:
            paragraphs.append(joined)
    return "\n\n".join(paragraphs)
