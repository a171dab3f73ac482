"""Player cells of prosportstransactions ("A / B" aliases, "(b. ...)" tags): display names, matching keys."""

from __future__ import annotations

from typing import Any

from anachron.frames import text_or_empty
from anachron.sources.player_names import PARENTHESES, normalize_name


def player_aliases(raw: Any) -> list[str]:
    """The aliases of a prosports player cell ("Edrice Adebayo / Bam Adebayo"), cleaned, in order."""
    s = text_or_empty(raw)
    out = []
    for part in s.replace("•", "/").split("/"):
        part = " ".join(PARENTHESES.sub(" ", part).split())
        if part:
            out.append(part)
    return out


def display_name(raw: Any) -> str:
    """The name to show: the last alias ("Bam Adebayo"), without "(James)" / "(b. ...)" tags."""
    aliases = player_aliases(raw)
    return aliases[-1] if aliases else ""


def player_keys(raw: Any) -> frozenset[str]:
    """Normalised keys of every alias of a player cell (used to match other tables)."""
    return frozenset(k for k in (normalize_name(a) for a in player_aliases(raw)) if k)
