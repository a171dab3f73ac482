"""The ``forecastbench`` reader: question sets joined with their rounds' resolution sets, live or
from a snapshot (:mod:`anachron.sources.forecastbench`)."""

from __future__ import annotations

import datetime as dt
import functools
import logging
import os
import time
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Iterable

import pandas as pd

from anachron.io import sha256_bytes, sha256_file, utc_now
from anachron.sources.base import SourceReader, SourceError
from anachron.sources.forecastbench.alfred import KEY_ENV, MIN_INTERVAL, AlfredClient
from anachron.sources.forecastbench.layout import (
    BASE_URL,
    DEFAULT_QUESTION_SETS,
    QUESTION_SET_NAME,
    QUESTION_SET_PATH,
    RESOLUTION_SET_PATH,
    SNAPSHOT_LAYOUT,
    SNAPSHOT_SUBDIR,
    SOURCE,
    resolution_set_name,
)
from anachron.sources.forecastbench.questions import parse_question_set
from anachron.sources.forecastbench.resolutions import parse_resolution_set
from anachron.sources.forecastbench.table import join_questions_resolutions
from anachron.sources.forecastbench.vintage import REVISABLE_SOURCES, resolve_first_release

log = logging.getLogger(__name__)


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
    fred_key_env:
        Name of the environment variable holding a FRED API key (default ``FRED_API_KEY``);
        when it is set, a live read re-resolves FRED rows on first releases (ALFRED, see
        :mod:`anachron.sources.forecastbench`). ``None``: never.
    as_of:
        ISO day bounding the first releases used (``realtime_end``); ``None``: today (UTC).
    min_interval, sleep:
        Seconds between ALFRED requests and the function that waits (tests pass 0).

    After :meth:`read`: :attr:`manifest` (one :func:`manifest_entry` per file read, with
    ``kind`` question_set/resolution_set, and one per ALFRED series, ``kind``
    alfred_first_release), :attr:`skipped_by_reason` and :attr:`first_release` (see
    :mod:`anachron.sources.forecastbench`). Resolution-set files in a snapshot that match no
    loaded question set are listed in :attr:`unused_files`.

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
        fred_key_env: str | None = KEY_ENV,
        as_of: str | None = None,
        min_interval: float = MIN_INTERVAL,
        sleep: Callable[[float], None] = time.sleep,
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
        self.fred_key_env = fred_key_env
        self.as_of = as_of
        self.min_interval = min_interval
        self.sleep = sleep
        self.unused_files: list[str] = []
        self.first_release: dict[str, Any] = {}

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
        df = self._read_sets(names, functools.partial(self._snapshot_file, snap))
        self._as_revised(df, "snapshot: no vintages, so fred and dbnomics labels are ForecastBench's, on the series as revised")
        return df

    def _read_live(self, session: Any) -> pd.DataFrame:
        names = list(self.question_sets) if self.question_sets is not None else list(DEFAULT_QUESTION_SETS)
        df = self._read_sets(names, functools.partial(self._live_file, session))
        key = os.environ.get(self.fred_key_env, "").strip() if self.fred_key_env else ""
        if not key:
            why = f"environment variable {self.fred_key_env} is unset or empty" if self.fred_key_env else "fred_key_env is null"
            self._as_revised(df, f"no FRED API key ({why}): fred and dbnomics labels are ForecastBench's, on the series as revised")
            return df
        as_of = self.as_of or dt.datetime.now(dt.timezone.utc).date().isoformat()
        get = functools.partial(self._get, session, timeout=self.timeout)
        client = AlfredClient(get, key, as_of=as_of, min_interval=self.min_interval, sleep=self.sleep)
        df, stats = resolve_first_release(df, client, self._record)
        self.first_release = {
            "first_release_note": (
                f"fred rows re-resolved on values as first published on or before {as_of} (ALFRED); "
                "dbnomics rows and failed lookups keep ForecastBench's label, on the series as revised"
            ),
            "first_release_as_of": as_of,
            **stats,
            "revised_value_rows": int(df["revised_value"].sum()),
        }
        return df

    def _manifest_extra(self, table: pd.DataFrame) -> dict[str, Any]:
        return {
            "unused_files": self.unused_files,
            "question_sets": sorted(table["question_set"].unique().tolist()),
            "rows": int(len(table)),
            "fetched_at": utc_now(),
            **self.first_release,
        }

    def _as_revised(self, df: pd.DataFrame, note: str) -> None:
        """Record that no label was re-resolved (the table keeps the join's vintage columns)."""
        self.first_release = {
            "first_release_note": note,
            "first_release_as_of": None,
            "first_release_rows": 0,
            "first_release_flips": 0,
            "first_release_fallbacks": {},
            "revised_value_rows": int(df["revised_value"].sum()),
        }
        log.info("ForecastBench: %s (%d rows of %s)", note, self.first_release["revised_value_rows"], "/".join(REVISABLE_SOURCES))

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
    fred_key_env: str | None = KEY_ENV,
    **_task_options: Any,
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The ``fetch_forecastbench`` entry point: one joined table and its manifest.

    Args:
        snapshot_dir: snapshot directory (``forecastbench/...``) or ``None`` for live.
        session: injected HTTP session (tests).
        question_sets: question-set file names; ``None`` = all in the snapshot / the defaults live.
        base_url: raw-file root of the datasets repository.
        fred_key_env: environment variable holding a FRED API key; set (live), FRED labels are
            re-resolved on first releases. ``None``: never.
        _task_options: other keys of the ``tasks.forecast`` config block, accepted and ignored
            so that the rule may pass the whole block.

    Returns:
        ``(table, manifest)``: the :data:`~anachron.sources.forecastbench.table.COLUMNS` table
        (one row per single question and resolution date) and ``{"sources": [...],
        "skipped_by_reason": {...}, "unused_files": [...], "question_sets": [...], "rows": n,
        "first_release_note": str, "first_release_as_of": day|None, "first_release_rows": n,
        "first_release_flips": n, "first_release_fallbacks": {reason: rows}, "revised_value_rows": n}``.

    Raises:
        SourceError: see :class:`ForecastBenchReader`.
    """
    if _task_options:
        log.debug("fetch_forecastbench: ignoring task options %s", sorted(_task_options))
    return ForecastBenchReader(
        question_sets, session=session, snapshot_dir=snapshot_dir, base_url=base_url, fred_key_env=fred_key_env
    ).fetch()
