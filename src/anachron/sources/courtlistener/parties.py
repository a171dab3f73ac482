"""Appellant and appellee of an appellate case: from the opinion's caption, or the case name's sides."""

from __future__ import annotations

import re
from typing import Any


_ROLE = re.compile(
    r"(?:(?:plaintiffs?|defendants?|petitioners?|claimants?|respondents?|intervenors?|movants?|debtors?|cross)\s*[-–—]?\s*)?"
    r"\b(appellants?|appellees?)\b",
    re.I,
)


def _clean_party(name: str) -> str | None:
    name = re.sub(r"\bet\s+al\.?", "", name, flags=re.I)
    name = " ".join(name.replace("\u00a0", " ").split()).strip(" ,;:.-–—")
    if not name or len(name) > 150 or not re.search(r"[A-Za-z]", name):
        return None
    if name.lower() in {"v", "v.", "vs", "and", "on appeal", "no"}:
        return None
    return name


def caption_parties(text: Any, max_lines: int = 80) -> tuple[str | None, str | None]:
    """Appellant and appellee names from an opinion's caption, when it marks the roles.

    Looks at the first ``max_lines`` lines for "NAME, Plaintiff-Appellant," / "NAME,
    Defendant - Appellee." (the name on the same line before the role, or on the line
    above). Returns ``(appellant, appellee)``, None for a role not found.
    """
    if not text:
        return None, None
    lines = [ln.strip() for ln in str(text).splitlines()[:max_lines]]
    found: dict[str, str] = {}
    for i, line in enumerate(lines):
        prev_end = 0
        for m in _ROLE.finditer(line):
            role = "appellant" if m.group(1).lower().startswith("appellant") else "appellee"
            segment = re.sub(r"^[\s,;]*(?:v\.|vs\.|v)?\s+", "", line[prev_end : m.start()]).strip(" ,")
            prev_end = m.end()
            if role in found:
                continue
            name = _clean_party(segment) if segment else None
            j = i - 1
            while name is None and j >= 0 and i - j <= 2:
                name = _clean_party(lines[j])
                j -= 1
            if name:
                found[role] = name
    return found.get("appellant"), found.get("appellee")


def split_case_name(case_name: Any) -> tuple[str | None, str | None]:
    """The two sides of a case name split at " v. " (None, None when it does not split)."""
    parts = re.split(r"\s+v(?:s)?\.?\s+", str(case_name or ""), maxsplit=1)
    if len(parts) != 2:
        return None, None
    return _clean_party(parts[0]), _clean_party(parts[1])
