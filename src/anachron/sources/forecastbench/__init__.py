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
hold this source's ``question_sets``; the source has no config block of its own.

Modules:

* :mod:`~anachron.sources.forecastbench.reader`: the reader and :func:`fetch`;
* :mod:`~anachron.sources.forecastbench.layout`: raw-file URLs, snapshot folder, set names, a question set's round;
* :mod:`~anachron.sources.forecastbench.sets`: a set file's JSON, layout and due date;
* :mod:`~anachron.sources.forecastbench.questions`: question sets as single questions;
* :mod:`~anachron.sources.forecastbench.resolutions`: resolution sets as single-question resolutions;
* :mod:`~anachron.sources.forecastbench.table`: the output columns and the join of questions with resolutions.
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
from anachron.sources.forecastbench.table import COLUMNS, join_questions_resolutions

__all__ = [
    "BASE_URL",
    "COLUMNS",
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
    "join_questions_resolutions",
    "parse_question_set",
    "parse_resolution_set",
    "resolution_set_name",
]
