"""Federal appellate cases of the legal dataset (CourtListener, train only; docs/tasks.md#legal).

A case whose disposition has a winner (the ``outcome`` of :mod:`anachron.sources.courtlistener`)
becomes a candidate; its facts are the opinion's opening without the sentences about the outcome,
or none (``appellate_facts``).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from anachron.sources.courtlistener.opinion_text import background_excerpt
from anachron.sources.dockets import normalize_docket
from anachron.tasks.legal.cells import str_or_none as _str
from anachron.tasks.legal.exclusions import (
    REASON_APPELLATE_DISMISSED,
    REASON_MIXED,
    REASON_NO_DISPOSITION,
    REASON_NO_FILED_DATE,
)

#: Court names of the CourtListener court ids (the ``court`` of an appellate instance).
COURT_NAMES = {
    "ca1": "U.S. Court of Appeals for the First Circuit",
    "ca2": "U.S. Court of Appeals for the Second Circuit",
    "ca3": "U.S. Court of Appeals for the Third Circuit",
    "ca4": "U.S. Court of Appeals for the Fourth Circuit",
    "ca5": "U.S. Court of Appeals for the Fifth Circuit",
    "ca6": "U.S. Court of Appeals for the Sixth Circuit",
    "ca7": "U.S. Court of Appeals for the Seventh Circuit",
    "ca8": "U.S. Court of Appeals for the Eighth Circuit",
    "ca9": "U.S. Court of Appeals for the Ninth Circuit",
    "ca10": "U.S. Court of Appeals for the Tenth Circuit",
    "ca11": "U.S. Court of Appeals for the Eleventh Circuit",
    "cadc": "U.S. Court of Appeals for the D.C. Circuit",
    "cafc": "U.S. Court of Appeals for the Federal Circuit",
}
#: The question of every appellate case.
APPELLATE_QUESTION = (
    "Will the court of appeals rule for the appellant, i.e. reverse or vacate the decision under review "
    "(or grant the petition for review of an agency order)?"
)


def appellate_candidates(cl: pd.DataFrame, cfg: dict[str, Any], excl: list[dict[str, Any]]) -> pd.DataFrame:
    """The appellate candidates of the CourtListener table ``cl``, one row per case with a winner.

    ``cfg`` is the resolved ``tasks.legal`` block; every case left out is appended to ``excl``
    (:data:`~anachron.tasks.legal.exclusions.EXCLUSION_COLUMNS`).
    """
    rows = []
    for rec in cl.to_dict("records"):
        court = (_str(rec.get("court")) or "").lower()
        name = _str(rec.get("case_name")) or ""
        docket = _str(rec.get("docket_number")) or ""
        filed = _str(rec.get("date_filed"))
        ident = {"source": f"courtlistener:{court}", "term": (filed or "")[:4], "docket": docket, "case_name": name}
        disposition = _str(rec.get("disposition"))
        outcome = _str(rec.get("outcome"))
        if disposition is None:
            excl.append({**ident, "reason": REASON_NO_DISPOSITION, "detail": _str(rec.get("disposition_note")) or "no disposition"})
            continue
        if disposition == "mixed":
            excl.append({**ident, "reason": REASON_MIXED, "detail": _str(rec.get("disposition_note")) or "mixed"})
            continue
        if outcome not in ("petitioner", "respondent"):
            reason = REASON_APPELLATE_DISMISSED if disposition == "dismissed" else REASON_NO_DISPOSITION
            excl.append({**ident, "reason": reason, "detail": f"disposition {disposition!r} has no winner"})
            continue
        if not filed:
            excl.append({**ident, "reason": REASON_NO_FILED_DATE, "detail": "no date_filed"})
            continue
        facts = ""
        if cfg["appellate_facts"] == "redacted_opening":
            facts = background_excerpt(_str(rec.get("text")) or "", cfg["facts_max_chars"])
        rows.append(
            {
                **ident,
                "court": court,
                "term_i": int(filed[:4]),
                "docket_key": (normalize_docket(docket) or f"cluster-{_str(rec.get('cluster_id')) or len(rows)}"),
                "petitioner": _str(rec.get("appellant")) or "the appellant",
                "respondent": _str(rec.get("appellee")) or "the appellee",
                "facts": facts,
                "question": APPELLATE_QUESTION,
                "label": 1 if outcome == "petitioner" else 0,
                "label_source": "courtlistener",
                "disposition": disposition,
                "disposition_source": _str(rec.get("disposition_source")),
                "decision_date": filed,
                "cluster_id": _str(rec.get("cluster_id")),
                "party_source": _str(rec.get("party_source")),
            }
        )
    return pd.DataFrame(rows)
