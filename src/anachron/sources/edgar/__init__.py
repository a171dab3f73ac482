"""SEC EDGAR XBRL company facts, kept point in time (every filing's report of a value).

Source: the SEC's XBRL "companyfacts" API (public domain),
``https://data.sec.gov/api/xbrl/companyfacts/CIK##########.json`` (10-digit, zero-padded CIK),
or a snapshot directory holding the same files as ``edgar/companyfacts/CIK##########.json``.
The SEC requires every automated request to send a User-Agent that names the requester with a
contact e-mail ("Sample Company Name AdminContact@example.com"); give it as ``user_agent`` or in
the environment variable ``ANACHRON_SEC_USER_AGENT``. Requests are spaced to stay under the
SEC's 10 requests/second limit.

File layout: ``{cik, entityName, facts: {taxonomy: {concept: {label, description, units:
{unit: [{start?, end, val, accn, fy, fp, form, filed, frame?}]}}}}}``. Each list entry is one
filing's (``accn``) report of a value for a period (``start``..``end``; no ``start`` for an
instant such as a balance). A later filing that reports the same (concept, unit, period) again
— next year's 10-K repeating it as a comparative, a 10-K/A or 10-Q/A amending it — is a
*revision*, kept as its own row, never an overwrite.

Output of :func:`fetch` / :meth:`CompanyFactsReader.read`: one row per reported fact, sorted
by ``cik, taxonomy, concept, unit, start, end, filed, accn``::

    cik            int64   SEC central index key
    entity_name    str
    taxonomy       str     us-gaap, dei, ifrs-full, srt, ...
    concept        str     e.g. Revenues
    label          str|None  the concept's label in the file
    unit           str     USD, shares, USD/shares, pure, ...
    val            float64 reported value (in ``unit``)
    start          str|None  ISO period start (None for instants)
    end            str     ISO period end (or instant)
    fy             Int64   fiscal year of the filing (nullable)
    fp             str|None  FY, Q1..Q4
    form           str     10-K, 10-Q, 10-K/A, 8-K, ...
    filed          str     ISO date the filing was filed (when the value became public)
    accn           str     accession number of the filing
    frame          str|None  calendar frame the SEC assigned (CY2019Q3I, ...), at most one row per frame
    first_filed    str     earliest ``filed`` among reports of this (cik, taxonomy, concept, unit, start, end)
    revision       int64   0 for the first report of that period, 1, 2, ... for later reports (by filed, accn)
    value_changed  bool    revision > 0 and ``val`` differs from the previous report's
    restates       str|None  accn of the previous report when ``value_changed`` (a restatement link)
    derived        bool    True for a fourth quarter computed here (:func:`derive_q4`), not reported

Derived fourth quarters: companies file no 10-Q for their fourth quarter, and since 2021 most
10-Ks no longer tag it. For a monetary flow concept (a duration in a currency unit: income
statement and cash-flow lines; never an instant balance, a per-share amount or a share count,
which do not add up over quarters) :func:`derive_q4` adds Q4 = the 10-K's fiscal-year value
minus the nine-month year-to-date value of the same fiscal year (the same ``start``), as
known on the 10-K's filing date, dated to that 10-K (``form``, ``accn``, ``filed``; ``fp``
``Q4``) and marked ``derived``. Where a filing reports that quarter itself, the reported value
wins and nothing is derived for that period.

Skipped rows are counted in the manifest's ``skipped_by_reason``: ``bad_date`` (end/filed
not a date, or start unparseable), ``bad_value`` (val not a finite number),
``duplicate_fact`` (a second identical report of the same period in the same filing).

Modules:

* :mod:`~anachron.sources.edgar.reader`: the reader and :func:`fetch`;
* :mod:`~anachron.sources.edgar.config`: the JSON Schema of the config block;
* :mod:`~anachron.sources.edgar.layout`: the API, the snapshot files, the SEC's request rules;
* :mod:`~anachron.sources.edgar.user_agent`: the SEC User-Agent (name and contact e-mail);
* :mod:`~anachron.sources.edgar.table`: the facts table's columns and the key of a period;
* :mod:`~anachron.sources.edgar.companyfacts`: companyfacts JSON files as fact rows, CIKs;
* :mod:`~anachron.sources.edgar.fourth_quarters`: derived fourth quarters (:func:`derive_q4`);
* :mod:`~anachron.sources.edgar.revisions`: revision columns, :func:`as_of`, :func:`restatement_links`.
"""

from __future__ import annotations

from anachron.sources.edgar.companyfacts import FACT_KEYS, FILE_KEYS, parse_cik, parse_companyfacts
from anachron.sources.edgar.config import CONFIG_SCHEMA
from anachron.sources.edgar.fourth_quarters import NINE_MONTH_DAYS, YEAR_DAYS, derive_q4
from anachron.sources.edgar.layout import (
    COMPANYFACTS_URL,
    DEFAULT_CIKS,
    MIN_INTERVAL,
    SNAPSHOT_LAYOUT,
    SNAPSHOT_PATTERN,
    SOURCE,
    USER_AGENT_ENV,
)
from anachron.sources.edgar.reader import CompanyFactsReader, fetch
from anachron.sources.edgar.revisions import add_revisions, as_of, restatement_links
from anachron.sources.edgar.table import COLUMNS, KEY_COLUMNS
from anachron.sources.edgar.user_agent import sec_user_agent

__all__ = [
    "COLUMNS",
    "COMPANYFACTS_URL",
    "CONFIG_SCHEMA",
    "CompanyFactsReader",
    "DEFAULT_CIKS",
    "FACT_KEYS",
    "FILE_KEYS",
    "KEY_COLUMNS",
    "MIN_INTERVAL",
    "NINE_MONTH_DAYS",
    "SNAPSHOT_LAYOUT",
    "SNAPSHOT_PATTERN",
    "SOURCE",
    "USER_AGENT_ENV",
    "YEAR_DAYS",
    "add_revisions",
    "as_of",
    "derive_q4",
    "fetch",
    "parse_cik",
    "parse_companyfacts",
    "restatement_links",
    "sec_user_agent",
]
