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
    vote_check      str     :func:`check_votes` of the counts ("ok", "short_court: ...", "missing", "invalid: ...")
    lower_court     str | None  name of the court below
    citation        str | None  "590 U.S. 1" when Oyez has volume and page
    additional_dockets  str   JSON list of other docket numbers heard with this case
    href            str     the case document's API URL

Dates: Oyez stores timeline events (Granted, Argued, Decided) as unix seconds. They are
converted in the Court's local time zone, America/New_York, so an event is dated by the
local calendar day in Washington, D.C.: 2020-06-14 22:30 EDT is already 2020-06-15 in UTC
and is dated 2020-06-14 (Oyez itself stores midnight or 01:00 local time). When an event
lists several dates (an argument over two days) the first is used.
"""

from __future__ import annotations

import datetime as dt
import difflib
import json
import logging
import os
import re
from pathlib import Path
from typing import Any, Iterable
from zoneinfo import ZoneInfo

import pandas as pd

from anachron.frames import is_null, require_keys
from anachron.io import sha256_bytes, sha256_file
from anachron.names import expand_short_forms, is_acronym_of
from anachron.sources.base import (
    SourceReader,
    SourceError,
    find_snapshot_files,
)
from anachron.sources.dockets import normalize_docket
from anachron.sources.html_text import html_to_text

log = logging.getLogger(__name__)

#: Base URL of the Oyez API.
OYEZ_API = "https://api.oyez.org"
#: Snapshot path pattern, relative to the snapshot directory.
SNAPSHOT_PATTERN = "oyez/cases/*.json"
#: The Court's local time zone; timeline timestamps are dated in it.
COURT_TZ = ZoneInfo("America/New_York")
#: Terms fetched when none are given (the legal task uses 2014–2023, 2024 for control).
DEFAULT_TERMS = tuple(range(2014, 2025))
#: Keys every case document must have (a missing key is a layout error naming the file).
REQUIRED_KEYS = ("name", "term", "docket_number", "first_party", "second_party", "timeline")
#: Columns of the ``cases`` table, in order.
CASE_COLUMNS = [
    "term",
    "docket",
    "docket_key",
    "name",
    "petitioner",
    "respondent",
    "first_party_label",
    "second_party_label",
    "facts",
    "question",
    "granted_date",
    "argued_date",
    "decided_date",
    "oyez_outcome",
    "oyez_outcome_note",
    "winning_party",
    "majority_votes",
    "minority_votes",
    "vote_check",
    "lower_court",
    "citation",
    "additional_dockets",
    "href",
]

#: ``oyez_outcome_note`` values.
NOTE_MATCHED = "matched"
NOTE_NO_DECISION = "no_decision"
NOTE_NO_WINNER = "no_winning_party"
NOTE_DISMISSED = "dismissed"
NOTE_UNMATCHED = "unmatched_winner"
NOTE_CONFLICT = "conflicting_decisions"

#: Skip reasons (manifest ``skipped_by_reason``).
SKIP_NO_DOCKET = "missing_docket"
SKIP_BAD_TERM = "bad_term"
SKIP_DUPLICATE = "duplicate_term_docket"
SKIP_NOT_JSON = "not_json_object"

#: JSON Schema of the ``sources.oyez`` config block (live settings; snapshots ignore them).
CONFIG_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "default": {},
    "description": "Oyez API client (live mode); a snapshot reads oyez/cases/*.json instead.",
    "properties": {
        "terms": {
            "description": "October Terms to fetch (the legal task uses 2014-2023; 2024 feeds the control split).",
            "type": "array",
            "items": {"type": "integer", "minimum": 1789},
            "default": list(DEFAULT_TERMS),
        },
        "base_url": {"description": "Oyez API base URL.", "type": "string", "default": OYEZ_API},
        "timeout": {"description": "Seconds per HTTP request.", "type": "number", "exclusiveMinimum": 0, "default": 30},
    },
}

_WINNER_STOP = {
    "the", "of", "and", "et", "al", "inc", "llc", "co", "corp", "corporation", "company", "ltd", "lp",
    "ex", "rel", "v", "vs", "in", "re", "for", "a", "an", "on", "behalf",
}
_NOT_A_PARTY = {"dismissal", "dismissed", "none", "n/a", "na", "unclear", "vacated", "remanded"}


# ---------------------------------------------------------------------------
# small parsers (public: the legal task and tests use them)
# ---------------------------------------------------------------------------


def local_date(seconds: Any, tz: ZoneInfo = COURT_TZ) -> str | None:
    """ISO date (``YYYY-MM-DD``) of unix ``seconds`` in the Court's time zone, or None.

    The calendar day in ``tz`` (America/New_York by default), not in UTC: 2020-06-15 02:30
    UTC is 2020-06-14 22:30 EDT and is dated ``"2020-06-14"``.
    """
    if seconds is None or isinstance(seconds, bool):
        return None
    try:
        value = float(seconds)
    except (TypeError, ValueError):
        return None
    if value != value:  # NaN
        return None
    return dt.datetime.fromtimestamp(value, tz).date().isoformat()


def timeline_dates(timeline: Any, tz: ZoneInfo = COURT_TZ) -> dict[str, str | None]:
    """``{"granted_date", "argued_date", "decided_date"}`` from an Oyez ``timeline``.

    ``timeline`` is a list of ``{"event": "Granted"|"Argued"|"Reargued"|"Decided"|...,
    "dates": [unix seconds, ...]}`` (entries may be null). Each date is the first of its
    event's ``dates``, dated in ``tz`` (:func:`local_date`); None when the event is absent.
    """
    out: dict[str, str | None] = {"granted_date": None, "argued_date": None, "decided_date": None}
    keys = {"granted": "granted_date", "argued": "argued_date", "decided": "decided_date"}
    for entry in timeline or []:
        if not isinstance(entry, dict):
            continue
        key = keys.get(str(entry.get("event") or "").strip().lower())
        dates = entry.get("dates") or []
        if key is None or out[key] is not None or not dates:
            continue
        firsts = [d for d in (local_date(x, tz) for x in dates) if d is not None]
        if firsts:
            out[key] = min(firsts)
    return out


def _tokens(name: str, *, keep_stop: bool = False) -> list[str]:
    # abbreviations written out ("U.S." -> "united states", "Ass'n" -> "association"); dots go
    # without a space so that initials stay one token ("V.L." -> "vl")
    text = expand_short_forms(name.replace("&", " and "))
    return [t for t in text.split() if keep_stop or t not in _WINNER_STOP]


def _short_parties(case_name: str) -> tuple[str, str]:
    """The two sides of a case name split at " v. " (empty strings when it does not split)."""
    parts = re.split(r"\s+v(?:s)?\.?\s+", case_name or "", maxsplit=1)
    return (parts[0], parts[1]) if len(parts) == 2 else ("", "")


def _similarity(winner: str, candidate: str) -> float:
    """Share of the winner's name tokens found in the candidate (0..1), or the string ratio.

    An acronym on either side scores 1.0 against a name with those initials
    (:func:`anachron.names.is_acronym_of`: "EPA", "NLRB", "AFPF" for "Americans for
    Prosperity Foundation"); abbreviations are written out first ("U.S." = "United States").
    """
    wt, ct = _tokens(winner), _tokens(candidate)
    if not wt or not ct:
        return 0.0
    if is_acronym_of(winner, candidate) or is_acronym_of(candidate.split(",")[0], winner):
        return 1.0
    cset = set(ct)
    contained = sum(1 for t in wt if t in cset) / len(wt)
    ratio = difflib.SequenceMatcher(None, " ".join(wt), " ".join(ct)).ratio()
    return max(contained, ratio)


def is_not_a_party(winner: str) -> bool:
    """True for a ``winning_party`` value that names no party ("dismissal", "Dismissed", ...)."""
    return str(winner).lower().strip(". ") in _NOT_A_PARTY


def match_winning_party(
    winner: Any, petitioner: Any, respondent: Any, case_name: Any = "", *, threshold: float = 0.6, margin: float = 0.15
) -> str | None:
    """Which side ``winner`` (Oyez ``winning_party``) names: ``"petitioner"``, ``"respondent"`` or None.

    The winner is compared, by a fuzzy name similarity (share of its name tokens found, or
    the string-similarity ratio, whichever is higher; corporate suffixes, "et al.", "ex rel."
    ignored), with each side's full party name and with that side's short name in the case
    name ("Young" in "Young v. United Parcel Service"). The side with the higher score wins
    when that score is at least ``threshold`` and beats the other side by ``margin``;
    otherwise (ambiguous, or a non-party such as "dismissal") the result is None.
    """
    if is_null(winner):
        return None
    w = str(winner).strip()
    if not w or is_not_a_party(w):
        return None
    short_pet, short_resp = _short_parties(str(case_name or ""))
    pet = max(_similarity(w, str(petitioner or "")), _similarity(w, short_pet))
    resp = max(_similarity(w, str(respondent or "")), _similarity(w, short_resp))
    best = max(pet, resp)
    if best < threshold or abs(pet - resp) < margin:
        return None
    return "petitioner" if pet > resp else "respondent"


def decide_outcome(decisions: Any, petitioner: Any, respondent: Any, case_name: Any) -> tuple[str | None, str, str | None]:
    """``(oyez_outcome, note, raw_winners)`` from a case's ``decisions`` list.

    Every decision with a ``winning_party`` must map (:func:`match_winning_party`) to the
    same side; a case with several decisions (consolidated cases, plurality + majority)
    whose winners map to different sides, or with a winner that matches neither side, has
    no outcome. A winner written as several names separated by ";" (consolidated cases:
    "Wong; June") counts when the names that match a side all match the same one. A
    dismissal ("dismissal", "Dismissed") has no winner. ``note`` is one of ``matched``,
    ``no_decision``, ``no_winning_party``, ``dismissed``, ``unmatched_winner``,
    ``conflicting_decisions``.
    """
    if not decisions:
        return None, NOTE_NO_DECISION, None
    winners = [str(d.get("winning_party")).strip() for d in decisions if isinstance(d, dict) and d.get("winning_party")]
    raw = " | ".join(dict.fromkeys(winners)) or None
    if not winners:
        return None, NOTE_NO_WINNER, raw
    if all(is_not_a_party(w) for w in winners):
        return None, NOTE_DISMISSED, raw
    sides = []
    for w in winners:
        parts = [p.strip() for p in w.split(";") if p.strip()]
        matched = [m for m in (match_winning_party(p, petitioner, respondent, case_name) for p in parts) if m]
        if not matched or (len(parts) == 1 and len(matched) != 1):
            return None, NOTE_UNMATCHED, raw
        sides.extend(matched)
    if len(set(sides)) > 1:
        return None, NOTE_CONFLICT, raw
    return sides[0], NOTE_MATCHED, raw


#: Justices on the Court, and the quorum a decision needs (28 U.S.C. § 1).
COURT_SIZE = 9
QUORUM = 6


def _count(v: Any) -> int | None | str:
    """A vote count as an int, None when absent, or the reason it is not a count."""
    if is_null(v) or v == "":
        return None
    if isinstance(v, bool):
        return f"{v!r} is not a count"
    try:
        f = float(v)
    except (TypeError, ValueError):
        return f"{v!r} is not a count"
    if f != int(f) or f < 0:
        return f"{v!r} is not a whole number of votes"
    return int(f)


def check_votes(majority: Any, minority: Any) -> tuple[int | None, int | None, str]:
    """``(majority, minority, check)``: an Oyez decision's ``majority_vote`` / ``minority_vote``
    read as counts, and whether they can be a Supreme Court vote.

    ``check`` is ``"ok"`` (nine votes; a tie is an equally divided Court), ``"short_court: N of
    9 justices voted ..."`` (fewer than nine, a recusal or a vacancy, but at least the quorum
    of six: valid), ``"missing"``
    (no counts, or both 0: Oyez writes 0-0 when it has none) or ``"invalid: <reason>"``: a
    count that is not a whole number, more than nine votes, a majority smaller than the
    minority, or fewer votes than the quorum.
    """
    maj, mino = _count(majority), _count(minority)
    for c in (maj, mino):
        if isinstance(c, str):
            return None, None, f"invalid: {c}"
    if (maj or 0) == 0 and (mino or 0) == 0:
        return None, None, "missing"
    maj, mino = int(maj or 0), int(mino or 0)
    total = maj + mino
    if total > COURT_SIZE:
        return maj, mino, f"invalid: {maj}-{mino} is more than the Court's {COURT_SIZE} votes"
    if maj < mino:
        return maj, mino, f"invalid: majority {maj} smaller than minority {mino}"
    if total < QUORUM:
        return maj, mino, f"invalid: {maj}-{mino} is fewer votes than the quorum of {QUORUM}"
    if total < COURT_SIZE:
        return maj, mino, f"short_court: {total} of {COURT_SIZE} justices voted (a recusal or a vacancy)"
    return maj, mino, "ok"


def decision_votes(decisions: Any) -> tuple[int | None, int | None, str]:
    """:func:`check_votes` of the first decision in ``decisions`` with recorded counts (the
    main opinion comes first); ``(None, None, "missing")`` when none has counts."""
    for d in decisions or []:
        if isinstance(d, dict):
            got = check_votes(d.get("majority_vote"), d.get("minority_vote"))
            if got[2] != "missing":
                return got
    return None, None, "missing"


def _citation(cit: Any) -> str | None:
    if not isinstance(cit, dict):
        return None
    vol, page = cit.get("volume"), cit.get("page")
    if vol in (None, "") or page in (None, ""):
        return None
    return f"{vol} U.S. {page}"


def _lower_court(lc: Any) -> str | None:
    if isinstance(lc, dict):
        name = lc.get("name")
        return str(name).strip() if name else None
    if isinstance(lc, str) and lc.strip():
        return lc.strip()
    return None


def parse_case(doc: Any, where: str) -> dict[str, Any]:
    """One row of the ``cases`` table from an Oyez case document.

    ``where`` names the document (file path or URL) in errors. Raises :class:`SourceError`
    naming ``where`` and the key when a key of :data:`REQUIRED_KEYS` is absent (a layout
    error). Values may be null: the caller skips rows without docket or term.
    """
    if not isinstance(doc, dict):
        raise SourceError(f"{where}: not an Oyez case document (expected a JSON object, got {type(doc).__name__}).")
    require_keys(doc, REQUIRED_KEYS, f"{where}: Oyez case document", error=SourceError,
                 hint=f"replace the file with a document from {OYEZ_API}/cases/<term>/<docket>.")
    name = str(doc.get("name") or "").strip()
    pet = str(doc.get("first_party") or "").strip()
    resp = str(doc.get("second_party") or "").strip()
    outcome, note, raw = decide_outcome(doc.get("decisions"), pet, resp, name)
    majority, minority, vote_check = decision_votes(doc.get("decisions") if isinstance(doc.get("decisions"), list) else None)
    try:
        term: int | None = int(str(doc.get("term")).strip())
    except (TypeError, ValueError):
        term = None
    docket = doc.get("docket_number")
    extra = doc.get("additional_docket_numbers") or []
    if not isinstance(extra, list):
        extra = [extra]
    return {
        "term": term,
        "docket": None if docket in (None, "") else str(docket).strip(),
        "docket_key": normalize_docket(docket),
        "name": name,
        "petitioner": pet,
        "respondent": resp,
        "first_party_label": str(doc.get("first_party_label") or "Petitioner"),
        "second_party_label": str(doc.get("second_party_label") or "Respondent"),
        "facts": html_to_text(doc.get("facts_of_the_case")),
        "question": html_to_text(doc.get("question")),
        **timeline_dates(doc.get("timeline")),
        "oyez_outcome": outcome,
        "oyez_outcome_note": note,
        "winning_party": raw,
        "majority_votes": majority,
        "minority_votes": minority,
        "vote_check": vote_check,
        "lower_court": _lower_court(doc.get("lower_court")),
        "citation": _citation(doc.get("citation")),
        "additional_dockets": json.dumps([str(x) for x in extra if x not in (None, "")]),
        "href": str(doc.get("href") or (f"{OYEZ_API}/cases/{term}/{docket}" if term and docket else "")),
    }


def empty_cases() -> pd.DataFrame:
    """An empty ``cases`` table with the right columns."""
    df = pd.DataFrame({c: pd.Series(dtype="object") for c in CASE_COLUMNS})
    for c in ("term", "majority_votes", "minority_votes"):
        df[c] = pd.Series(dtype="Int64")
    return df[CASE_COLUMNS]


def finish_cases(rows: list[dict[str, Any]]) -> tuple[pd.DataFrame, dict[str, int]]:
    """Frame from parsed rows: drop rows without docket/term and (term, docket) repeats.

    Returns ``(cases, skipped_by_reason)``; the first of repeated (term, docket_key) rows is
    kept. Sorted by term, docket_key.
    """
    skipped: dict[str, int] = {}
    kept = []
    seen: set[tuple[int, str]] = set()
    for r in rows:
        if r["docket_key"] is None:
            skipped[SKIP_NO_DOCKET] = skipped.get(SKIP_NO_DOCKET, 0) + 1
            continue
        if r["term"] is None:
            skipped[SKIP_BAD_TERM] = skipped.get(SKIP_BAD_TERM, 0) + 1
            continue
        key = (r["term"], r["docket_key"])
        if key in seen:
            skipped[SKIP_DUPLICATE] = skipped.get(SKIP_DUPLICATE, 0) + 1
            continue
        seen.add(key)
        kept.append(r)
    if not kept:
        return empty_cases(), skipped
    df = pd.DataFrame(kept, columns=CASE_COLUMNS)
    for c in ("term", "majority_votes", "minority_votes"):
        df[c] = df[c].astype("Int64")
    df = df.sort_values(["term", "docket_key"], kind="mergesort").reset_index(drop=True)
    return df, skipped


# ---------------------------------------------------------------------------
# the reader
# ---------------------------------------------------------------------------


class OyezCaseReader(SourceReader):
    """Oyez case documents for a set of terms, as the ``cases`` table (module docstring).

    Parameters
    ----------
    terms:
        October Terms to read (default :data:`DEFAULT_TERMS`). Snapshot files of other
        terms are ignored.
    session:
        ``requests.Session`` for live mode (tests inject one replaying recordings);
        ``None`` builds one with retries (:func:`anachron.sources.base.make_session`).
    snapshot_dir:
        Directory holding ``oyez/cases/{term}.{docket}.json``; ``None`` falls back to
        ``$ANACHRON_SNAPSHOT_DIR`` and then to the live API.
    base_url, timeout:
        Oyez API base URL and seconds per request.

    After :meth:`read`, :attr:`manifest` holds one provenance record and
    :attr:`skipped_by_reason` the rows dropped (no docket, bad term, duplicates).

    Raises :class:`SourceError` from :meth:`read` on an HTTP failure, an unreadable or
    malformed document (naming the file/URL and the missing key), or no case at all.
    """

    source = "oyez"
    snapshot_layout = SNAPSHOT_PATTERN

    def __init__(
        self,
        terms: Iterable[int] | None = None,
        *,
        session: Any = None,
        snapshot_dir: str | os.PathLike[str] | None = None,
        base_url: str = OYEZ_API,
        timeout: float = 30.0,
    ) -> None:
        self.terms = sorted({int(t) for t in (terms if terms is not None else DEFAULT_TERMS)})
        if not self.terms:
            raise ValueError("OyezCaseReader needs at least one term")
        super().__init__(session=session, snapshot_dir=snapshot_dir)
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout

    def _cases(self, rows: list[dict[str, Any]], origin: str, sha: str, extra: dict[str, Any]) -> pd.DataFrame:
        """The ``cases`` table from the parsed documents of either mode, and its record."""
        df, skipped = finish_cases(rows)
        self.skipped_by_reason = skipped
        if df.empty:
            raise SourceError(
                f"Oyez: no cases for terms {self.terms[0]}-{self.terms[-1]} from {origin}. "
                + self._hint()
            )
        notes = df["oyez_outcome_note"].value_counts().to_dict()
        self._record(
            origin,
            sha,
            len(df),
            terms=self.terms,
            skipped_by_reason=skipped,
            oyez_outcome_notes={str(k): int(v) for k, v in notes.items()},
            vote_checks={str(k).split(":")[0]: int(v) for k, v in df["vote_check"].str.split(":").str[0].value_counts().items()},
            timezone=str(COURT_TZ),
            **extra,
        )
        return df

    # -- snapshot -----------------------------------------------------------------------
    def _read_snapshot(self, snap: Path) -> pd.DataFrame:
        files = find_snapshot_files(snap, SNAPSHOT_PATTERN)
        wanted = {str(t) for t in self.terms}
        rows, digests = [], []
        for path in files:
            if path.name.split(".", 1)[0] not in wanted:
                continue
            try:
                doc = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
                raise SourceError(f"{path}: could not read as JSON ({exc}); replace the file with an Oyez case document.") from exc
            digests.append(f"{path.name} {sha256_file(path)}")
            row = parse_case(doc, str(path))
            if row["term"] is not None and str(row["term"]) not in wanted:
                continue
            rows.append(row)
        origin = f"snapshot:{snap / 'oyez' / 'cases'}"
        extra = {"files": len(digests), "sha256_of": "sorted '<file> <sha256>' lines of the files read"}
        return self._cases(rows, origin, sha256_bytes("\n".join(sorted(digests)).encode("utf-8")), extra)

    # -- live ---------------------------------------------------------------------------
    def _read_live(self, session: Any) -> pd.DataFrame:
        rows, digests = [], []
        for term in self.terms:
            list_url = f"{self.base_url}/cases"
            resp = self._get(
                session,
                list_url,
                params={"filter": f"term:{term}", "per_page": 0},
                what=f"the Oyez case list of term {term}",
                timeout=self.timeout,
            )
            try:
                listing = resp.json()
            except ValueError as exc:
                raise SourceError(f"{resp.url}: the Oyez case list is not JSON ({exc}). {self._hint()}") from exc
            if not isinstance(listing, list):
                raise SourceError(f"{resp.url}: expected a JSON list of cases, got {type(listing).__name__}. {self._hint()}")
            digests.append(f"{resp.url} {sha256_bytes(resp.content)}")
            for item in listing:
                if not isinstance(item, dict) or not item.get("docket_number"):
                    continue
                url = item.get("href") or f"{self.base_url}/cases/{term}/{item['docket_number']}"
                doc_resp = self._get(session, url, what=f"Oyez case {term}/{item['docket_number']}", timeout=self.timeout)
                try:
                    doc = doc_resp.json()
                except ValueError as exc:
                    raise SourceError(f"{url}: the Oyez case document is not JSON ({exc}). {self._hint()}") from exc
                digests.append(f"{url} {sha256_bytes(doc_resp.content)}")
                rows.append(parse_case(doc, url))
        origin = f"{self.base_url}/cases?filter=term:{{term}}&per_page=0"
        extra = {"requests": len(digests), "sha256_of": "sorted '<url> <sha256 of body>' lines"}
        return self._cases(rows, origin, sha256_bytes("\n".join(sorted(digests)).encode("utf-8")), extra)


def fetch(
    *,
    snapshot_dir: str | os.PathLike[str] | None = None,
    session: Any = None,
    terms: Iterable[int] | None = None,
    base_url: str = OYEZ_API,
    timeout: float = 30.0,
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The ``cases`` table of the given terms, and its manifest (the ``fetch_oyez`` rule).

    Returns ``(cases, {"sources": [record], "skipped_by_reason": {...}})``; see the module
    docstring for the columns. Raises :class:`SourceError` when nothing can be read.
    """
    return OyezCaseReader(terms, session=session, snapshot_dir=snapshot_dir, base_url=base_url, timeout=timeout).fetch()
