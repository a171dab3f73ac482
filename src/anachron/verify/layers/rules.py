"""Layer 2: date-plausibility rules (TEMPO paper, App. I.4; docs/verification.md#rules).

A claim's declared date may be too early for the kind of information it states
(a model dates Q4 results to the last day of the quarter, or a May 2020 closing
price to 2019). These rules give the earliest realistic public date of the
information in a fact; the verifier then uses ``max(declared, earliest)``.

Rules, with the project's lower bounds (chosen at the early end of each range
the paper gives, so a rule never invents a leak that a fast filer would refute):

* quarterly results for a quarter ending ``E``: public 1-2 months after ``E``;
  earliest ``E + 14 days`` (the first large filers release about two weeks out); results
  need financial-result words (revenue, EPS, net income, ...) or a reporting verb with a
  money figure outside a contract / deal / court claim ("it was reported that X signed" is
  not results);
* a fiscal quarter ("fiscal Q2 2026") has no known calendar position: its earliest plausible
  end is that of a fiscal year ending in late January (NVIDIA, retailers), plus 14 days;
  an explicit day in the claim ("... on 2025-08-27") then usually binds;
* full-year results for fiscal year ``Y`` (calendar year-end assumed without
  EDGAR data): public Jan-Feb of ``Y+1``; earliest ``Y+1-01-15``;
* a 10-K for fiscal year ``Y``: 60-90 days after year end; earliest ``FYE + 60 days``;
* a fiscal year may end as early as late January of ``Y`` (NVIDIA's fiscal 2025 ended in
  January 2025): a claim that states the day its full-year figures were reported, on or
  after February 1 of ``Y``, is dated at that day instead of mid-January of ``Y+1``;
* a price, an index change, a contract, a decision: public on its own day;
* any other time reference: a fact about a period cannot be public before the
  period starts (a day, a month's first day, a quarter's first day, a year's
  Jan 1). Forward-looking statements (guidance, forecasts, schedules, lower-case "will";
  not words inside quotation marks, not the name "Will Barton") are exempt: they are about a
  later period but were public earlier.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

from anachron.verify.dates import Period, find_periods, fiscal_quarter_earliest_end, unquoted

QUARTERLY_LAG = dt.timedelta(days=14)
TEN_K_LAG = dt.timedelta(days=60)

#: Words of financial results. A reporting verb alone ("it was reported that X signed ...") is
#: not one: a signing, a ruling, a deal are public on their own day.
_RESULTS = re.compile(
    r"\b(revenue|revenues|sales|earnings|eps|net income|net loss|profit|profits|income|results|"
    r"margin|margins|ebitda|cash flow|free cash flow|operating income|same-store|comparable sales|"
    r"deliveries|bookings|growth|per share|guidance beat|quarterly numbers)\b",
    re.I,
)
#: "X reported $3.1 billion for Q3 2019": a reporting verb with a money figure counts as results
#: unless the claim is about a contract, a deal or a court case.
_REPORT_VERB = re.compile(r"\b(reported|reports|posted|posts|announced|delivered|booked|generated)\b", re.I)
_MONEY_FIGURE = re.compile(r"\$\s?\d|\b\d+(?:\.\d+)?\s*(?:million|billion|trillion)\b", re.I)
_NOT_RESULTS = re.compile(
    r"\b(contract|deal|signed|signs|signing|inked|agreed|agreement|extension|aav|per year|annually|"
    r"acquir\w*|acquisition|merger|buyout|settle\w*|verdict|ruled|ruling|court|fined|fine|penalty|salary)\b",
    re.I,
)
#: Forward-looking language, matched outside quotation marks (a quoted question "Will ...?"
#: is not the claim's own language). "will" counts in lower case only, or as a capitalised
#: sentence-initial "Will" followed by a lower-case word: "Will Barton signed" is a name.
_FORWARD = re.compile(
    r"(?i:\b(guidance|guided|expects|forecasts?|projects|outlook|anticipates?|plans? to|scheduled)\b)"
    r"|\bwill\b|\bWill(?=\s+[a-z])|\bwon['’]t\b"
)
_TEN_K = re.compile(r"\b(10-K|annual report)\b", re.I)


@dataclass(frozen=True)
class RuleFinding:
    """The earliest realistic public date of a fact, and the rule that set it."""

    earliest: dt.date
    rule: str
    period: Period


def earliest_public_date(fact: str) -> RuleFinding | None:
    """Earliest date the information in ``fact`` could have been public, or None.

    Applies the rules in the module docstring to every time reference in the fact
    and returns the latest of their lower bounds (the binding one).
    """
    periods = find_periods(fact)
    if not periods:
        return None
    forward = is_forward_looking(fact)
    results = states_results(fact)
    days = [p.start for p in periods if p.kind == "day"]
    report_day = max(days) if days else None
    best: RuleFinding | None = None
    for p in periods:
        finding: RuleFinding | None
        if p.kind == "quarter" and results and not forward:
            finding = RuleFinding(p.end + QUARTERLY_LAG, "quarterly results: quarter end + 14 days", p)
        elif p.kind == "fiscal_quarter" and results and not forward:
            finding = RuleFinding(
                fiscal_quarter_earliest_end(p) + QUARTERLY_LAG,
                "fiscal-quarter results: earliest plausible quarter end (fiscal year ending in January) + 14 days",
                p,
            )
        elif p.kind == "fiscal_year" and _TEN_K.search(fact) and not forward:
            finding = RuleFinding(p.end + TEN_K_LAG, "10-K: fiscal year end + 60 days", p)
        elif p.kind == "fiscal_year" and not forward and report_day and report_day >= dt.date(p.end.year, 2, 1):
            # a fiscal year can end in late January (NVIDIA, retailers): a stated report day
            # after the earliest plausible year end is the better lower bound
            finding = RuleFinding(report_day, f"full-year results reported on a stated day ({report_day})", p)
        elif p.kind == "fiscal_year" and not forward:
            finding = RuleFinding(
                dt.date(p.end.year + 1, 1, 15), "full-year results: mid-January of the following year", p
            )
        elif forward:
            finding = None
        else:
            finding = RuleFinding(p.start, f"mentions {p.kind} {p.text!r}: not public before it starts", p)
        if finding and (best is None or finding.earliest > best.earliest):
            best = finding
    return best


def is_forward_looking(fact: str) -> bool:
    """True if ``fact`` (outside quotation marks) uses forward-looking language."""
    return bool(_FORWARD.search(unquoted(fact)))


def states_results(fact: str) -> bool:
    """True if ``fact`` states financial results: a results word, or a reporting verb with a
    money figure in a claim that is not about a contract, a deal or a court case."""
    text = unquoted(fact)
    if _RESULTS.search(text):
        return True
    return bool(_REPORT_VERB.search(text) and _MONEY_FIGURE.search(text) and not _NOT_RESULTS.search(text))
