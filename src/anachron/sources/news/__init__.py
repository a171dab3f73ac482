"""Dated news headlines from snapshot CSV files (one file per publisher).

There is no free, dated, bulk news archive to fetch live, so this source reads snapshots
only: ``<snapshot_dir>/news/*.csv``. Live mode raises :class:`~anachron.sources.base.SourceError` (for retrieval over
live news use the hosted search backend, :class:`anachron.retrieval.search.LiveSearch`).

Each file is recognised by its name prefix and has its own columns and date format:

=====================  ==============================================  ============================================
prefix (``source``)    columns used                                    date format (example)
=====================  ==============================================  ============================================
``reuters``            ``Time, Headlines``                             ``Jul 18 2020`` (``%b %d %Y``)
``guardian``           ``Time, Headlines``                             ``18-Jul-20`` (``%d-%b-%y``)
``cnbc``               ``Headlines, Time, Description``                `` 7:51  PM ET Fri, 17 July 2020`` (the day
                                                                       after the comma; full or short month names,
                                                                       ``Sept`` accepted)
``wsj``                ``Date, Headline``                              ``1/26/12`` (``M/D/YY``; 69..99 -> 19xx)
``analyst_ratings``    ``title, date, stock``                          ``2020-06-05 10:30:00-04:00`` (the local
                                                                       calendar day, i.e. the first 10 characters)
``reddit``             ``published, title`` (``timestamp`` fallback)  ``November 16, 2021 12:51 AM`` (US Eastern
                                                                       as published; else the unix ``timestamp``
                                                                       converted to America/New_York)
=====================  ==============================================  ============================================

Output of :func:`fetch` / :meth:`NewsReader.read` (:data:`~anachron.sources.news.headlines.NEWS_COLUMNS`), one row per headline,
sorted by ``published_at, source, title``::

    published_at  str       ISO day "YYYY-MM-DD" the headline was published (publisher's local day)
    title         str       the headline, HTML entities decoded, whitespace collapsed
    text          str       the description where the file has one (CNBC), else ""
    source        str       the file's prefix: reuters, guardian, cnbc, wsj, analyst_ratings, reddit
    ticker        str|None  the stock ticker (S&P spelling) for analyst_ratings, else None

Excluded rows are counted by reason in the manifest's ``skipped_by_reason``:
``missing_date`` (empty date cell, e.g. a blank line or a headline broken over two lines),
``unparseable_date`` (a date cell that is not in the file's format, e.g. Guardian "18-Jul"
without a year), ``empty_title``, ``duplicate`` (same source, day and title as an earlier row).
Files whose name matches no known prefix are skipped and counted as ``unknown_file``.

Modules:

* :mod:`~anachron.sources.news.reader`: the reader and :func:`fetch`;
* :mod:`~anachron.sources.news.publishers`: each publisher's file: its name prefix, columns and date format;
* :mod:`~anachron.sources.news.headlines`: the headline table: title cleaning, rows dropped, de-duplication, document ids.
"""

from __future__ import annotations

from anachron.sources.news.reader import NewsReader, fetch

__all__ = ["NewsReader", "fetch"]
