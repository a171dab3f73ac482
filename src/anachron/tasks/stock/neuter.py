"""The stock task's anonymiser for the entity-neutered probe (docs/metrics.md#probes).

Companies become "Company A" ... in the listed order, with neutral tickers ``CO-A`` ...; the
ranking label is mapped to them, so Perf is scored as usual. The sector, the period and the
cutoff stay. Forms that re-identify a company (:mod:`anachron.tasks.neutering`): its ticker
when it is a distinctive word, its full name and its :func:`anachron.names.name_forms` ("Exxon",
"ExxonMobil").
"""

from __future__ import annotations

import string
from typing import Any, Mapping

from anachron.names import name_forms
from anachron.tasks.neutering import Neutering, ProbeSkip, distinctive


def placeholder(i: int) -> tuple[str, str]:
    """``(ticker, name)`` of the ``i``-th neutral company: ``("CO-A", "Company A")`` for 0."""
    letter = string.ascii_uppercase[i] if i < 26 else f"{string.ascii_uppercase[i // 26 - 1]}{string.ascii_uppercase[i % 26]}"
    return f"CO-{letter}", f"Company {letter}"


def neuter_stock(inputs: Mapping[str, Any], label: Mapping[str, Any]) -> Neutering:
    """Anonymise a stock instance's companies.

    Args:
        inputs: the instance's decoded inputs (``companies``: ``[{"ticker", "name"}, ...]``).
        label: its decoded label (``ranking``: tickers; ``returns``: ticker -> return).

    Returns:
        The :class:`~anachron.tasks.neutering.Neutering`: companies, ranking and returns in
        neutral tickers.

    Raises:
        ProbeSkip: ``no_named_entity`` without companies; ``names_are_common_words`` when no
            company has a distinctive form.
    """
    companies = list(inputs.get("companies") or [])
    if not companies:
        raise ProbeSkip("no_named_entity", "the instance lists no company")
    mapping: dict[str, str] = {}
    new, forms, holders = [], [], []
    for i, c in enumerate(companies):
        ticker, name = placeholder(i)
        mapping[str(c["ticker"])] = ticker
        new.append({**c, "ticker": ticker, "name": name})
        holders += [ticker, name]
        forms += [f for f in (str(c["ticker"]), str(c.get("name") or ""), *name_forms(str(c.get("name") or ""))) if distinctive(f)]
    if not forms:
        raise ProbeSkip("names_are_common_words", "no ticker or company name is a distinctive word")
    new_label = dict(label)
    if "ranking" in label:
        new_label["ranking"] = [mapping.get(str(t), str(t)) for t in label["ranking"]]
    if isinstance(label.get("returns"), Mapping):
        new_label["returns"] = {mapping.get(str(t), str(t)): v for t, v in label["returns"].items()}
    return Neutering({**inputs, "companies": new}, new_label, tuple(dict.fromkeys(forms)), tuple(holders))
