"""Federal appellate opinions from CourtListener (REST API v4), with a disposition label.

Live mode (needs an API token) searches opinions
(``GET https://www.courtlistener.com/api/rest/v4/search/?type=o&court=ca1 ca2 ...&filed_after=
YYYY-MM-DD&filed_before=YYYY-MM-DD&order_by=citeCount desc``), follows the cursor
pagination (each page's ``next`` URL) until ``max_cases`` hits, and for each hit reads the
cluster (``/clusters/{id}/``: its ``disposition`` field and ``sub_opinions``) and the lead
opinion (``/opinions/{id}/``: ``html_with_citations``, ``html``, ``plain_text``,
``local_path``, ``download_url``). The text is the first of, in this order
(:data:`~anachron.sources.courtlistener.opinion_text.TEXT_SOURCES`):
``html_with_citations`` (tags stripped), ``html``, ``plain_text``, the opinion PDF read with
pdfplumber (:mod:`anachron.sources.pdf`: the first ``max_pdf_pages`` (12) pages, blank or
slow pages flagged and skipped, line-end hyphenation rejoined); at most ``max_chars``
(8,000) characters, as in the TEMPO paper's legal task. The disposition
comes from the cluster's ``disposition`` field when it is conclusive, else from the text
(:func:`~anachron.sources.courtlistener.disposition.classify_disposition`): reversed /
vacated -> the appellant (petitioner) prevails, affirmed -> the appellee (respondent)
prevails (for a petition for review of an agency order: granted -> petitioner, denied ->
respondent); mixed ("affirmed in part"), dismissed or not found -> no label (the legal
task excludes the case with the reason).

Authentication: ``Authorization: Token <key>`` with the key read from the environment
variable named by ``token_env`` (default ``COURTLISTENER_TOKEN``). The key is sent only
to the API host, never logged, never written to a manifest. Without a token
:func:`fetch` returns an empty table with the right columns and a manifest note
``"no token configured"`` (not an error). Rate limits: a 429 answer is retried after the
longer of its ``Retry-After`` (seconds or an HTTP date) and the wait its body states
("Expected available in N seconds"), exponential back-off when neither is given; 5xx answers
with exponential back-off; the ``sleep`` function is injectable (tests pass a recorder).
Precedential status is normalised to CourtListener's own values (``Published``,
``Unpublished``, ``Errata``, ``Separate``, ``In-chambers``, ``Relating-to``, ``Unknown``;
:func:`~anachron.sources.courtlistener.precedential.normalize_precedential_status`); any
other value is logged, stored as null and counted in the manifest (``unknown_precedential_status``).

Snapshot mode reads ``courts/federal_appellate_opinion_listings.csv`` (court, case_name,
date_filed, docket_number, precedential_status, download_url): real opinion listings
without text or disposition. They come back as rows with ``disposition`` null (the legal
task excludes them with reason "no_disposition"); they are seeds of real case names and
dates, not labelled data.

Output (both modes), one row per (court, docket_number)::

    court, case_name, date_filed (ISO), docket_number, precedential_status, download_url,
    cluster_id (Int64), opinion_id (Int64), cite_count (Int64),
    text (first pages of the opinion, <= max_chars; "" in snapshot mode),
    text_source ("html_with_citations" | "html" | "plain_text" | "pdf" | "none"),
    disposition ("affirmed" | "reversed" | "vacated" | "denied" | "granted" | "mixed" |
                 "dismissed" | None),
    disposition_source ("cluster" | "text" | None), disposition_note (why / matched phrase),
    outcome ("petitioner" | "respondent" | None),
    appellant, appellee (from the opinion caption when found, else the case-name sides),
    party_source ("caption_roles" | "case_name_order"), origin ("live" | "snapshot")

Modules:

* :mod:`~anachron.sources.courtlistener.reader`: the reader and :func:`fetch`;
* :mod:`~anachron.sources.courtlistener.config`: the JSON Schema of the config block;
* :mod:`~anachron.sources.courtlistener.layout`: API and storage URLs, token variable, courts, snapshot file;
* :mod:`~anachron.sources.courtlistener.table`: the output columns, the empty table, de-duplicated rows;
* :mod:`~anachron.sources.courtlistener.client`: the HTTP client (token, cursor pages, 429 back-off);
* :mod:`~anachron.sources.courtlistener.opinions`: live mode: search hits read into rows;
* :mod:`~anachron.sources.courtlistener.listings`: snapshot mode: listing rows;
* :mod:`~anachron.sources.courtlistener.opinion_text`: an opinion's text (stored fields, PDF) and its outcome-free excerpt;
* :mod:`~anachron.sources.courtlistener.disposition`: the stated disposition and the side it favours;
* :mod:`~anachron.sources.courtlistener.parties`: appellant and appellee;
* :mod:`~anachron.sources.courtlistener.precedential`: precedential status values.
"""

from __future__ import annotations

from anachron.sources.courtlistener.config import CONFIG_SCHEMA
from anachron.sources.courtlistener.reader import CourtListenerReader, fetch

__all__ = ["CONFIG_SCHEMA", "CourtListenerReader", "fetch"]
