"""Layer 2: date-plausibility rules (TEMPO paper, App. I.4; DESIGN §5).

A claim's declared date may be too early for the kind of information it states
(a model dates Q4 results to the last day of the quarter, or a May 2020 closing
price to 2019). These rules give the earliest realistic public date of the
information in a fact; the verifier then uses ``max(declared, earliest)``.

Rules, with the project's lower bounds (chosen at the early end of each range
the paper gives, so a rule never invents a leak that a fast filer would refute):

* quarterly results for a quarter ending ``E``: public 1-2 months after ``E``;
  earliest ``E + 14 days`` (the first large filers release about two weeks out);
* full-year results for fiscal year ``Y`` (calendar year-end assumed without
  EDGAR data): public Jan-Feb of ``Y+1``; earliest ``Y+1-01-15``;
* a 10-K for fiscal year ``Y``: 60-90 days after year end; earliest ``FYE + 60 days``;
* a price, an index change, a contract, a decision: public on its own day;
* any other time reference: a fact about a period cannot be public before the
  period starts (a day, a month's first day, a quarter's first day, a year's
  Jan 1). Forward-looking statements (guidance, forecasts, schedules) are exempt:
  they are about a later period but were public earlier.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

from anachron.verify.dates import Period, find_periods

QUARTERLY_LAG = dt.timedelta(days=14)
TEN_K_LAG = dt.timedelta(days=60)

_RESULTS = re.compile(
    r"\b(revenue|revenues|sales|earnings|eps|net income|net loss|profit|profits|income|results|reported|"
    r"margin|margins|ebitda|cash flow|free cash flow|operating income|same-store|comparable sales|"
    r"deliveries|bookings|growth)\b",
    re.I,
)
_FORWARD = re.compile(
    r"\b(guidance|guided|expects|forecasts?|projects|outlook|anticipates?|plans? to|will|scheduled)\b",
    re.I,
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
    forward = bool(_FORWARD.search(fact))
    results = bool(_RESULTS.search(fact))
    best: RuleFinding | None = None
    for p in periods:
        finding: RuleFinding | None
        if p.kind == "quarter" and results and not forward:
            finding = RuleFinding(p.end + QUARTERLY_LAG, "quarterly results: quarter end + 14 days", p)
        elif p.kind == "fiscal_year" and _TEN_K.search(fact) and not forward:
            finding = RuleFinding(p.end + TEN_K_LAG, "10-K: fiscal year end + 60 days", p)
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
