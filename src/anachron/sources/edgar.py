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
"""

from __future__ import annotations

import json
import logging
import math
import os
import re
import time
from collections import Counter
from pathlib import Path
from typing import Any, Iterable, Iterator

import pandas as pd

from anachron.dates import is_iso_day
from anachron.frames import require_keys
from anachron.io import sha256_bytes, sha256_file, utc_now
from anachron.sources.base import (
    SourceReader,
    SourceError,
    find_snapshot_files,
    snapshot_hint,
)

log = logging.getLogger(__name__)

SOURCE = "edgar"
COMPANYFACTS_URL = "https://data.sec.gov/api/xbrl/companyfacts/CIK{cik:010d}.json"
SNAPSHOT_PATTERN = "edgar/companyfacts/CIK*.json"
SNAPSHOT_LAYOUT = "edgar/companyfacts/CIK##########.json"
#: Environment variable holding the SEC User-Agent (name and contact e-mail).
USER_AGENT_ENV = "ANACHRON_SEC_USER_AGENT"
#: Companies read live when none are named (those of the shared snapshot): Apple, NVIDIA, Tesla, Alphabet.
DEFAULT_CIKS = (320193, 1045810, 1318605, 1652044)
#: Seconds between two SEC requests (SEC allows at most 10 per second).
MIN_INTERVAL = 0.12

KEY_COLUMNS = ["cik", "taxonomy", "concept", "unit", "start", "end"]
COLUMNS = [
    "cik",
    "entity_name",
    "taxonomy",
    "concept",
    "label",
    "unit",
    "val",
    "start",
    "end",
    "fy",
    "fp",
    "form",
    "filed",
    "accn",
    "frame",
    "first_filed",
    "revision",
    "value_changed",
    "restates",
    "derived",
]
FACT_KEYS = ("end", "val", "accn", "form", "filed")
FILE_KEYS = ("cik", "facts")
_CIK_FILE = re.compile(r"^CIK(\d{10})\.json$")


def _cik(value: Any) -> int:
    text = str(value).strip().upper().removeprefix("CIK")
    if not text.isdigit() or int(text) <= 0 or len(text) > 10:
        raise ValueError(f"CIK {value!r} is not a positive number of at most 10 digits")
    return int(text)


def parse_companyfacts(data: bytes | str | dict, name: str, counts: Counter | None = None) -> pd.DataFrame:
    """Parse one companyfacts JSON into fact rows (columns :data:`COLUMNS` up to ``frame``).

    ``name`` labels the file in errors. Rows with a bad date or value are skipped and added to
    ``counts`` (``bad_date``, ``bad_value``). Revision columns are not added here (see
    :func:`add_revisions`).

    Raises :class:`SourceError` naming the file (and concept) when the JSON is invalid or a
    required key (``cik``, ``facts``; per fact ``end, val, accn, form, filed``) is missing.
    """
    counts = counts if counts is not None else Counter()
    if isinstance(data, dict):
        obj = data
    else:
        try:
            obj = json.loads(data)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise SourceError(f"{name}: not valid JSON ({exc}); replace it with an SEC companyfacts file.") from exc
    if not isinstance(obj, dict):
        raise SourceError(f"{name}: expected a JSON object; the file is not an SEC companyfacts file.")
    require_keys(obj, FILE_KEYS, name, error=SourceError, hint="the file is not an SEC companyfacts file — replace it.")
    cik = _cik(obj["cik"])
    entity = str(obj.get("entityName") or "")
    rows: list[tuple] = []
    for taxonomy, concepts in (obj["facts"] or {}).items():
        for concept, body in (concepts or {}).items():
            where = f"{name} ({taxonomy}:{concept})"
            if not isinstance(body, dict) or "units" not in body:
                raise SourceError(f"{where}: missing required key units; the file is not an SEC companyfacts file.")
            label = body.get("label")
            for unit, facts in (body["units"] or {}).items():
                fact_where = f"{where} unit {unit}: a fact"
                for fact in facts:
                    require_keys(fact, FACT_KEYS, fact_where, error=SourceError, hint="the file is not an SEC companyfacts file.")
                    end, filed, start = fact["end"], fact["filed"], fact.get("start")
                    if not (is_iso_day(end) and is_iso_day(filed) and (start is None or is_iso_day(start))):
                        counts["bad_date"] += 1
                        continue
                    val = fact["val"]
                    if isinstance(val, bool) or not isinstance(val, (int, float)) or not math.isfinite(val):
                        counts["bad_value"] += 1
                        continue
                    fy = fact.get("fy")
                    rows.append(
                        (
                            cik,
                            entity,
                            str(taxonomy),
                            str(concept),
                            None if label is None else str(label),
                            str(unit),
                            float(val),
                            start,
                            end,
                            int(fy) if isinstance(fy, (int, float)) and not isinstance(fy, bool) and fy == fy else None,
                            None if fact.get("fp") is None else str(fact["fp"]),
                            str(fact["form"]),
                            filed,
                            str(fact["accn"]),
                            None if fact.get("frame") is None else str(fact["frame"]),
                        )
                    )
    df = pd.DataFrame(rows, columns=COLUMNS[:15])
    df["cik"] = df["cik"].astype("int64")
    df["val"] = df["val"].astype("float64")
    df["fy"] = df["fy"].astype("Int64")
    return df


def add_revisions(facts: pd.DataFrame, counts: Counter | None = None) -> pd.DataFrame:
    """Order each period's reports in time and add ``first_filed, revision, value_changed, restates``.

    A period is (cik, taxonomy, concept, unit, start, end). Its reports are ordered by
    ``filed``, then ``accn``, then ``val``; the first is revision 0. ``value_changed`` is True
    when a report's value differs from the previous report's, and then ``restates`` holds the
    previous report's ``accn``. Exact repeats (same period, accn, val, form, filed, fy, fp) are
    dropped and counted as ``duplicate_fact``. A ``derived`` column is kept (False when absent).
    Returns a new frame sorted by period and time.
    """
    counts = counts if counts is not None else Counter()
    df = facts.copy()
    df["derived"] = df["derived"].fillna(False).astype(bool) if "derived" in df.columns else False
    dup = df.duplicated(KEY_COLUMNS + ["accn", "val", "form", "filed", "fy", "fp"], keep="first")
    counts["duplicate_fact"] += int(dup.sum())
    df = df.loc[~dup]
    order = KEY_COLUMNS + ["filed", "accn", "val"]
    sort_key = df[order].copy()
    sort_key["start"] = sort_key["start"].fillna("")  # instants first, NaN-safe
    df = df.loc[sort_key.sort_values(order, kind="mergesort").index].reset_index(drop=True)
    group_key = [df["cik"], df["taxonomy"], df["concept"], df["unit"], df["start"].fillna(""), df["end"]]
    grouped = df.groupby(group_key, sort=False)
    df["first_filed"] = grouped["filed"].transform("min").astype("str")
    df["revision"] = grouped.cumcount().astype("int64")
    prev_val = grouped["val"].shift(1)
    prev_accn = grouped["accn"].shift(1)
    changed = (df["revision"] > 0) & (df["val"] != prev_val)
    df["value_changed"] = changed.astype(bool)
    df["restates"] = prev_accn.where(changed, None)
    return df[COLUMNS]


#: Day counts of a fiscal year and of a nine-month year-to-date period (52/53-week calendars included).
YEAR_DAYS = (350, 380)
NINE_MONTH_DAYS = (260, 285)
_CURRENCY_UNIT = re.compile(r"^[A-Z]{3}$")


def derive_q4(facts: pd.DataFrame) -> pd.DataFrame:
    """Fourth-quarter rows computed as fiscal year minus nine months (module docstring).

    Args:
        facts: fact rows (:data:`COLUMNS` up to ``frame``, as :func:`parse_companyfacts` gives).

    Returns:
        New rows in the same columns plus ``derived`` (True): one per 10-K / 10-K/A report of
        a fiscal-year value of a monetary flow concept (``start`` set, unit a three-letter
        currency code) that is the filing's own fiscal year (its latest annual ``end``), when
        a nine-month period with the same ``start`` ending 80-100 days before the year end was
        reported on or before the 10-K's ``filed`` date (the latest such report is used) and
        no row reports the quarter (``start`` = nine-month end + 1 day, same ``end``) itself.
        ``val`` = annual - nine months; ``start`` = the day after the nine months end;
        ``fp`` = ``"Q4"``; ``frame`` None. Empty (same columns) when nothing can be derived.
    """
    cols = COLUMNS[:15]
    empty = pd.DataFrame({c: pd.Series(dtype=facts[c].dtype) for c in cols}).assign(derived=pd.Series(dtype=bool))
    df = facts.loc[facts["start"].notna() & facts["unit"].astype(str).str.match(_CURRENCY_UNIT), cols]
    if df.empty:
        return empty
    start = pd.to_datetime(df["start"])
    end = pd.to_datetime(df["end"])
    days = (end - start).dt.days
    is_10k = df["form"].astype(str).str.match(r"^10-K(?:/A)?$")
    annual = df.loc[is_10k & days.between(*YEAR_DAYS)].copy()
    if annual.empty:
        return empty
    # the filing's own fiscal year: the latest annual end in that accession
    annual = annual.loc[annual["end"] == annual.groupby("accn")["end"].transform("max")]
    nine = df.loc[days.between(*NINE_MONTH_DAYS)].copy()
    if nine.empty:
        return empty
    key = ["cik", "taxonomy", "concept", "unit", "start"]
    pairs = annual.merge(nine[key + ["end", "val", "filed", "accn"]], on=key, suffixes=("", "_9m"))
    gap = (pd.to_datetime(pairs["end"]) - pd.to_datetime(pairs["end_9m"])).dt.days
    pairs = pairs.loc[gap.between(80, 100) & (pairs["filed_9m"] <= pairs["filed"])]
    if pairs.empty:
        return empty
    # the nine months as known when the 10-K was filed: the latest report on or before it
    pairs = pairs.sort_values(["filed_9m", "accn_9m"], kind="mergesort")
    pairs = pairs.drop_duplicates(key + ["end", "accn", "val"], keep="last")
    out = pairs[cols].copy()
    out["start"] = (pd.to_datetime(pairs["end_9m"]) + pd.Timedelta(days=1)).dt.strftime("%Y-%m-%d").to_numpy()
    out["val"] = (pairs["val"] - pairs["val_9m"]).to_numpy(dtype="float64")
    out["fp"] = "Q4"
    out["frame"] = None
    reported = set(zip(df["cik"], df["taxonomy"], df["concept"], df["unit"], df["start"], df["end"]))
    keep = [k not in reported for k in zip(out["cik"], out["taxonomy"], out["concept"], out["unit"], out["start"], out["end"])]
    out = out.loc[keep].reset_index(drop=True)
    out["derived"] = True
    return out


def as_of(facts: pd.DataFrame, date: Any) -> pd.DataFrame:
    """The value of every (company, concept, unit, period) as known on ``date``.

    Pure function over a :data:`COLUMNS` frame (as from :func:`fetch`): keeps the reports
    filed on or before ``date`` (a date string, ``date`` or Timestamp; same-day filings count
    as known) and, per period, the latest of them (highest ``revision``). Periods first
    reported after ``date`` are absent. Returns the selected rows (all columns), sorted by
    period, with a fresh index.

    Raises ``ValueError`` when ``date`` is not a date, :class:`SourceError` when a column is missing.
    """
    from anachron.sources.base import check_columns

    check_columns(facts, KEY_COLUMNS + ["filed", "revision"], "EDGAR facts")
    try:
        day = pd.Timestamp(date)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"as_of date {date!r} is not a date (use ISO YYYY-MM-DD)") from exc
    if day is pd.NaT:
        raise ValueError(f"as_of date {date!r} is not a date (use ISO YYYY-MM-DD)")
    if day.tzinfo is not None:
        day = day.tz_convert("UTC").tz_localize(None)
    known = facts.loc[pd.to_datetime(facts["filed"]) <= day.normalize()]
    if known.empty:
        return known.reset_index(drop=True)
    key = [known["cik"], known["taxonomy"], known["concept"], known["unit"], known["start"].fillna(""), known["end"]]
    latest = known.groupby(key, sort=False)["revision"].transform("max")
    out = known.loc[known["revision"] == latest]
    sort_key = out[KEY_COLUMNS].copy()
    sort_key["start"] = sort_key["start"].fillna("")
    return out.loc[sort_key.sort_values(KEY_COLUMNS, kind="mergesort").index].reset_index(drop=True)


def restatement_links(facts: pd.DataFrame) -> pd.DataFrame:
    """Rows whose value differs from the previous report of the same period (``value_changed``).

    Each row links a later filing (``accn``, ``filed``, new ``val``) to the filing it restates
    (``restates``); the previous value is added as ``previous_val``.
    """
    prev = facts.groupby(
        [facts["cik"], facts["taxonomy"], facts["concept"], facts["unit"], facts["start"].fillna(""), facts["end"]], sort=False
    )["val"].shift(1)
    out = facts.assign(previous_val=prev)
    return out.loc[out["value_changed"].astype(bool)].reset_index(drop=True)


def sec_user_agent(user_agent: str | None = None) -> str:
    """The SEC User-Agent to send: ``user_agent``, else ``$ANACHRON_SEC_USER_AGENT``.

    Raises :class:`SourceError` when neither is set or the value has no contact e-mail
    (the SEC refuses anonymous automated requests).
    """
    ua = (user_agent or os.environ.get(USER_AGENT_ENV) or "").strip()
    if not ua or not re.search(r"[^@\s]+@[^@\s]+\.[A-Za-z]{2,}", ua):
        raise SourceError(
            "SEC EDGAR requires a User-Agent naming you with a contact e-mail, e.g. "
            f"'Jane Doe research jane@example.org'; set the environment variable {USER_AGENT_ENV} "
            f"(or pass user_agent). {snapshot_hint(SNAPSHOT_LAYOUT)}"
        )
    return ua


class CompanyFactsReader(SourceReader):
    """All XBRL facts of the given companies, one row per filing's report (point in time).

    Parameters
    ----------
    ciks:
        Central index keys (ints or strings, with or without ``CIK`` and zero padding).
        ``None``: every ``edgar/companyfacts/CIK##########.json`` in the snapshot; live,
        :data:`DEFAULT_CIKS`.
    session:
        ``requests.Session`` for live reads (tests inject one replaying recordings);
        ``None`` builds one with retries.
    snapshot_dir:
        Directory holding ``edgar/companyfacts/``; ``None`` falls back to
        ``$ANACHRON_SNAPSHOT_DIR``, then to the live API.
    user_agent:
        SEC User-Agent with contact e-mail (live only); default ``$ANACHRON_SEC_USER_AGENT``.
    min_interval:
        Seconds between live requests.
    derive_q4:
        Add derived fourth quarters (:func:`derive_q4`; default True).

    After :meth:`read`: :attr:`manifest` (one :func:`manifest_entry` per company file, with
    ``cik`` and ``entity_name``) and :attr:`skipped_by_reason`.

    Raises :class:`SourceError` from :meth:`read` for a missing User-Agent (live), an HTTP
    failure (404 = unknown CIK), a missing snapshot file or a malformed file (naming the file
    and the key); ``ValueError`` for a malformed CIK.
    """

    source = SOURCE
    snapshot_layout = SNAPSHOT_LAYOUT

    def __init__(
        self,
        ciks: Iterable[int | str] | None = None,
        *,
        session: Any = None,
        snapshot_dir: str | os.PathLike[str] | None = None,
        user_agent: str | None = None,
        min_interval: float = MIN_INTERVAL,
        timeout: float = 60.0,
        derive_q4: bool = True,
    ) -> None:
        self.ciks = None if ciks is None else list(dict.fromkeys(_cik(c) for c in ciks))
        if self.ciks is not None and not self.ciks:
            raise ValueError("CompanyFactsReader needs at least one CIK")
        super().__init__(session=session, snapshot_dir=snapshot_dir)
        self.user_agent = user_agent
        self.min_interval = float(min_interval)
        self.timeout = timeout
        self.derive_q4 = bool(derive_q4)

    def _read_snapshot(self, snap: Path) -> pd.DataFrame:
        return self._facts(self._snapshot_docs(snap))

    def _read_live(self, session: Any) -> pd.DataFrame:
        return self._facts(self._live_docs(session))

    def _manifest_extra(self, table: pd.DataFrame) -> dict[str, Any]:
        return {
            "rows": int(len(table)),
            "companies": int(table["cik"].nunique()),
            "revisions": int((table["revision"] > 0).sum()),
            "value_changing_revisions": int(table["value_changed"].sum()),
            "derived_q4": int(table["derived"].sum()),
            "fetched_at": utc_now(),
        }

    def _facts(self, docs: Iterator[tuple[bytes, str, str, str]]) -> pd.DataFrame:
        """Parse the ``(data, name, origin, sha256)`` documents of either mode, add revision columns."""
        counts: Counter = Counter()
        frames = []
        for data, name, origin, sha in docs:
            df = parse_companyfacts(data, name, counts)
            frames.append(df)
            entity = df["entity_name"].iloc[0] if len(df) else ""
            cik = int(df["cik"].iloc[0]) if len(df) else None
            self._record(origin, sha, len(df), kind="companyfacts", cik=cik, entity_name=entity)
        facts = pd.concat(frames, ignore_index=True) if frames else parse_companyfacts({"cik": 1, "facts": {}}, "empty")
        facts["derived"] = False
        if self.derive_q4:
            derived = derive_q4(facts)
            if len(derived):
                facts = pd.concat([facts, derived], ignore_index=True)
        out = add_revisions(facts, counts)
        self.skipped_by_reason = {k: int(v) for k, v in sorted(counts.items()) if v}
        log.info(
            "EDGAR companyfacts: %d facts of %d companies; %d revisions, %d value-changing; skipped %s",
            len(out), len(frames), int((out["revision"] > 0).sum()), int(out["value_changed"].sum()), self.skipped_by_reason,
        )
        return out

    def _snapshot_docs(self, snap: Path) -> Iterator[tuple[bytes, str, str, str]]:
        if self.ciks is None:
            paths = [p for p in find_snapshot_files(snap, SNAPSHOT_PATTERN) if _CIK_FILE.match(p.name)]
            if not paths:
                raise SourceError(f"no file named CIK##########.json under {str(snap / 'edgar' / 'companyfacts')!r}; {self._hint()}")
        else:
            paths = []
            for cik in self.ciks:
                path = snap / "edgar" / "companyfacts" / f"CIK{cik:010d}.json"
                if not path.is_file():
                    raise SourceError(
                        f"EDGAR companyfacts for CIK {cik}: {str(path)!r} not found in the snapshot directory; "
                        f"drop the CIK or {self._hint()}"
                    )
                paths.append(path)
        for path in paths:
            yield path.read_bytes(), str(path), f"snapshot:{path}", sha256_file(path)

    def _live_docs(self, session: Any) -> Iterator[tuple[bytes, str, str, str]]:
        ua = sec_user_agent(self.user_agent)
        headers = {"User-Agent": ua, "Accept-Encoding": "gzip, deflate"}
        last = 0.0
        for cik in self.ciks if self.ciks is not None else list(DEFAULT_CIKS):
            url = COMPANYFACTS_URL.format(cik=cik)
            wait = self.min_interval - (time.monotonic() - last)
            if wait > 0:
                time.sleep(wait)
            last = time.monotonic()
            response = self._get(
                session, url, headers=headers, what=f"EDGAR companyfacts for CIK {cik}", timeout=self.timeout, allow_status=(403, 404)
            )
            if response.status_code == 404:
                raise SourceError(f"EDGAR has no companyfacts for CIK {cik} ({url} returned 404); check the CIK (config ciks).")
            if response.status_code == 403:
                raise SourceError(
                    f"SEC refused {url} (403): it requires a descriptive User-Agent with a contact e-mail "
                    f"({USER_AGENT_ENV}) and at most 10 requests per second. {self._hint()}"
                )
            yield response.content, url, url, sha256_bytes(response.content)


def fetch(
    *,
    snapshot_dir: str | os.PathLike[str] | None = None,
    session: Any = None,
    ciks: Iterable[int | str] | None = None,
    user_agent: str | None = None,
    min_interval: float = MIN_INTERVAL,
    derive_q4: bool = True,
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The ``fetch_edgar`` entry point: all facts with revision columns, and a manifest.

    Returns ``(facts, manifest)``; ``facts`` as in the module docstring, ``manifest`` =
    ``{"sources": [...], "skipped_by_reason": {...}, "rows": n, "revisions": rows with
    revision > 0, "value_changing_revisions": rows with value_changed, "derived_q4": derived
    fourth-quarter rows, "companies": n, "fetched_at": ...}``. The User-Agent is never written to the manifest.

    Raises:
        SourceError: see :class:`CompanyFactsReader`.
    """
    reader = CompanyFactsReader(
        ciks, session=session, snapshot_dir=snapshot_dir, user_agent=user_agent, min_interval=min_interval, derive_q4=derive_q4
    )
    return reader.fetch()
