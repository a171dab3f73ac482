"""ForecastBench question sets and resolution sets, joined into one table of single questions.

Source: the ForecastBench public datasets repository
(https://github.com/forecastingresearch/forecastbench-datasets, CC BY-SA 4.0), read live from
its raw files::

    {BASE_URL}/question_sets/YYYY-MM-DD-{llm,human}.json
    {BASE_URL}/resolution_sets/YYYY-MM-DD_resolution_set.json

with ``BASE_URL = https://raw.githubusercontent.com/forecastingresearch/forecastbench-datasets/main/datasets``,
or from a snapshot directory holding the same files as ``forecastbench/<file name>``.

File layouts (as published):

* question set: ``{forecast_due_date, question_set, questions: [{id, source, question,
  resolution_criteria, background, freeze_datetime, freeze_datetime_value,
  freeze_datetime_value_explanation, url, resolution_dates, market_info_resolution_criteria, ...}]}``.
  Dataset-sourced questions (acled, dbnomics, fred, wikipedia, yfinance) list several
  ``resolution_dates`` and carry ``{resolution_date}`` / ``{forecast_due_date}`` placeholders in
  their text; market questions (manifold, metaculus, polymarket, infer) have ``"N/A"``.
* resolution set: ``{forecast_due_date, question_set, resolutions: [{id, source, direction,
  resolution_date, resolved_to, resolved}]}``. One row per (question, resolution date) for
  dataset questions, one row per market question (``resolved`` False = market still open;
  then ``resolved_to`` is the market's current value, not an outcome). Rows whose ``id`` is a
  list (with a ``direction`` list) are *combination* questions (the outcome of a logical
  combination of two questions); they are skipped.

A resolution set is matched to a question set by ``forecast_due_date`` (the 2024-07-21
resolution set names ``2024-07-21-llm.json``; the ``human`` set of that round is a subset of
the same questions, so it joins just as well).

Output of :func:`fetch` / :meth:`ForecastBenchReader.read`: one row per (single question,
resolution date), the inner join of questions and resolutions, sorted by
``forecast_due_date, source, question_id, resolution_date``::

    question_id           str   ForecastBench id (a market id, a series id, a hash, ...)
    source                str   manifold, metaculus, polymarket, infer, acled, dbnomics, fred, wikipedia, yfinance, ...
    question_type         str   "dataset" (the question lists resolution dates) or "market"
    question              str   raw text (placeholders {resolution_date}/{forecast_due_date} kept)
    background            str   raw background text ("" when absent)
    resolution_criteria   str
    market_resolution_criteria  str|None   the market's own criteria (None when "N/A")
    freeze_datetime       str   ISO 8601 as published (UTC)
    freeze_date           str   ISO YYYY-MM-DD (UTC date of freeze_datetime)
    freeze_value          str|None   the value at freeze time (market price, latest data point)
    freeze_value_explanation    str|None
    forecast_due_date     str   ISO YYYY-MM-DD
    resolution_date       str   ISO YYYY-MM-DD
    resolved              bool  whether the outcome is final
    resolved_to           float resolved outcome (0/1 when resolved; a market value otherwise)
    question_set          str   question-set file name
    resolution_set        str   resolution-set file name
    url                   str
    label_vintage         str   which vintage decided resolved_to: "first_release:due=D1,resolution=D2"
                                (re-resolved on first releases; D1/D2 = the days the two values were
                                first published), "as_revised" (fred/dbnomics label as ForecastBench
                                resolved it, on the series as revised) or "as_published_by_forecastbench"
                                (other sources)
    revised_value         bool  True when the label comes from a revisable series (fred, dbnomics) and
                                was not re-resolved on first releases; False otherwise

Labels as first published. ForecastBench resolves a dataset question ("Will <series> have increased
by {resolution_date} as compared to its value on {forecast_due_date}?") on the series as it stands
when it resolves: the value on a day is that of the latest observation dated on or before it
(observations forward-filled by observation date), read from the current, revised series, and
``resolved_to = float(value(resolution_date) > value(forecast_due_date))`` (a tie is 0). FRED and
DBnomics series are revised after first publication (forecastbench issue #283: US unemployment for
August 2023 was first published as 3.8, later revised to 3.7), so a label can differ from the one
the data as first published would give. When the source is read live and a FRED API key is in the
environment variable named by ``fred_key_env`` (config ``tasks.forecast.fred_key_env``, default
``FRED_API_KEY``), every resolved fred row is re-resolved by the same rule on first releases
(:mod:`~anachron.sources.forecastbench.alfred`: ALFRED ``output_type=4``, one request per series):
each day's value is the first-published value of the latest observation dated on or before it,
among observations first published on or before the as-of day (the fetch day, UTC: ForecastBench's
nightly update re-resolves its resolution sets on the series as they then stand, so the file read
live was resolved on about the day it is read); strictly greater gives 1.0, else 0.0. The row then has ``label_vintage`` "first_release:..." and
``revised_value`` False. A failed lookup (HTTP error, series rejected, unreadable answer, no
observation on or before a date) keeps ForecastBench's label with ``revised_value`` True and counts
its reason in the manifest's ``first_release_fallbacks`` [rows]: ``alfred_http_error``,
``alfred_rejected``, ``alfred_bad_response``, ``no_first_release_on_due_date``,
``no_first_release_on_resolution_date``; never an error. Labels changed by the re-resolution are
counted in ``first_release_flips``. Unresolved rows are left as they are. DBnomics has no vintages
to ask for: its rows always keep ForecastBench's label (``revised_value`` True), as do fred rows
read from a snapshot or without a key. The manifest also holds ``first_release_note`` (what was
done, and why not), ``first_release_as_of``, ``first_release_rows`` (rows re-resolved) and
``revised_value_rows``; each ALFRED request is a ``sources`` record (``kind``
alfred_first_release, its URL without the key).

No binary/resolved filter is applied here: the forecast task
(:func:`anachron.tasks.forecast.build_forecast_instances`) excludes unresolved and non-binary
rows with a recorded reason. Rows skipped while reading are counted in the manifest's
``skipped_by_reason`` (unit in brackets):

* ``combination_resolution`` [resolution rows] — id is a list (combination question);
* ``combination_question`` [questions] — a question-set entry with a list id or a
  ``combination_of`` value;
* ``resolution_without_question`` [resolution rows] — no single question with that id in the
  loaded question sets of the round (e.g. llm-set questions absent from the human set);
* ``question_without_resolution`` [questions] — no resolution row for the question yet;
* ``no_resolution_set`` [questions] — the round's resolution set does not exist (live 404 or
  no snapshot file);
* ``duplicate_question`` [questions] / ``duplicate_resolution`` [resolution rows] — the same
  (due date, source, id[, resolution date]) seen again (first kept; files in name order);
* ``bad_freeze_datetime`` [questions] / ``bad_resolution_date`` [resolution rows] /
  ``bad_resolved_to`` [resolution rows] — unparseable values.

The forecast task's settings (``tasks.forecast``, :data:`anachron.tasks.forecast.CONFIG_SCHEMA`)
hold this source's ``question_sets`` and ``fred_key_env``; the source has no config block of its own.

Modules:

* :mod:`~anachron.sources.forecastbench.reader`: the reader and :func:`fetch`;
* :mod:`~anachron.sources.forecastbench.layout`: raw-file URLs, snapshot folder, set names, a question set's round;
* :mod:`~anachron.sources.forecastbench.sets`: a set file's JSON, layout and due date;
* :mod:`~anachron.sources.forecastbench.questions`: question sets as single questions;
* :mod:`~anachron.sources.forecastbench.resolutions`: resolution sets as single-question resolutions;
* :mod:`~anachron.sources.forecastbench.table`: the output columns and the join of questions with resolutions;
* :mod:`~anachron.sources.forecastbench.vintage`: which vintage decided a label, FRED rows re-resolved on first releases;
* :mod:`~anachron.sources.forecastbench.alfred`: the ALFRED client (observations as first published).
"""

from __future__ import annotations

from anachron.sources.forecastbench.layout import (
    BASE_URL,
    DEFAULT_QUESTION_SETS,
    QUESTION_SET_NAME,
    QUESTION_SET_PATH,
    RESOLUTION_SET_NAME,
    RESOLUTION_SET_PATH,
    SNAPSHOT_LAYOUT,
    SNAPSHOT_SUBDIR,
    SOURCE,
    resolution_set_name,
)
from anachron.sources.forecastbench.questions import QUESTION_KEYS, QUESTION_SET_KEYS, parse_question_set
from anachron.sources.forecastbench.reader import ForecastBenchReader, fetch
from anachron.sources.forecastbench.resolutions import RESOLUTION_KEYS, RESOLUTION_SET_KEYS, parse_resolution_set
from anachron.sources.forecastbench.table import COLUMNS, LABEL_COLUMNS, join_questions_resolutions
from anachron.sources.forecastbench.vintage import (
    AS_PUBLISHED,
    AS_REVISED,
    FIRST_RELEASE,
    REVISABLE_SOURCES,
    first_release_label,
    resolve_first_release,
)
from anachron.sources.forecastbench.alfred import ALFRED_URL, KEY_ENV, AlfredClient, AlfredError, Release

__all__ = [
    "ALFRED_URL",
    "AS_PUBLISHED",
    "AS_REVISED",
    "AlfredClient",
    "AlfredError",
    "BASE_URL",
    "COLUMNS",
    "FIRST_RELEASE",
    "KEY_ENV",
    "LABEL_COLUMNS",
    "REVISABLE_SOURCES",
    "Release",
    "DEFAULT_QUESTION_SETS",
    "ForecastBenchReader",
    "QUESTION_KEYS",
    "QUESTION_SET_KEYS",
    "QUESTION_SET_NAME",
    "QUESTION_SET_PATH",
    "RESOLUTION_KEYS",
    "RESOLUTION_SET_KEYS",
    "RESOLUTION_SET_NAME",
    "RESOLUTION_SET_PATH",
    "SNAPSHOT_LAYOUT",
    "SNAPSHOT_SUBDIR",
    "SOURCE",
    "fetch",
    "first_release_label",
    "join_questions_resolutions",
    "parse_question_set",
    "parse_resolution_set",
    "resolution_set_name",
    "resolve_first_release",
]
