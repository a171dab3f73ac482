"""Grounded dating of company financial figures from EDGAR point-in-time facts (docs/verification.md#grounded).

A claim such as "Apple's FY2019 revenue was $260.2B" or "Tesla's Q3 2019 revenue was $6.3
billion" states information that became public with the *first SEC filing that reported it*.
:class:`EdgarGrounding` dates such a claim to that filing's ``filed`` date, read from the
point-in-time facts table of :mod:`anachron.sources.edgar` (one row per filing's report of a
value; columns ``cik, entity_name, concept, unit, val, start, end, fy, form, filed, accn,
revision, value_changed, restates``).

How a claim is read:

* **company** — the distinctive first word of an EDGAR ``entity_name`` ("Apple", "NVIDIA",
  "Tesla", "Alphabet"), an alias (tickers AAPL, NVDA, TSLA, GOOGL, GOOG; "Google"; more via the
  ``aliases`` argument), or an instance ticker whose instance name matches a company.
* **period** — in the company's own fiscal calendar. The fiscal year end of every 10-K (and
  10-K/A) accession is the latest ``end`` of its annual-duration rows (350-380 days); each end
  is labelled by the fiscal year the company gives it (the per-company mode of
  ``fy - year(end)``, robust to SEC's occasional wrong ``fy``). Apple's fiscal 2019 therefore
  ends 2019-09-28, NVIDIA's fiscal 2020 ends 2020-01-26. Fiscal quarter ``q`` of fiscal year
  ``Y`` is the quarterly-duration row (80-100 days) that ends about ``q`` quarters after the end
  of fiscal ``Y-1``. "Q3 2019" without the word fiscal is tried as the fiscal quarter first,
  then as the reported quarter that overlaps calendar Q3 2019 most; a bare year likewise.
* **concept family** — by keywords: revenue/sales, net income/loss, EPS, operating income,
  gross profit, operating cash flow, capital expenditure, R&D, cash, total assets, total
  liabilities, stockholders' equity (see :data:`FAMILIES`).
* **value** — "$260.2B", "$260.2 billion", "$55,256 million", "$2.97 per share"; a value
  matches a reported one within the stated precision (half a unit of the last stated digit)
  or, failing any such match, within ``max(0.5 %, half a unit)``.

Effective date: the earliest ``filed`` among the company's rows for that period and concept
family whose value matches. A value changed by a later filing (a 10-K/A, or a split-adjusted
EPS in the next 10-K; ``value_changed``/``restates``) is a different value: a claim with the
restated value dates to the restating filing, one with the original value to the original
filing. If the period and concept match but no value does (or no value is stated), the claim
dates to the first filing that reported that period's figure and the reason says so.
Forward-looking statements (guidance, expectations, estimates) are not checked: their value is
not a reported figure. Category A3 when the claim speaks of a report or filing, else A2.

The package: :mod:`~anachron.verify.layers.edgar.families` (the concept families a claim names and
the words that mark it forward-looking, a comparison with a forecast, per share, about a report),
:mod:`~anachron.verify.layers.edgar.periods` (the fiscal or calendar periods a claim names),
:mod:`~anachron.verify.layers.edgar.facts` (the facts table indexed: companies, fiscal calendars,
the rows of a family and period, value matches) and :mod:`~anachron.verify.layers.edgar.grounding`
(the check and its loader). The names below are re-exported here.
"""

from __future__ import annotations

from anachron.verify.layers.edgar.facts import ANNUAL_DAYS, QUARTER_DAYS, EdgarFacts
from anachron.verify.layers.edgar.families import FAMILIES, Family
from anachron.verify.layers.edgar.grounding import EdgarGrounding, load_edgar_grounding
from anachron.verify.layers.edgar.periods import PeriodRef, find_fiscal_periods
from anachron.verify.layers.figures import StatedValue, parse_values

__all__ = ["ANNUAL_DAYS", "EdgarFacts", "EdgarGrounding", "FAMILIES", "Family", "PeriodRef", "QUARTER_DAYS", "StatedValue",
           "find_fiscal_periods", "load_edgar_grounding", "parse_values"]
