"""Live mode: opinion search hits read into rows (cluster, lead opinion, text, disposition, parties)."""

from __future__ import annotations

import logging
import re
from typing import Any, Callable

import pandas as pd

from anachron.dates import to_iso
from anachron.io import sha256_bytes
from anachron.sources.base import SourceError
from anachron.sources.courtlistener.client import CourtListenerClient
from anachron.sources.courtlistener.disposition import classify_disposition, disposition_outcome
from anachron.sources.courtlistener.layout import STORAGE_BASE
from anachron.sources.courtlistener.opinion_text import stored_opinion_text
from anachron.sources.courtlistener.parties import caption_parties, split_case_name
from anachron.sources.courtlistener.table import finish_table
from anachron.sources.pdf import join_pages, page_flags, read_pdf_pages

log = logging.getLogger(__name__)


def id_from_url(value: Any) -> int | None:
    """The numeric id at the end of an API URL (``.../clusters/123/``), an int as is; else None."""
    if value is None:
        return None
    if isinstance(value, int):
        return value
    m = re.search(r"/(\d+)/?$", str(value))
    return int(m.group(1)) if m else None


def read_opinions(
    client: CourtListenerClient,
    *,
    courts: list[str],
    filed_after: str | None,
    filed_before: str | None,
    max_cases: int,
    order_by: str,
    max_pdf_pages: int,
    max_chars: int,
    pdf_page_timeout: float | None,
    status: Callable[[Any], str | None],
    pdf_flags: dict[str, int],
) -> tuple[pd.DataFrame, dict[str, int], str]:
    """Search hits -> cluster, opinion and PDF text -> disposition; returns (table, skipped, sha256).

    The first ``max_cases`` opinion search hits of ``courts`` filed in ``[filed_after,
    filed_before]`` in ``order_by`` order, each read with its cluster and lead opinion; the
    text is the opinion's stored text
    (:func:`~anachron.sources.courtlistener.opinion_text.stored_opinion_text`), else its PDF
    (the first ``max_pdf_pages`` pages, ``pdf_page_timeout`` seconds a page; flagged pages
    counted into ``pdf_flags``, updated in place), cut to ``max_chars``.
    ``status`` maps a raw precedential status to the stored one. ``sha256`` is that of the
    table without the text column as CSV, then the sorted ``"<pdf url> <sha256>"`` lines.
    An unusable PDF is skipped (``pdf_unreadable``, ``pdf_download_failed``); other
    :class:`~anachron.sources.base.SourceError` propagate.
    """
    rows: list[dict[str, Any]] = []
    skipped: dict[str, int] = {}
    digests: list[str] = []
    for hit in client.search_opinions(
        courts=courts, filed_after=filed_after, filed_before=filed_before, order_by=order_by, max_results=max_cases
    ):
        cluster_id = id_from_url(hit.get("cluster_id") or hit.get("id"))
        name = str(hit.get("caseName") or hit.get("case_name") or "").strip()
        if cluster_id is None or not name:
            skipped["search_hit_without_cluster_or_name"] = skipped.get("search_hit_without_cluster_or_name", 0) + 1
            continue
        cluster = client.cluster(cluster_id)
        hit_ops = [o for o in (hit.get("opinions") or []) if isinstance(o, dict)]
        op_ids = [id_from_url(o.get("id")) for o in hit_ops] + [id_from_url(u) for u in cluster.get("sub_opinions") or []]
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
                pages = read_pdf_pages(data, max_pages=max_pdf_pages, page_timeout=pdf_page_timeout)
                for flag, n in page_flags(pages).items():
                    pdf_flags[flag] = pdf_flags.get(flag, 0) + n
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
                "precedential_status": status(hit.get("status") or cluster.get("precedential_status")),
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
    df = finish_table(rows, skipped)
    body = df.drop(columns=["text"]).to_csv(index=False).encode("utf-8") + "\n".join(sorted(digests)).encode("utf-8")
    return df, skipped, sha256_bytes(body)
