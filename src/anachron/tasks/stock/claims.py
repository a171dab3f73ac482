"""Stock: the claim rules for the instance's own outcome (categories A4 and A5).

A claim states the outcome (A4) when it names one of the instance's companies (ticker or
the first distinctive word of its name, :func:`anachron.names.mentioned_tickers`) moving
(returned / rose / fell / outperformed ...) or priced within the prediction window: a time
reference that starts after the cutoff and not after the window's last day, or "over the
period" / "ended the period". Company fundamentals (revenue, earnings) are not the outcome.
Equally (A4), a claim that states the window's outcome in other words: a return figure, a
rank, a comparison or a sign that the window's returns bear out, with no time reference outside
the window (:func:`anachron.tasks.stock.outcome.find_outcome`). A consequence of the outcome
(A5, "following the crash, ...") needs a date in the window.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from typing import Any, Mapping

from anachron.names import mentioned_tickers
from anachron.tasks.stock.outcome import FUNDAMENTAL, WINDOW_PHRASE, find_outcome
from anachron.verify.features import as_list, context_cutoff, periods_after
from anachron.words import HEDGE_SPECULATIVE

#: Nouns naming a stock outcome ("following the crash", "praised the rally").
OUTCOME_NOUNS = r"crash|sell-?off|plunge|collapse|rally|drop|decline|rebound|outcome"

_STOCK_MOVE = re.compile(
    r"\b(returns?|returned|gain(?:ed|s)?|rose|rise|risen|rising|fell|fall(?:en|ing)?|drop(?:ped|s)?|"
    r"declin(?:e|ed|es|ing)|surg(?:e|ed|es)|plung(?:e|ed|es)|plummet(?:ed|s)?|tumbl(?:e|ed|es)|soar(?:ed|s)?|"
    r"jump(?:ed|s)?|slump(?:ed|s)?|rall(?:y|ied|ies)|rebound(?:ed|s)?|crash(?:ed|es)?|sank|sunk|lost|"
    r"outperform(?:ed|s)?|underperform(?:ed|s)?|best[- ]perform\w*|worst[- ]perform\w*|performer|"
    r"increase[ds]?|decrease[ds]?|loss|losses|advanc(?:e|ed|es)|slid|slide|up|down)\b",
    re.I,
)
_STOCK_NOUN = re.compile(
    r"\b(shares?|stocks?|share price|stock price|price|prices|returns?|market (?:cap|capitalization|value)|"
    r"valuation|traded|trading|closed|performer|perform\w*)\b",
    re.I,
)
_PRICE_WORDS = re.compile(
    r"\b(clos(?:e|ed|ing) (?:at|of)|traded at|trading at|price[sd]? (?:at|of)|priced at|(?:a|per) share)\b", re.I
)
def window_end(context: Mapping[str, Any]) -> dt.date | None:
    """The last day of the prediction window: the context's ``end_date``, else its label's ``last_day``."""
    label = context.get("label") or {}
    if isinstance(label, str):
        try:
            label = json.loads(label)
        except ValueError:
            label = {}
    for v in (context.get("end_date"), label.get("last_day") if isinstance(label, dict) else None):
        if v:
            try:
                return dt.date.fromisoformat(str(v)[:10])
            except ValueError:
                continue
    return None


def outcome_rule(text: str, context: Mapping[str, Any]) -> str | None:
    """``A4:stock:move-in-window`` / ``A4:stock:price-in-window``, or the rule of
    :func:`~anachron.tasks.stock.outcome.find_outcome` (``A4:stock:return-in-window``,
    ``A4:stock:ranking-in-window``), or None (see the module docstring)."""
    subjects = mentioned_tickers(text, as_list(context.get("tickers")), as_list(context.get("names")))
    if not subjects or HEDGE_SPECULATIVE.search(text):
        return None
    found = find_outcome(text, context)
    if found is not None and found.rule != "A4:stock:move-in-window":
        return found.rule
    cutoff, end = context_cutoff(context), window_end(context)
    in_window = bool(periods_after(text, cutoff, end)) or bool(WINDOW_PHRASE.search(text))
    if not in_window:
        return None
    if _STOCK_MOVE.search(text) and (_STOCK_NOUN.search(text) or not FUNDAMENTAL.search(text)):
        return "A4:stock:move-in-window"
    if _PRICE_WORDS.search(text) and not FUNDAMENTAL.search(text):
        return "A4:stock:price-in-window"
    return None


def is_consequence(text: str, context: Mapping[str, Any]) -> bool:
    """A consequence of the window's outcome needs a time reference within the window."""
    return bool(periods_after(text, context_cutoff(context), window_end(context)))
