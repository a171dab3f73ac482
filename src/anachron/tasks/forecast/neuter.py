"""The forecast task's anonymiser for the entity-neutered probe (docs/metrics.md#probes).

Only a question about one company's stock (source ``yfinance``) names an entity the task can find
without guessing: the ticker (its question id) and the company's name, which the question's
background (Yahoo's company profile) opens with. Both become "Company A" in every text field. A
question of any other source (a data series, a market on people or countries) is skipped with
``no_named_entity``: the task has no list of its names, and a masked prompt that still names them
would be a raw prompt labelled neutered.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from anachron.names import name_forms
from anachron.tasks.neutering import Neutering, ProbeSkip, distinctive, replace_names

#: The company's neutral name.
COMPANY = "Company A"
#: Text fields whose names are replaced.
TEXT_FIELDS = ("question", "background", "resolution_criteria", "market_resolution_criteria", "freeze_value_explanation")
#: The company name a Yahoo profile opens with: capitalised words (and "&", "of", "and", "the"),
#: up to the first lower-case word that is no name connector ("Snap-on Incorporated manufactures").
_LEADING_NAME = re.compile(r"^((?:[A-Z0-9][\w.&'-]*,?\s+(?:(?:&|and|of|the)\s+)?)*[A-Z0-9][\w.&'-]*)")


def company_name(background: str) -> str:
    """The company name a profile opens with ("Snap-on Incorporated" for "Snap-on Incorporated
    manufactures ..."); "" when it opens with no capitalised word."""
    m = _LEADING_NAME.match(str(background or "").strip())
    return m.group(1).rstrip(",. ") if m else ""


def neuter_forecast(inputs: Mapping[str, Any], ticker: str | None) -> Neutering:
    """Anonymise a stock question's company.

    Args:
        inputs: the question's decoded inputs.
        ticker: its ticker (the question id of a ``yfinance`` question), else None.

    Raises:
        ProbeSkip: ``no_named_entity`` for a question of another source or without a ticker.
    """
    if inputs.get("source") != "yfinance" or not ticker:
        raise ProbeSkip("no_named_entity", f"a {inputs.get('source')!r} question names no entity the task can find")
    name = company_name(str(inputs.get("background") or ""))
    names = [ticker, *([name] if name else []), *name_forms(name)]
    mapping = {n: COMPANY for n in names if n}
    forms = tuple(f for f in dict.fromkeys(names) if distinctive(f))
    if not forms:
        raise ProbeSkip("names_are_common_words", f"ticker {ticker!r} and name {name!r} are common words")
    new = dict(inputs)
    for key in TEXT_FIELDS:
        new[key] = replace_names(new.get(key), mapping)
    return Neutering(new, None, forms, (COMPANY,))
