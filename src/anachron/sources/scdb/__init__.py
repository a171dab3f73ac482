"""The Supreme Court Database (SCDB), case-centred release: outcomes and decision dates.

Live (the default) downloads the release zip
``http://scdb.wustl.edu/_brickFiles/{release}/SCDB_{release}_caseCentered_Citation.csv.zip``
(:data:`~anachron.sources.scdb.layout.SCDB_URL_TEMPLATE`; release ``2024_01`` by default, the one the snapshot holds) and
reads the CSV inside it. A snapshot directory holds the CSV itself as
``scdb/SCDB_*_caseCentered_Citation.csv``.

Output (both modes), one row per (term, docket)::

    term            int      October Term
    docket          str      docket as SCDB writes it ("13-604", "126, ORIG.")
    docket_key      str      :func:`anachron.sources.dockets.normalize_docket` of docket
    case_id         str      SCDB caseId ("2014-001")
    case_name       str      SCDB caseName (upper case)
    decision_date   str      ISO date of dateDecision (M/D/YYYY in the file)
    argument_date   str|None ISO date of dateArgument
    party_winning   Int64    partyWinning: 1 = the petitioning party won, 0 = it lost,
                             2 = unclear, <NA> = not coded
    decision_type   Int64    decisionType (1 opinion of the court, 2 per curiam without
                             argument, 4 decree, 5 equally divided, 6 per curiam after
                             argument, 7 judgment of the Court, ...)
    us_cite         str|None U.S. Reports citation

Rows with ``party_winning`` 2 or <NA> are kept in the table (they are real cases) and
counted in the manifest (``outcome_counts``). The legal task excludes a case SCDB codes 2
(unclear) as "no clear binary outcome" and does not fall back to another label for it; for
<NA> (not coded) it may use the Oyez ``winning_party`` instead. Rows that cannot be
used at all (no docket, a term or decision date that does not parse, a partyWinning code
outside 0/1/2) are dropped and counted in ``skipped_by_reason``; repeated (term, docket)
rows keep the first and are counted as ``duplicate_term_docket``.

Modules:

* :mod:`~anachron.sources.scdb.reader`: the reader and :func:`fetch` (the release zip or the snapshot CSV, decoded);
* :mod:`~anachron.sources.scdb.config`: the JSON Schema of the config block;
* :mod:`~anachron.sources.scdb.layout`: the release, its download URL, the snapshot file, the default terms;
* :mod:`~anachron.sources.scdb.case_csv`: the case-centred CSV parsed into the table, with the rows dropped.
"""

from __future__ import annotations

from anachron.sources.scdb.config import CONFIG_SCHEMA
from anachron.sources.scdb.reader import SCDBCaseReader, fetch

__all__ = ["CONFIG_SCHEMA", "SCDBCaseReader", "fetch"]
