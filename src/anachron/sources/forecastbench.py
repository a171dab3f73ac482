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
"""

from __future__ import annotations

import functools
import json
import logging
import os
import re
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import pandas as pd

from anachron.dates import to_iso
from anachron.frames import na_text, require_keys
from anachron.io import sha256_bytes, sha256_file, utc_now
from anachron.sources.base import (
    SourceReader,
    SourceError,
)

log = logging.getLogger(__name__)

SOURCE = "forecastbench"
#: Raw-file root of the ForecastBench public datasets repository.
BASE_URL = "https://raw.githubusercontent.com/forecastingresearch/forecastbench-datasets/main/datasets"
QUESTION_SET_PATH = "question_sets/{name}"
RESOLUTION_SET_PATH = "resolution_sets/{name}"
#: Snapshot folder, relative to the snapshot directory.
SNAPSHOT_SUBDIR = "forecastbench"
SNAPSHOT_LAYOUT = "forecastbench/YYYY-MM-DD-llm.json and forecastbench/YYYY-MM-DD_resolution_set.json"
#: Question sets read when none are named (the two rounds of the shared snapshot).
DEFAULT_QUESTION_SETS = ("2024-07-21-human.json", "2025-10-26-llm.json")

QUESTION_SET_NAME = re.compile(r"^(\d{4}-\d{2}-\d{2})-([A-Za-z0-9_]+)\.json$")
RESOLUTION_SET_NAME = re.compile(r"^(\d{4}-\d{2}-\d{2})_resolution_set\.json$")

COLUMNS = [
    "question_id",
    "source",
    "question_type",
    "question",
    "background",
    "resolution_criteria",
    "market_resolution_criteria",
    "freeze_datetime",
    "freeze_date",
    "freeze_value",
    "freeze_value_explanation",
    "forecast_due_date",
    "resolution_date",
    "resolved",
    "resolved_to",
    "question_set",
    "resolution_set",
    "url",
]

QUESTION_SET_KEYS = ("forecast_due_date", "questions")
QUESTION_KEYS = ("id", "source", "question", "resolution_criteria", "background", "freeze_datetime", "url")
RESOLUTION_SET_KEYS = ("forecast_due_date", "resolutions")
RESOLUTION_KEYS = ("id", "source", "resolution_date", "resolved_to", "resolved")

def resolution_set_name(question_set: str) -> str:
    """Resolution-set file name of a question set's round: ``YYYY-MM-DD_resolution_set.json``.

    Raises ``ValueError`` when ``question_set`` is not named ``YYYY-MM-DD-<kind>.json``.
    """
    m = QUESTION_SET_NAME.match(question_set)
    if not m:
        raise ValueError(f"question set name {question_set!r} is not of the form YYYY-MM-DD-llm.json")
    return f"{m.group(1)}_resolution_set.json"


def _load_json(data: bytes, where: str) -> Any:
    try:
        return json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SourceError(f"{where}: not valid JSON ({exc}); replace the file with a ForecastBench JSON file.") from exc


def _require(obj: Any, keys: Sequence[str], where: str) -> None:
    if not isinstance(obj, dict):
        raise SourceError(f"{where}: expected a JSON object, got {type(obj).__name__}; the file is not in the ForecastBench layout.")
    require_keys(obj, keys, where, error=SourceError,
                 hint="the file is not in the ForecastBench layout — replace it with a published question/resolution set.")


def _open_set(data: Any, name: str, required: Any, list_key: str) -> tuple[dict[str, Any], str]:
    """Decode a question or resolution set and check its layout; returns (object, due date ISO).

    Raises :class:`SourceError` naming the file for invalid JSON, a missing key, a due date
    that is not a date, or ``list_key`` not holding a list.
    """
    obj = data if isinstance(data, dict) else _load_json(data.encode() if isinstance(data, str) else data, name)
    _require(obj, required, name)
    due = to_iso(obj["forecast_due_date"], lenient=True, utc=True)
    if due is None:
        raise SourceError(f"{name}: forecast_due_date {obj['forecast_due_date']!r} is not a date; fix the file.")
    if not isinstance(obj[list_key], list):
        raise SourceError(f"{name}: key {list_key} must be a list; the file is not in the ForecastBench layout.")
    return obj, due


def parse_question_set(data: bytes | str | dict, name: str, counts: Counter | None = None) -> pd.DataFrame:
    """Parse one question-set file into a frame of single questions.

    ``name`` is the file name (used as ``question_set`` and in errors). Returns columns
    ``question_id, source, question_type, question, background, resolution_criteria,
    market_resolution_criteria, freeze_datetime, freeze_date, freeze_value,
    freeze_value_explanation, forecast_due_date, question_set, url``. Combination entries and
    entries with an unparseable freeze time are skipped and added to ``counts``.

    Raises :class:`SourceError` naming the file (and the question index) when a required key
    is missing or the JSON is invalid.
    """
    counts = counts if counts is not None else Counter()
    obj, due = _open_set(data, name, QUESTION_SET_KEYS, "questions")
    rows = []
    for i, q in enumerate(obj["questions"]):
        _require(q, QUESTION_KEYS, f"{name} (questions[{i}])")
        if isinstance(q["id"], list) or na_text(q.get("combination_of")) is not None:
            counts["combination_question"] += 1
            continue
        freeze_date = to_iso(q["freeze_datetime"], lenient=True, utc=True)
        if freeze_date is None:
            counts["bad_freeze_datetime"] += 1
            continue
        dates = q.get("resolution_dates")
        rows.append(
            {
                "question_id": str(q["id"]),
                "source": str(q["source"]),
                "question_type": "dataset" if isinstance(dates, list) else "market",
                "question": str(q["question"]),
                "background": "" if q["background"] is None else str(q["background"]),
                "resolution_criteria": "" if q["resolution_criteria"] is None else str(q["resolution_criteria"]),
                "market_resolution_criteria": na_text(q.get("market_info_resolution_criteria")),
                "freeze_datetime": str(q["freeze_datetime"]),
                "freeze_date": freeze_date,
                "freeze_value": na_text(q.get("freeze_datetime_value")),
                "freeze_value_explanation": na_text(q.get("freeze_datetime_value_explanation")),
                "forecast_due_date": due,
                "question_set": name,
                "url": "" if q["url"] is None else str(q["url"]),
            }
        )
    return pd.DataFrame(rows, columns=[c for c in COLUMNS if c not in ("resolution_date", "resolved", "resolved_to", "resolution_set")])


def parse_resolution_set(data: bytes | str | dict, name: str, counts: Counter | None = None) -> pd.DataFrame:
    """Parse one resolution-set file into a frame of single-question resolutions.

    Returns columns ``question_id, source, forecast_due_date, resolution_date, resolved,
    resolved_to, resolution_set``. Combination rows (list ids) and rows with an unparseable
    date or outcome are skipped and added to ``counts``.

    Raises :class:`SourceError` naming the file (and the row index) when a required key is
    missing or the JSON is invalid.
    """
    counts = counts if counts is not None else Counter()
    obj, due = _open_set(data, name, RESOLUTION_SET_KEYS, "resolutions")
    rows = []
    for i, r in enumerate(obj["resolutions"]):
        _require(r, RESOLUTION_KEYS, f"{name} (resolutions[{i}])")
        if isinstance(r["id"], list) or isinstance(r.get("direction"), list):
            counts["combination_resolution"] += 1
            continue
        day = to_iso(r["resolution_date"], lenient=True, utc=True)
        if day is None:
            counts["bad_resolution_date"] += 1
            continue
        value = r["resolved_to"]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
            counts["bad_resolved_to"] += 1
            continue
        rows.append(
            {
                "question_id": str(r["id"]),
                "source": str(r["source"]),
                "forecast_due_date": due,
                "resolution_date": day,
                "resolved": bool(r["resolved"]),
                "resolved_to": float(value),
                "resolution_set": name,
            }
        )
    return pd.DataFrame(
        rows, columns=["question_id", "source", "forecast_due_date", "resolution_date", "resolved", "resolved_to", "resolution_set"]
    )


def join_questions_resolutions(
    questions: pd.DataFrame, resolutions: pd.DataFrame, counts: Counter | None = None
) -> pd.DataFrame:
    """Inner join of single questions and their resolutions on (due date, source, id).

    Duplicated questions (same due date, source, id) and resolutions (same plus resolution
    date) are dropped, first kept, and counted; so are unmatched rows on either side
    (``question_without_resolution``, ``resolution_without_question``). Returns the
    :data:`COLUMNS` frame, sorted, with a fresh index.
    """
    counts = counts if counts is not None else Counter()
    qkey = ["forecast_due_date", "source", "question_id"]
    dup_q = questions.duplicated(qkey, keep="first")
    counts["duplicate_question"] += int(dup_q.sum())
    questions = questions.loc[~dup_q]
    dup_r = resolutions.duplicated(qkey + ["resolution_date"], keep="first")
    counts["duplicate_resolution"] += int(dup_r.sum())
    resolutions = resolutions.loc[~dup_r]
    merged = questions.merge(resolutions, on=qkey, how="outer", indicator=True)
    counts["question_without_resolution"] += int((merged["_merge"] == "left_only").sum())
    counts["resolution_without_question"] += int((merged["_merge"] == "right_only").sum())
    out = merged.loc[merged["_merge"] == "both", COLUMNS].copy()
    out["resolved"] = out["resolved"].astype(bool)
    out["resolved_to"] = out["resolved_to"].astype("float64")
    out = out.sort_values(["forecast_due_date", "source", "question_id", "resolution_date"], kind="mergesort")
    return out.reset_index(drop=True)


class ForecastBenchReader(SourceReader):
    """Questions joined with resolutions for the named ForecastBench question sets.

    Parameters
    ----------
    question_sets:
        Question-set file names (``YYYY-MM-DD-llm.json`` / ``-human.json``). ``None``: in
        snapshot mode every ``forecastbench/YYYY-MM-DD-*.json`` file present; live,
        :data:`DEFAULT_QUESTION_SETS`. Each round's resolution set
        (``YYYY-MM-DD_resolution_set.json``) is read with it.
    session:
        ``requests.Session`` for live reads (tests inject one replaying recordings);
        ``None`` builds one with retries.
    snapshot_dir:
        Directory holding ``forecastbench/<file>``; ``None`` falls back to
        ``$ANACHRON_SNAPSHOT_DIR``, then to a live fetch from :data:`BASE_URL`.
    base_url:
        Root of the raw files for live reads (a mirror may be given).

    After :meth:`read`: :attr:`manifest` (one :func:`manifest_entry` per file read, with
    ``kind`` question_set/resolution_set) and :attr:`skipped_by_reason` (see the module
    docstring). Resolution-set files in a snapshot that match no loaded question set are
    listed in :attr:`unused_files`.

    Raises :class:`SourceError` from :meth:`read` when a file cannot be fetched or read, a
    required key is missing (naming the file and the key), or the join is empty;
    ``ValueError`` for a malformed question-set name.
    """

    source = SOURCE
    snapshot_layout = SNAPSHOT_LAYOUT

    def __init__(
        self,
        question_sets: Iterable[str] | None = None,
        *,
        session: Any = None,
        snapshot_dir: str | os.PathLike[str] | None = None,
        base_url: str = BASE_URL,
        timeout: float = 60.0,
    ) -> None:
        names = None if question_sets is None else [str(n) for n in question_sets]
        if names is not None:
            if not names:
                raise ValueError("ForecastBenchReader needs at least one question set name")
            for n in names:
                resolution_set_name(n)  # validates the name
            names = list(dict.fromkeys(names))
        self.question_sets = names
        super().__init__(session=session, snapshot_dir=snapshot_dir)
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.unused_files: list[str] = []

    def _read_snapshot(self, snap: Path) -> pd.DataFrame:
        folder = snap / SNAPSHOT_SUBDIR
        if self.question_sets is not None:
            names = list(self.question_sets)
        else:
            names = sorted(p.name for p in folder.glob("*.json") if QUESTION_SET_NAME.match(p.name))
            if not names:
                raise SourceError(
                    f"no ForecastBench question set (YYYY-MM-DD-llm.json) under {str(folder)!r}; "
                    f"{self._hint()} Or unset it to fetch live."
                )
        rounds = {resolution_set_name(n) for n in names}
        self.unused_files = [p for p in sorted(p.name for p in folder.glob("*_resolution_set.json")) if p not in rounds]
        return self._read_sets(names, functools.partial(self._snapshot_file, snap))

    def _read_live(self, session: Any) -> pd.DataFrame:
        names = list(self.question_sets) if self.question_sets is not None else list(DEFAULT_QUESTION_SETS)
        return self._read_sets(names, functools.partial(self._live_file, session))

    def _manifest_extra(self, table: pd.DataFrame) -> dict[str, Any]:
        return {
            "unused_files": self.unused_files,
            "question_sets": sorted(table["question_set"].unique().tolist()),
            "rows": int(len(table)),
            "fetched_at": utc_now(),
        }

    # -- helpers ----------------------------------------------------------------------------
    def _read_sets(self, names: list[str], get: Callable[[str, str, bool], tuple[bytes | None, str, str]]) -> pd.DataFrame:
        """Read, parse and join the question sets ``names`` and their rounds' resolution sets.

        ``get(rel, what, missing_ok)`` returns one file's bytes (``None`` for a missing
        resolution set), origin and sha256.
        """
        counts: Counter = Counter()
        q_frames, r_frames = [], []
        rounds: dict[str, list[str]] = {}
        for name in names:
            rounds.setdefault(resolution_set_name(name), []).append(name)
        for rname, qnames in rounds.items():
            for qname in qnames:
                data, origin, sha = get(QUESTION_SET_PATH.format(name=qname), f"question set {qname}", False)
                assert data is not None
                qdf = parse_question_set(data, qname, counts)
                q_frames.append(qdf)
                self._record(origin, sha, len(qdf), kind="question_set", file=qname)
            data, origin, sha = get(RESOLUTION_SET_PATH.format(name=rname), f"resolution set {rname}", True)
            if data is None:
                n = sum(len(f) for f in q_frames[-len(qnames):])
                counts["no_resolution_set"] += n
                log.warning("ForecastBench: no resolution set %s (%s); %d questions skipped", rname, origin, n)
                q_frames = q_frames[: -len(qnames)]
                continue
            rdf = parse_resolution_set(data, rname, counts)
            r_frames.append(rdf)
            self._record(origin, sha, len(rdf), kind="resolution_set", file=rname)
        empty_q = parse_question_set({"forecast_due_date": "2000-01-01", "questions": []}, "empty")
        empty_r = parse_resolution_set({"forecast_due_date": "2000-01-01", "resolutions": []}, "empty")
        questions = pd.concat(q_frames, ignore_index=True) if q_frames else empty_q
        resolutions = pd.concat(r_frames, ignore_index=True) if r_frames else empty_r
        df = join_questions_resolutions(questions, resolutions, counts)
        self.skipped_by_reason = {k: int(v) for k, v in sorted(counts.items()) if v}
        if df.empty:
            raise SourceError(
                f"ForecastBench: no question of {', '.join(names)} has a resolution "
                f"(skipped: {self.skipped_by_reason or 'none'}). Check the question-set names and that their "
                f"resolution sets exist. {self._hint()}"
            )
        log.info("ForecastBench: %d question-resolution rows from %d question sets; skipped %s", len(df), len(names), self.skipped_by_reason)
        return df

    def _snapshot_file(self, snap: Path, rel: str, what: str, missing_ok: bool) -> tuple[bytes | None, str, str]:
        """Bytes, origin and sha256 of one snapshot file (``None`` bytes for a missing resolution set)."""
        path = snap / SNAPSHOT_SUBDIR / rel.split("/")[-1]
        if not path.is_file():
            if missing_ok:
                return None, f"snapshot:{path}", ""
            raise SourceError(
                f"ForecastBench {what}: file {str(path)!r} not found in the snapshot directory; "
                f"name an existing question set or {self._hint()}"
            )
        return path.read_bytes(), f"snapshot:{path}", sha256_file(path)

    def _live_file(self, session: Any, rel: str, what: str, missing_ok: bool) -> tuple[bytes | None, str, str]:
        """Bytes, URL and sha256 of one raw file (``None`` bytes for a missing resolution set: 404)."""
        url = f"{self.base_url}/{rel}"
        allow = (404,) if missing_ok else ()
        response = self._get(session, url, what=f"ForecastBench {what}", timeout=self.timeout, allow_status=allow)
        if response.status_code == 404 and missing_ok:
            return None, url, ""
        return response.content, url, sha256_bytes(response.content)


def fetch(
    *,
    snapshot_dir: str | os.PathLike[str] | None = None,
    session: Any = None,
    question_sets: Iterable[str] | None = None,
    base_url: str = BASE_URL,
    **_task_options: Any,
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The ``fetch_forecastbench`` entry point: one joined table and its manifest.

    Args:
        snapshot_dir: snapshot directory (``forecastbench/...``) or ``None`` for live.
        session: injected HTTP session (tests).
        question_sets: question-set file names; ``None`` = all in the snapshot / the defaults live.
        base_url: raw-file root of the datasets repository.
        _task_options: other keys of the ``tasks.forecast`` config block, accepted and ignored
            so that the rule may pass the whole block.

    Returns:
        ``(table, manifest)``: the :data:`COLUMNS` table (one row per single question and
        resolution date) and ``{"sources": [...], "skipped_by_reason": {...}, "unused_files": [...],
        "question_sets": [...], "rows": n}``.

    Raises:
        SourceError: see :class:`ForecastBenchReader`.
    """
    if _task_options:
        log.debug("fetch_forecastbench: ignoring task options %s", sorted(_task_options))
    return ForecastBenchReader(question_sets, session=session, snapshot_dir=snapshot_dir, base_url=base_url).fetch()
