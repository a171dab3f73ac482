"""Supreme Court cases from the Oyez API: live, or from a snapshot of case documents.

Live (the default) reads ``GET https://api.oyez.org/cases?filter=term:{Y}&per_page=0``
(the list of a term's cases) and then each case document
``GET https://api.oyez.org/cases/{term}/{docket}``. A snapshot directory holds the same
documents as ``oyez/cases/{term}.{docket}.json``.

Output (both modes) is one ``cases`` table, one row per (term, docket)::

    term            int     October Term (the Court's term year)
    docket          str     docket number as Oyez writes it ("17-1268", "142-orig")
    docket_key      str     normalised docket (:func:`~anachron.sources.dockets.normalize_docket`) used for joins
    name            str     case name ("Opati v. Republic of Sudan")
    petitioner      str     ``first_party`` (the petitioner, or the appellant)
    respondent      str     ``second_party`` (the respondent, or the appellee)
    first_party_label, second_party_label  str  as Oyez labels them ("Petitioner", "Appellant")
    facts           str     facts of the case, HTML converted to plain text ("" when absent)
    question        str     question presented, plain text ("" when absent)
    granted_date, argued_date, decided_date  str | None  ISO dates (see below)
    oyez_outcome    str | None  "petitioner" / "respondent" from ``decisions[].winning_party``
    oyez_outcome_note  str  how oyez_outcome was decided (matched, no_decision, ...)
    winning_party   str | None  the raw ``winning_party`` value(s), " | "-joined
    majority_votes, minority_votes  Int64  the decision's vote counts (None when not recorded)
    vote_check      str     :func:`~anachron.sources.oyez.votes.check_votes` of the counts ("ok", "short_court: ...", "missing", "invalid: ...")
    lower_court     str | None  name of the court below
    citation        str | None  "590 U.S. 1" when Oyez has volume and page
    additional_dockets  str   JSON list of other docket numbers heard with this case
    href            str     the case document's API URL

Dates: Oyez stores timeline events (Granted, Argued, Decided) as unix seconds. They are
converted in the Court's local time zone, America/New_York, so an event is dated by the
local calendar day in Washington, D.C.: 2020-06-14 22:30 EDT is already 2020-06-15 in UTC
and is dated 2020-06-14 (Oyez itself stores midnight or 01:00 local time). When an event
lists several dates (an argument over two days) the first is used.

Modules:

* :mod:`~anachron.sources.oyez.reader`: the reader and :func:`fetch`;
* :mod:`~anachron.sources.oyez.config`: the JSON Schema of the config block;
* :mod:`~anachron.sources.oyez.layout`: the API, the snapshot files, the default terms;
* :mod:`~anachron.sources.oyez.case_document`: one case document read into a row;
* :mod:`~anachron.sources.oyez.timeline`: the timeline's dates, in the Court's time zone;
* :mod:`~anachron.sources.oyez.winning_party`: ``winning_party`` matched to a side, the outcome of a case's decisions;
* :mod:`~anachron.sources.oyez.votes`: vote counts and whether they can be a Supreme Court vote;
* :mod:`~anachron.sources.oyez.table`: the ``cases`` columns, skip reasons, one row per (term, docket).
"""

from __future__ import annotations

from anachron.sources.oyez.config import CONFIG_SCHEMA
from anachron.sources.oyez.reader import OyezCaseReader, fetch

__all__ = ["CONFIG_SCHEMA", "OyezCaseReader", "fetch"]
