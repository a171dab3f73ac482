"""Federal appellate opinions from CourtListener (REST API v4), with a disposition label.

Live mode (needs an API token) searches opinions
(``GET https://www.courtlistener.com/api/rest/v4/search/?type=o&court=ca1 ca2 ...&filed_after=
YYYY-MM-DD&filed_before=YYYY-MM-DD&order_by=citeCount desc``), follows the cursor
pagination (each page's ``next`` URL) until ``max_cases`` hits, and for each hit reads the
cluster (``/clusters/{id}/``: its ``disposition`` field and ``sub_opinions``) and the lead
opinion (``/opinions/{id}/``: ``html_with_citations``, ``html``, ``plain_text``,
``local_path``, ``download_url``). The text is the first of, in this order (:data:`TEXT_SOURCES`):
``html_with_citations`` (tags stripped), ``html``, ``plain_text``, the opinion PDF read with
pdfplumber (:mod:`anachron.sources.pdf`: the first ``max_pdf_pages`` (12) pages, blank or
slow pages flagged and skipped, line-end hyphenation rejoined); at most ``max_chars``
(8,000) characters, as in the TEMPO paper's legal task. The disposition
comes from the cluster's ``disposition`` field when it is conclusive, else from the text
(:func:`classify_disposition`): reversed / vacated -> the appellant (petitioner) prevails,
affirmed -> the appellee (respondent) prevails (for a petition for review of an agency
order: granted -> petitioner, denied -> respondent); mixed ("affirmed in part"),
dismissed or not found -> no label (the legal task excludes the case with the reason).

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
:func:`normalize_precedential_status`); any other value is logged, stored as null and
counted in the manifest (``unknown_precedential_status``).

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
"""

from __future__ import annotations

import logging
import os
import re
import time
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping

import pandas as pd
import requests

from anachron.dates import to_iso
from anachron.http import throttle_wait_seconds
from anachron.io import sha256_bytes
from anachron.progress import advance_job
from anachron.sources.pdf import MAX_CHARS, MAX_PDF_PAGES, PAGE_TIMEOUT, join_pages, page_flags, read_pdf_pages
from anachron.sources.base import (
    DEFAULT_USER_AGENT,
    SourceError,
    SourceReader,
    find_snapshot_files,
    make_session,
    read_csv_checked,
)

log = logging.getLogger(__name__)

#: REST API v4 base URL.
API_BASE = "https://www.courtlistener.com/api/rest/v4"
#: Where CourtListener serves stored files (opinion PDFs at ``/<local_path>``).
STORAGE_BASE = "https://storage.courtlistener.com"
#: Environment variable holding the API token, unless config names another.
TOKEN_ENV = "COURTLISTENER_TOKEN"
#: The federal courts of appeals (CourtListener court ids).
DEFAULT_COURTS = ("ca1", "ca2", "ca3", "ca4", "ca5", "ca6", "ca7", "ca8", "ca9", "ca10", "ca11", "cadc", "cafc")
#: Snapshot file, relative to the snapshot directory.
SNAPSHOT_PATTERN = "courts/federal_appellate_opinion_listings.csv"
LISTING_COLUMNS = ["court", "case_name", "date_filed", "docket_number", "precedential_status", "download_url"]
#: Output columns, in order.
COLUMNS = [
    "court",
    "case_name",
    "date_filed",
    "docket_number",
    "precedential_status",
    "download_url",
    "cluster_id",
    "opinion_id",
    "cite_count",
    "text",
    "text_source",
    "disposition",
    "disposition_source",
    "disposition_note",
    "outcome",
    "appellant",
    "appellee",
    "party_source",
    "origin",
]
#: Note in the manifest when no token is configured.
NO_TOKEN_NOTE = "no token configured"


#: Disposition -> which side prevails (petitioner = appellant).
OUTCOME_BY_DISPOSITION = {
    "reversed": "petitioner",
    "vacated": "petitioner",
    "granted": "petitioner",  # petition for review of an agency order granted
    "affirmed": "respondent",
    "denied": "respondent",  # petition for review denied: the agency order stands
}

#: JSON Schema of the ``sources.courtlistener`` config block.
CONFIG_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "default": {},
    "description": (
        "CourtListener REST v4 (live mode needs a token in the environment variable named by token_env; "
        "without one the source is an empty table). Snapshot: courts/federal_appellate_opinion_listings.csv."
    ),
    "properties": {
        "token_env": {
            "description": "Name of the environment variable holding the API token (the token itself never goes in config).",
            "type": "string",
            "default": TOKEN_ENV,
        },
        "courts": {
            "description": "CourtListener court ids to search.",
            "type": "array",
            "items": {"type": "string", "pattern": "^[a-z0-9]+$"},
            "minItems": 1,
            "default": list(DEFAULT_COURTS),
        },
        "filed_after": {"description": "Earliest filing date (ISO).", "type": "string", "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$", "default": "2017-01-01"},
        "filed_before": {"description": "Latest filing date (ISO).", "type": "string", "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$", "default": "2024-12-31"},
        "max_cases": {"description": "Most search hits to read (sorted by citation count).", "type": "integer", "minimum": 1, "default": 100},
        "order_by": {"description": "Search ordering.", "type": "string", "default": "citeCount desc"},
        "max_pdf_pages": {"description": "Opinion PDF pages read.", "type": "integer", "minimum": 1, "default": MAX_PDF_PAGES},
        "max_chars": {"description": "Characters of opinion text kept.", "type": "integer", "minimum": 100, "default": MAX_CHARS},
        "max_retries": {"description": "Retries of one request after 429/5xx.", "type": "integer", "minimum": 0, "default": 5},
        "pdf_page_timeout": {"description": "Seconds one PDF page's text extraction may take before the page is skipped (flag 'timeout').", "type": "number", "exclusiveMinimum": 0, "default": PAGE_TIMEOUT},
        "timeout": {"description": "Seconds per HTTP request.", "type": "number", "exclusiveMinimum": 0, "default": 60},
    },
}


# ---------------------------------------------------------------------------
# text: PDF extraction, disposition, parties
# ---------------------------------------------------------------------------


def extract_pdf_text(
    data: bytes, *, max_pages: int = MAX_PDF_PAGES, max_chars: int = MAX_CHARS, page_timeout: float | None = PAGE_TIMEOUT
) -> str:
    """Text of the first ``max_pages`` pages of a PDF, cut to ``max_chars`` characters.

    :func:`anachron.sources.pdf.read_pdf_pages` (pdfplumber; blank and slow pages give no
    text, words hyphenated at a line end are rejoined) joined by :func:`~anachron.sources.pdf.join_pages`.
    Raises ``ValueError`` when the bytes are not a readable PDF.
    """
    return join_pages(read_pdf_pages(data, max_pages=max_pages, page_timeout=page_timeout), max_chars)


_MIXED = re.compile(
    r"\b(?:affirm(?:ed)?|revers(?:e|ed)|vacat(?:e|ed)|modifi(?:ed)|dismiss(?:ed)?|grant(?:ed)?|den(?:y|ied))\s+in\s+part\b", re.I
)
_LEAD = r"(?:therefore|thus|accordingly|now|hereby|must|will|respectfully|also|otherwise)\s+"


def _phrases(stem: str, past: str) -> list[re.Pattern[str]]:
    return [
        re.compile(rf"\bwe\s+(?:{_LEAD})*{stem}\b", re.I),
        re.compile(rf"\b(?:is|are|be|been|stands?)\s+(?:hereby\s+|therefore\s+|accordingly\s+)?{past}\b", re.I),
        re.compile(rf"\bjudgments?\s+{past}\b", re.I),
        re.compile(rf"\b{past.upper()}\b"),  # the disposition line: "AFFIRMED.", "REVERSED AND REMANDED."
        re.compile(rf"^\s*{past}(?:\s+and\s+remanded)?\s*\.?\s*$", re.I | re.M),
    ]


_PATTERNS = {
    "affirmed": _phrases("affirm", "affirmed"),
    "reversed": _phrases("reverse", "reversed"),
    "vacated": _phrases("vacate", "vacated"),
    # A petition for review of an agency order: denied = the agency (respondent) prevails.
    "denied": [
        re.compile(r"\bpetitions?\s+(?:for\s+review\s+)?(?:is\s+|are\s+)?(?:hereby\s+|therefore\s+)?denied\b", re.I),
        re.compile(rf"\bwe\s+(?:{_LEAD})*deny\s+(?:the|his|her|their|its)\s+(?:\w+\s+)?petitions?\b", re.I),
        re.compile(r"\bPETITIONS?\s+(?:FOR\s+REVIEW\s+)?DENIED\b"),
    ],
    "granted": [
        re.compile(r"\bpetitions?\s+(?:for\s+review\s+)?(?:is\s+|are\s+)?(?:hereby\s+|therefore\s+)?granted\b", re.I),
        re.compile(rf"\bwe\s+(?:{_LEAD})*grant\s+(?:the|his|her|their|its)\s+(?:\w+\s+)?petitions?\b", re.I),
        re.compile(r"\bPETITIONS?\s+(?:FOR\s+REVIEW\s+)?GRANTED\b"),
    ],
    "dismissed": [
        re.compile(r"\b(?:appeal|petition)s?\s+(?:is\s+|are\s+)?(?:hereby\s+)?dismissed\b", re.I),
        re.compile(rf"\bwe\s+(?:{_LEAD})*dismiss\s+the\s+(?:appeal|petition)", re.I),
        re.compile(r"\bDISMISSED\b"),
    ],
}


def classify_disposition(text: Any) -> tuple[str | None, str]:
    """The court's disposition as stated in an opinion (or a cluster's disposition field).

    Returns ``(disposition, note)``: disposition is ``"affirmed"``, ``"reversed"``,
    ``"vacated"``, ``"denied"`` / ``"granted"`` (a petition for review of an agency order),
    ``"mixed"`` (a part disposition, or statements for both sides), ``"dismissed"``, or
    None when no disposition statement is found; ``note`` quotes the
    matched phrase or says why there is none. Disposition statements are phrases such as
    "we affirm", "the judgment is reversed", "VACATED AND REMANDED", or a line that is just
    "Affirmed."; a lower court's ruling described in the facts ("the district court
    reversed the agency") is not one of them.
    """
    if text is None or (isinstance(text, float) and pd.isna(text)):
        return None, "no text"
    s = str(text)
    if not s.strip():
        return None, "no text"
    m = _MIXED.search(s)
    if m:
        return "mixed", f"part disposition: {m.group(0)!r}"
    found: dict[str, str] = {}
    for label, patterns in _PATTERNS.items():
        for p in patterns:
            hit = p.search(s)
            if hit:
                found[label] = hit.group(0).strip()
                break
    winners = {"reversed", "vacated", "granted"} & set(found)
    losers = {"affirmed", "denied"} & set(found)
    if winners and losers:
        return "mixed", "both " + " and ".join(repr(found[k]) for k in sorted(winners | losers))
    for label in ("reversed", "vacated", "granted", "affirmed", "denied"):
        if label in found:
            return label, f"matched {found[label]!r}"
    if "dismissed" in found:
        return "dismissed", f"matched {found['dismissed']!r}"
    return None, "no disposition statement found"


def disposition_outcome(disposition: Any) -> str | None:
    """``"petitioner"`` (appellant) for reversed/vacated/granted, ``"respondent"`` for affirmed/denied, else None."""
    return OUTCOME_BY_DISPOSITION.get(str(disposition)) if disposition is not None else None


_ROLE = re.compile(
    r"(?:(?:plaintiffs?|defendants?|petitioners?|claimants?|respondents?|intervenors?|movants?|debtors?|cross)\s*[-–—]?\s*)?"
    r"\b(appellants?|appellees?)\b",
    re.I,
)


def _clean_party(name: str) -> str | None:
    name = re.sub(r"\bet\s+al\.?", "", name, flags=re.I)
    name = " ".join(name.replace("\u00a0", " ").split()).strip(" ,;:.-–—")
    if not name or len(name) > 150 or not re.search(r"[A-Za-z]", name):
        return None
    if name.lower() in {"v", "v.", "vs", "and", "on appeal", "no"}:
        return None
    return name


def caption_parties(text: Any, max_lines: int = 80) -> tuple[str | None, str | None]:
    """Appellant and appellee names from an opinion's caption, when it marks the roles.

    Looks at the first ``max_lines`` lines for "NAME, Plaintiff-Appellant," / "NAME,
    Defendant - Appellee." (the name on the same line before the role, or on the line
    above). Returns ``(appellant, appellee)``, None for a role not found.
    """
    if not text:
        return None, None
    lines = [ln.strip() for ln in str(text).splitlines()[:max_lines]]
    found: dict[str, str] = {}
    for i, line in enumerate(lines):
        prev_end = 0
        for m in _ROLE.finditer(line):
            role = "appellant" if m.group(1).lower().startswith("appellant") else "appellee"
            segment = re.sub(r"^[\s,;]*(?:v\.|vs\.|v)?\s+", "", line[prev_end : m.start()]).strip(" ,")
            prev_end = m.end()
            if role in found:
                continue
            name = _clean_party(segment) if segment else None
            j = i - 1
            while name is None and j >= 0 and i - j <= 2:
                name = _clean_party(lines[j])
                j -= 1
            if name:
                found[role] = name
    return found.get("appellant"), found.get("appellee")


def split_case_name(case_name: Any) -> tuple[str | None, str | None]:
    """The two sides of a case name split at " v. " (None, None when it does not split)."""
    parts = re.split(r"\s+v(?:s)?\.?\s+", str(case_name or ""), maxsplit=1)
    if len(parts) != 2:
        return None, None
    return _clean_party(parts[0]), _clean_party(parts[1])


def background_excerpt(text: Any, max_chars: int = 1500) -> str:
    """Opening of an opinion with every sentence that states or hints at the outcome removed.

    Sentences mentioning affirm/reverse/vacate/remand/dismiss, "we hold"/"we conclude",
    "for the reasons" or "judgment" are dropped; the rest is kept in order up to
    ``max_chars`` characters. Used to give appellate training prompts some facts without
    handing the model the disposition.
    """
    if not text:
        return ""
    flat = " ".join(str(text).split())
    sentences = re.split(r"(?<=[.!?])\s+(?=[A-Z\"“(])", flat)
    bad = re.compile(
        r"\b(?:affirm\w*|revers\w*|vacat\w*|remand\w*|dismiss\w*|judgment|we\s+(?:hold|conclude|agree|disagree)|"
        r"for\s+the\s+(?:following\s+)?reasons|grant\w*\s+the\s+petition|den(?:y|ied)\s+the\s+petition)\b",
        re.I,
    )
    out, total = [], 0
    for s in sentences:
        if bad.search(s):
            continue
        if total + len(s) + 1 > max_chars:
            break
        out.append(s)
        total += len(s) + 1
    return " ".join(out)


#: Where an opinion's text comes from, in order of preference: CourtListener's
#: ``html_with_citations`` (its cleanest, most complete rendering, tags stripped), ``html``,
#: ``plain_text`` (often an OCR or PDF extraction with page headers), then the opinion PDF.
TEXT_SOURCES = ("html_with_citations", "html", "plain_text", "pdf")


def stored_opinion_text(opinion: Mapping[str, Any], max_chars: int = MAX_CHARS) -> tuple[str, str]:
    """The text an opinion object carries, from the first non-blank field of :data:`TEXT_SOURCES`.

    Args:
        opinion: a ``/opinions/{id}/`` answer (``html_with_citations``, ``html``, ``plain_text``).
        max_chars: characters kept.

    Returns:
        ``(text, field)``: HTML fields as plain text (tags stripped, entities decoded,
        paragraphs on their own lines), cut to ``max_chars``; ``("", "none")`` when every
        field is blank (the caller then reads the PDF, the last source).
    """
    for field in TEXT_SOURCES[:-1]:
        raw = opinion.get(field)
        if not raw or not str(raw).strip():
            continue
        text = str(raw) if field == "plain_text" else _html_text(str(raw))
        if text.strip():
            return text[:max_chars], field
    return "", "none"


#: CourtListener's precedential status values (the choices of its database field).
PRECEDENTIAL_STATUSES = ("Published", "Unpublished", "Errata", "Separate", "In-chambers", "Relating-to", "Unknown")
#: Other spellings met (v4 search shows display names; court listings use their own), lower
#: case with hyphens and underscores as spaces -> the value of :data:`PRECEDENTIAL_STATUSES`.
_STATUS_ALIASES = {
    **{" ".join(v.lower().replace("-", " ").split()): v for v in PRECEDENTIAL_STATUSES},
    "precedential": "Published",
    "non precedential": "Unpublished",
    "nonprecedential": "Unpublished",
    "not precedential": "Unpublished",
    "separate opinion": "Separate",
    "relating to orders": "Relating-to",
    "unknown status": "Unknown",
}


def normalize_precedential_status(value: Any) -> tuple[str | None, bool]:
    """One of :data:`PRECEDENTIAL_STATUSES` for a status as CourtListener or a court writes it.

    "Published" / "published" / "Precedential" -> "Published"; "Unpublished" /
    "Non-Precedential" -> "Unpublished"; "Separate Opinion" -> "Separate"; "In chambers" ->
    "In-chambers"; "Relating-to orders" -> "Relating-to"; "Unknown Status" -> "Unknown".

    Returns:
        ``(status, recognised)``: ``(None, True)`` for a missing or blank value, ``(None,
        False)`` for a value not in the list (the caller logs and counts it).
    """
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return None, True
    key = " ".join(str(value).strip().lower().replace("-", " ").replace("_", " ").split())
    if not key:
        return None, True
    status = _STATUS_ALIASES.get(key)
    return status, status is not None


# ---------------------------------------------------------------------------
# the HTTP client
# ---------------------------------------------------------------------------


class CourtListenerClient:
    """A small CourtListener REST v4 client: token auth, cursor pagination, 429 back-off.

    Parameters
    ----------
    token:
        The API token (sent as ``Authorization: Token <token>`` to ``base_url`` only).
    session:
        ``requests.Session`` (tests inject one replaying recordings); None:
        :func:`~anachron.sources.base.make_session` with ``retries=0`` (no adapter retries:
        back-off is done here, visibly and testably, and its waits are recorded in
        :attr:`stats` and the manifest, which the adapter's ``Retry`` would not do).
    sleep:
        Called with the seconds to wait before a retry (default :func:`time.sleep`).
    max_retries, backoff, max_wait:
        Retries per request after 429/5xx/connection errors; base of the exponential
        back-off (``backoff * 2**attempt`` s, at most ``max_wait``) when the server states no
        wait; the longest wait accepted. A 429 that states a wait, in its ``Retry-After``
        header or in its body ("Expected available in N seconds", Django REST framework
        throttling; :func:`anachron.http.throttle_wait_seconds`, the longer of the two), is
        retried after exactly that wait, never sooner; one asking for more than ``max_wait``
        raises :class:`SourceError` at once (the quota is exhausted) instead of retrying early.

    :attr:`stats` counts ``requests``, ``pages``, ``retries_429``, ``retries_other`` and
    ``waited_s``. Errors are :class:`SourceError` and never contain the token.
    """

    def __init__(
        self,
        token: str,
        *,
        session: requests.Session | None = None,
        base_url: str = API_BASE,
        sleep: Callable[[float], None] = time.sleep,
        max_retries: int = 5,
        backoff: float = 2.0,
        max_wait: float = 900.0,
        timeout: float = 60.0,
    ) -> None:
        if not token:
            raise ValueError("CourtListenerClient needs a token")
        self._token = token
        self.session = session if session is not None else make_session(retries=0)
        self.session.headers.setdefault("User-Agent", DEFAULT_USER_AGENT)
        self.base_url = base_url.rstrip("/")
        self.sleep = sleep
        self.max_retries = int(max_retries)
        self.backoff = float(backoff)
        self.max_wait = float(max_wait)
        self.timeout = float(timeout)
        self.stats = {"requests": 0, "pages": 0, "retries_429": 0, "retries_other": 0, "waited_s": 0.0}

    def __repr__(self) -> str:  # never show the token
        return f"CourtListenerClient(base_url={self.base_url!r})"

    def _headers(self, url: str) -> dict[str, str]:
        return {"Authorization": f"Token {self._token}"} if url.startswith(self.base_url) else {}

    def get(self, url: str, params: dict[str, Any] | None = None, *, what: str) -> requests.Response:
        """GET with retries; returns the 2xx response or raises :class:`SourceError`."""
        attempt = 0
        while True:
            self.stats["requests"] += 1
            try:
                resp = self.session.get(url, params=params, headers=self._headers(url), timeout=self.timeout)
            except requests.RequestException as exc:
                if attempt >= self.max_retries:
                    raise SourceError(f"CourtListener: could not fetch {what} ({type(exc).__name__}: {exc}).") from exc
                wait = min(self.backoff * 2**attempt, self.max_wait)
                self.stats["retries_other"] += 1
            else:
                if resp.status_code < 400:
                    advance_job()
                    return resp
                if resp.status_code in (401, 403):
                    raise SourceError(
                        f"CourtListener refused {what} (HTTP {resp.status_code}): the API token was rejected or lacks "
                        "permission; check the token in the environment variable named by sources.courtlistener.token_env."
                    )
                retryable = resp.status_code == 429 or resp.status_code >= 500
                if not retryable or attempt >= self.max_retries:
                    detail = resp.text[:200].replace("\n", " ") if resp.text else ""
                    raise SourceError(
                        f"CourtListener: {what} failed with HTTP {resp.status_code} after {attempt + 1} attempt(s)"
                        + (f" ({detail})" if detail else "")
                        + ("; the rate limit or daily quota is exhausted, try again later." if resp.status_code == 429 else ".")
                    )
                if resp.status_code == 429:
                    stated = throttle_wait_seconds(resp.headers, resp.text)
                    if stated is not None and stated > self.max_wait:
                        raise SourceError(
                            f"CourtListener: {what} is throttled; the server asks to wait {stated:.0f} s, longer than "
                            f"max_wait ({self.max_wait:.0f} s): the rate limit or daily quota is exhausted, try again later."
                        )
                    self.stats["retries_429"] += 1
                    # never sooner than the server said (Retry-After or "Expected available in N seconds")
                    wait = stated if stated is not None else min(self.backoff * 2**attempt, self.max_wait)
                else:
                    self.stats["retries_other"] += 1
                    wait = min(self.backoff * 2**attempt, self.max_wait)
            wait = float(wait)
            log.info("CourtListener: waiting %.1f s before retrying %s (attempt %d)", wait, what, attempt + 2)
            self.stats["waited_s"] += wait
            self.sleep(wait)
            attempt += 1

    def get_json(self, url: str, params: dict[str, Any] | None = None, *, what: str) -> dict[str, Any]:
        """:meth:`get` and decode a JSON object; :class:`SourceError` when it is not one."""
        resp = self.get(url, params, what=what)
        try:
            data = resp.json()
        except ValueError as exc:
            raise SourceError(f"CourtListener: {what} did not return JSON ({exc}).") from exc
        if not isinstance(data, dict):
            raise SourceError(f"CourtListener: {what} returned {type(data).__name__}, expected a JSON object.")
        return data

    def search_opinions(
        self,
        *,
        courts: Iterable[str] = DEFAULT_COURTS,
        filed_after: str | None = None,
        filed_before: str | None = None,
        order_by: str = "citeCount desc",
        max_results: int | None = None,
        extra_params: dict[str, Any] | None = None,
    ) -> Iterator[dict[str, Any]]:
        """Yield opinion search hits (``/search/?type=o``), following ``next`` cursors.

        Stops after ``max_results`` hits or when a page has no ``next`` URL.
        """
        params: dict[str, Any] = {"type": "o", "court": " ".join(courts), "order_by": order_by}
        if filed_after:
            params["filed_after"] = filed_after
        if filed_before:
            params["filed_before"] = filed_before
        params.update(extra_params or {})
        url: str | None = f"{self.base_url}/search/"
        n = 0
        page_params: dict[str, Any] | None = params
        while url:
            page = self.get_json(url, page_params, what=f"opinion search page {self.stats['pages'] + 1}")
            self.stats["pages"] += 1
            results = page.get("results")
            if not isinstance(results, list):
                raise SourceError("CourtListener: a search page has no 'results' list; the API answer changed shape.")
            for hit in results:
                if max_results is not None and n >= max_results:
                    return
                n += 1
                yield hit
            url = page.get("next") or None
            page_params = None  # the next URL carries the query and cursor
            if max_results is not None and n >= max_results:
                return

    def cluster(self, cluster_id: int) -> dict[str, Any]:
        """``GET /clusters/{id}/``."""
        return self.get_json(f"{self.base_url}/clusters/{int(cluster_id)}/", what=f"cluster {cluster_id}")

    def opinion(self, opinion_id: int) -> dict[str, Any]:
        """``GET /opinions/{id}/``."""
        return self.get_json(f"{self.base_url}/opinions/{int(opinion_id)}/", what=f"opinion {opinion_id}")

    def download(self, url: str, *, what: str) -> bytes:
        """Bytes of a file (an opinion PDF); the token is not sent to other hosts."""
        return self.get(url, what=what).content


def _id_from_url(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, int):
        return value
    m = re.search(r"/(\d+)/?$", str(value))
    return int(m.group(1)) if m else None


def _html_text(html: str) -> str:
    from anachron.sources.html_text import html_to_text

    return html_to_text(html)


# ---------------------------------------------------------------------------
# fetch
# ---------------------------------------------------------------------------


def empty_table() -> pd.DataFrame:
    """An empty table with :data:`COLUMNS`."""
    df = pd.DataFrame({c: pd.Series(dtype="object") for c in COLUMNS})
    for c in ("cluster_id", "opinion_id", "cite_count"):
        df[c] = pd.Series(dtype="Int64")
    return df[COLUMNS]


def _finish(rows: list[dict[str, Any]], skipped: dict[str, int]) -> pd.DataFrame:
    if not rows:
        return empty_table()
    df = pd.DataFrame(rows, columns=COLUMNS)
    for c in ("cluster_id", "opinion_id", "cite_count"):
        df[c] = pd.to_numeric(df[c], errors="coerce").astype("Int64")
    key = df["court"].astype(str) + "|" + df["docket_number"].fillna("").astype(str).str.strip().str.lower()
    no_docket = df["docket_number"].isna() | (df["docket_number"].astype(str).str.strip() == "")
    key = key.where(~no_docket, df["court"].astype(str) + "|name:" + df["case_name"].astype(str).str.lower() + "|" + df["date_filed"].astype(str))
    dup = key.duplicated(keep="first")
    if dup.any():
        skipped["duplicate_court_docket"] = skipped.get("duplicate_court_docket", 0) + int(dup.sum())
    return df.loc[~dup].reset_index(drop=True)


class CourtListenerReader(SourceReader):
    """Federal appellate opinions with a disposition label (live) or listings (snapshot).

    Parameters
    ----------
    session, snapshot_dir:
        As for every reader (:class:`~anachron.sources.base.SourceReader`). Without an
        injected session, :func:`~anachron.sources.base.make_session` with no adapter
        retries: :class:`CourtListenerClient` retries itself, recording its waits.
    token_env:
        Environment variable holding the API token, read when :meth:`read` runs live;
        without a token the table is empty and the manifest says ``"no token configured"``.
    courts:
        Court ids (lower-cased; at least one, else ``ValueError``).
    filed_after, filed_before:
        ISO dates bounding ``date_filed`` (inclusive; None = open).
    max_cases, order_by:
        Live: the first ``max_cases`` search hits in this order.
    max_pdf_pages, max_chars, pdf_page_timeout:
        Live: how much of each opinion PDF is read, and the seconds one page may take
        (:func:`anachron.sources.pdf.read_pdf_pages`; None = no limit). The PDF is read only
        when the opinion carries no text (:data:`TEXT_SOURCES`).
    max_retries, timeout, base_url, sleep:
        Passed to :class:`CourtListenerClient`.

    After :meth:`read`: :attr:`manifest` and :attr:`skipped_by_reason`; the manifest of
    :meth:`fetch` adds ``filtered_out`` (snapshot), ``stats`` and ``dispositions`` (live) or
    ``note`` (no token), and, when there are any, ``unknown_precedential_status`` (raw value
    -> rows; those rows have ``precedential_status`` null) and ``pdf_page_flags`` (flag ->
    pages: blank, timeout, error).
    """

    source = "courtlistener"
    snapshot_layout = SNAPSHOT_PATTERN

    def __init__(
        self,
        *,
        session: Any = None,
        snapshot_dir: str | os.PathLike[str] | None = None,
        token_env: str = TOKEN_ENV,
        courts: Iterable[str] = DEFAULT_COURTS,
        filed_after: str | None = "2017-01-01",
        filed_before: str | None = "2024-12-31",
        max_cases: int = 100,
        order_by: str = "citeCount desc",
        max_pdf_pages: int = MAX_PDF_PAGES,
        max_chars: int = MAX_CHARS,
        max_retries: int = 5,
        timeout: float = 60.0,
        base_url: str = API_BASE,
        sleep: Callable[[float], None] = time.sleep,
        pdf_page_timeout: float | None = PAGE_TIMEOUT,
    ) -> None:
        self.courts = [str(c).strip().lower() for c in courts]
        if not self.courts:
            raise ValueError("courtlistener.fetch needs at least one court")
        super().__init__(session=session, snapshot_dir=snapshot_dir)
        self.token_env = token_env
        self.filed_after = filed_after
        self.filed_before = filed_before
        self.max_cases = max_cases
        self.order_by = order_by
        self.max_pdf_pages = max_pdf_pages
        self.max_chars = max_chars
        self.max_retries = max_retries
        self.timeout = timeout
        self.base_url = base_url
        self.sleep = sleep
        self.pdf_page_timeout = pdf_page_timeout
        self._extra: dict[str, Any] = {}
        self._unknown_status: dict[str, int] = {}
        self._pdf_flags: dict[str, int] = {}

    def _status(self, raw: Any) -> str | None:
        """:func:`normalize_precedential_status`; an unrecognised value is logged (once) and counted."""
        status, recognised = normalize_precedential_status(raw)
        if not recognised:
            value = str(raw).strip()
            if value not in self._unknown_status:
                log.warning("CourtListener: unrecognised precedential status %r (kept as null)", value)
            self._unknown_status[value] = self._unknown_status.get(value, 0) + 1
        return status

    def _live_session(self) -> Any:
        """The injected session, else :func:`make_session` with no adapter retries (the
        client's own back-off is the only retry layer)."""
        return self.session if self.session is not None else make_session(retries=0)

    def _manifest_extra(self, table: pd.DataFrame) -> dict[str, Any]:
        extra = dict(self._extra)
        if self._unknown_status:
            extra["unknown_precedential_status"] = dict(sorted(self._unknown_status.items()))
        if self._pdf_flags:
            extra["pdf_page_flags"] = dict(sorted(self._pdf_flags.items()))
        return extra

    def _read_snapshot(self, snap: Path) -> pd.DataFrame:
        self._unknown_status, self._pdf_flags = {}, {}
        courts, lo, hi = set(self.courts), self.filed_after, self.filed_before
        path = find_snapshot_files(snap, SNAPSHOT_PATTERN)[-1]
        raw = read_csv_checked(path, LISTING_COLUMNS, dtype="str", keep_default_na=False)
        skipped: dict[str, int] = {}
        filtered: dict[str, int] = {}
        rows = []
        for rec in raw.to_dict("records"):
            court = rec["court"].strip().lower()
            date = to_iso(rec["date_filed"])
            name = rec["case_name"].strip()
            if not name:
                skipped["missing_case_name"] = skipped.get("missing_case_name", 0) + 1
                continue
            if date is None:
                skipped["bad_date_filed"] = skipped.get("bad_date_filed", 0) + 1
                continue
            if court not in courts:
                filtered["other_court"] = filtered.get("other_court", 0) + 1
                continue
            if (lo and date < lo) or (hi and date > hi):
                filtered["outside_date_range"] = filtered.get("outside_date_range", 0) + 1
                continue
            appellant, appellee = split_case_name(name)
            rows.append(
                {
                    "court": court,
                    "case_name": name,
                    "date_filed": date,
                    "docket_number": rec["docket_number"].strip() or None,
                    "precedential_status": self._status(rec["precedential_status"]),
                    "download_url": rec["download_url"].strip() or None,
                    "cluster_id": None,
                    "opinion_id": None,
                    "cite_count": None,
                    "text": "",
                    "text_source": "none",
                    "disposition": None,
                    "disposition_source": None,
                    "disposition_note": "listing only: no opinion text or disposition in the snapshot",
                    "outcome": None,
                    "appellant": appellant,
                    "appellee": appellee,
                    "party_source": "case_name_order",
                    "origin": "snapshot",
                }
            )
        df = _finish(rows, skipped)
        self._record_file(
            path,
            len(df),
            courts=sorted(courts),
            filed_after=lo,
            filed_before=hi,
            skipped_by_reason=skipped,
            filtered_out=filtered,
            note="listings without opinion text or disposition (rows have disposition null)",
        )
        self.skipped_by_reason = skipped
        self._extra = {"filtered_out": filtered}
        return df

    def _read_live(self, session: Any) -> pd.DataFrame:
        self._unknown_status, self._pdf_flags = {}, {}
        token = os.environ.get(self.token_env, "").strip()
        if not token:
            log.info(
                "CourtListener: %s; set the environment variable %s to fetch appellate opinions", NO_TOKEN_NOTE, self.token_env
            )
            self.skipped_by_reason = {}
            self._extra = {"note": f"{NO_TOKEN_NOTE} (environment variable {self.token_env} is unset or empty)"}
            return empty_table()
        client = CourtListenerClient(
            token, session=session, base_url=self.base_url, sleep=self.sleep, max_retries=self.max_retries, timeout=self.timeout
        )
        df, skipped, sha = self._read_opinions(client)
        dispositions = {str(k): int(v) for k, v in df["disposition"].fillna("none").value_counts().items()}
        origin = f"{client.base_url}/search/?type=o&court={' '.join(self.courts)}&order_by={self.order_by}"
        self._record(
            origin,
            sha,
            len(df),
            courts=self.courts,
            filed_after=self.filed_after,
            filed_before=self.filed_before,
            max_cases=self.max_cases,
            max_pdf_pages=self.max_pdf_pages,
            max_chars=self.max_chars,
            stats=dict(client.stats),
            dispositions=dispositions,
            skipped_by_reason=skipped,
            sha256_of="table without the text column as CSV, then sorted '<pdf url> <sha256>' lines",
        )
        self.skipped_by_reason = skipped
        self._extra = {"stats": dict(client.stats), "dispositions": dispositions}
        return df

    def _read_opinions(self, client: CourtListenerClient) -> tuple[pd.DataFrame, dict[str, int], str]:
        """Search hits -> cluster, opinion and PDF text -> disposition; returns (table, skipped, sha256)."""
        courts, filed_after, filed_before, max_cases = self.courts, self.filed_after, self.filed_before, self.max_cases
        order_by, max_pdf_pages, max_chars = self.order_by, self.max_pdf_pages, self.max_chars
        rows: list[dict[str, Any]] = []
        skipped: dict[str, int] = {}
        digests: list[str] = []
        for hit in client.search_opinions(
            courts=courts, filed_after=filed_after, filed_before=filed_before, order_by=order_by, max_results=max_cases
        ):
            cluster_id = _id_from_url(hit.get("cluster_id") or hit.get("id"))
            name = str(hit.get("caseName") or hit.get("case_name") or "").strip()
            if cluster_id is None or not name:
                skipped["search_hit_without_cluster_or_name"] = skipped.get("search_hit_without_cluster_or_name", 0) + 1
                continue
            cluster = client.cluster(cluster_id)
            hit_ops = [o for o in (hit.get("opinions") or []) if isinstance(o, dict)]
            op_ids = [_id_from_url(o.get("id")) for o in hit_ops] + [_id_from_url(u) for u in cluster.get("sub_opinions") or []]
            op_ids = [i for i in dict.fromkeys(op_ids) if i is not None]
            opinion: dict[str, Any] = client.opinion(op_ids[0]) if op_ids else {}
            pdf_url = None
            if opinion.get("local_path"):
                pdf_url = f"{STORAGE_BASE}/{str(opinion['local_path']).lstrip('/')}"
            elif opinion.get("download_url") or (hit_ops and hit_ops[0].get("download_url")):
                pdf_url = opinion.get("download_url") or hit_ops[0].get("download_url")
            text, text_source = stored_opinion_text(opinion, max_chars)
            if not text.strip() and pdf_url and str(pdf_url).lower().split("?")[0].endswith(".pdf"):
                try:
                    data = client.download(pdf_url, what=f"opinion PDF of cluster {cluster_id}")
                    digests.append(f"{pdf_url} {sha256_bytes(data)}")
                    pages = read_pdf_pages(data, max_pages=max_pdf_pages, page_timeout=self.pdf_page_timeout)
                    for flag, n in page_flags(pages).items():
                        self._pdf_flags[flag] = self._pdf_flags.get(flag, 0) + n
                    text = join_pages(pages, max_chars)
                    text_source = "pdf" if text.strip() else "none"
                except (SourceError, ValueError) as exc:
                    log.info("CourtListener: PDF of cluster %s unusable (%s)", cluster_id, exc)
                    skipped_key = "pdf_unreadable" if isinstance(exc, ValueError) else "pdf_download_failed"
                    skipped[skipped_key] = skipped.get(skipped_key, 0) + 1
            disposition, note, source = None, "", None
            cl_disp = cluster.get("disposition")
            if cl_disp:
                d, n = classify_disposition(cl_disp)
                if d is not None:
                    disposition, note, source = d, f"cluster disposition {str(cl_disp)[:80]!r}: {n}", "cluster"
            if disposition is None:
                d, n = classify_disposition(text)
                disposition, note, source = d, n, ("text" if d is not None else None)
            appellant, appellee = caption_parties(text)
            party_source = "caption_roles"
            if not appellant or not appellee:
                a2, b2 = split_case_name(name)
                appellant, appellee = appellant or a2, appellee or b2
                party_source = "case_name_order"
            court = str(hit.get("court_id") or cluster.get("court_id") or hit.get("court") or "").strip().lower()
            rows.append(
                {
                    "court": court,
                    "case_name": name,
                    "date_filed": to_iso(hit.get("dateFiled") or cluster.get("date_filed")),
                    "docket_number": (str(hit.get("docketNumber") or "").strip() or None),
                    "precedential_status": self._status(hit.get("status") or cluster.get("precedential_status")),
                    "download_url": pdf_url,
                    "cluster_id": cluster_id,
                    "opinion_id": op_ids[0] if op_ids else None,
                    "cite_count": hit.get("citeCount", cluster.get("citation_count")),
                    "text": text,
                    "text_source": text_source,
                    "disposition": disposition,
                    "disposition_source": source,
                    "disposition_note": note,
                    "outcome": disposition_outcome(disposition),
                    "appellant": appellant,
                    "appellee": appellee,
                    "party_source": party_source,
                    "origin": "live",
                }
            )
        df = _finish(rows, skipped)
        body = df.drop(columns=["text"]).to_csv(index=False).encode("utf-8") + "\n".join(sorted(digests)).encode("utf-8")
        return df, skipped, sha256_bytes(body)


def fetch(
    *, snapshot_dir: str | os.PathLike[str] | None = None, session: Any = None, **params: Any
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Appellate opinions with dispositions (live) or listings (snapshot), and a manifest.

    ``params`` are :class:`CourtListenerReader` keyword arguments (``token_env``,
    ``courts``, ``filed_after``, ``filed_before``, ``max_cases``, ``order_by``,
    ``max_pdf_pages``, ``max_chars``, ``max_retries``, ``timeout``, ``base_url``, ``sleep``).

    Snapshot (``snapshot_dir`` or ``$ANACHRON_SNAPSHOT_DIR``): the listings CSV filtered to
    ``courts`` and ``[filed_after, filed_before]``, disposition null. Live: needs a token
    in ``$<token_env>``; without one returns :func:`empty_table` and a manifest with
    ``"note": "no token configured"`` (no error). See the module docstring for columns.

    Returns ``(table, {"sources": [...], "skipped_by_reason": {...}, ...})``; the live
    manifest adds ``stats`` (requests, pages, 429 retries, seconds waited) and
    ``dispositions`` (counts). Raises :class:`SourceError` on HTTP failures after retries,
    a rejected token, or a snapshot file with a missing column (naming file and column);
    ``ValueError`` for an empty ``courts``; ``TypeError`` for an unknown parameter.
    """
    return CourtListenerReader(session=session, snapshot_dir=snapshot_dir, **params).fetch()
