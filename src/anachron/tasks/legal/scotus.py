"""Supreme Court cases of the legal dataset: Oyez cases joined to SCDB, labelled and deduplicated.

The label is SCDB ``partyWinning`` joined by docket and term (else an additional docket, the same
docket one term apart, or the same normalised case name), else the Oyez ``winning_party`` matched to
the parties; cases without a binary outcome, a date or any text are excluded (docs/tasks.md#legal;
TEMPO paper, App. D).
"""

from __future__ import annotations

import json
from typing import Any

import pandas as pd

from anachron.sources.dockets import normalize_docket
from anachron.sources.oyez.winning_party import match_winning_party
from anachron.tasks.legal.cells import int_or_none as _int
from anachron.tasks.legal.cells import str_or_none as _str
from anachron.tasks.legal.exclusions import (
    REASON_CONFLICT,
    REASON_DISMISSED,
    REASON_DUPLICATE,
    REASON_DUPLICATE_CASE,
    REASON_NO_DATE,
    REASON_NO_OUTCOME,
    REASON_NO_TEXT,
    REASON_OUTSIDE,
    REASON_UNCLEAR,
    REASON_UNMATCHED,
)
from anachron.tasks.legal.parties import case_name_key, case_parties
from anachron.frames import is_missing_scalar


def _sides_consistent(oyez_name: str, pet: str, resp: str, scdb_name: str) -> bool:
    """True when the SCDB case name has the Oyez case's sides in the same order."""
    left, right = (case_parties(scdb_name) + ["", ""])[:2]
    if not left or not right:
        return False
    o_left, o_right = (case_parties(oyez_name) + ["", ""])[:2]
    straight = match_winning_party(left, o_left or pet, o_right or resp, "") == "petitioner" or match_winning_party(
        right, o_left or pet, o_right or resp, ""
    ) == "respondent"
    crossed = match_winning_party(left, o_left or pet, o_right or resp, "") == "respondent" or match_winning_party(
        right, o_left or pet, o_right or resp, ""
    ) == "petitioner"
    return straight and not crossed


def scotus_candidates(oyez: pd.DataFrame, scdb: pd.DataFrame, cfg: dict[str, Any], excl: list[dict[str, Any]]) -> pd.DataFrame:
    """Label every Oyez case of the pool and control terms; return labelled, deduplicated rows.

    ``cfg`` is the resolved ``tasks.legal`` block; every case left out is appended to ``excl``
    (:data:`~anachron.tasks.legal.exclusions.EXCLUSION_COLUMNS`).
    """
    pool_terms = set(range(cfg["first_term"], cfg["last_term"] + 1))
    control_terms = {int(t) for t in cfg["control_terms"]}
    scdb = scdb.copy()
    scdb["_key"] = scdb["docket_key"] if "docket_key" in scdb.columns else scdb["docket"].map(normalize_docket)
    scdb["_term"] = pd.to_numeric(scdb["term"], errors="coerce").astype("Int64")
    by_term_key = {(int(t), k): r for t, k, r in zip(scdb["_term"], scdb["_key"], scdb.to_dict("records")) if pd.notna(t) and k}
    by_key: dict[str, list[dict[str, Any]]] = {}
    by_term_name: dict[tuple[int, str], list[dict[str, Any]]] = {}
    for r in by_term_key.values():
        by_key.setdefault(r["_key"], []).append(r)
        by_term_name.setdefault((int(r["_term"]), case_name_key(r["case_name"])), []).append(r)

    rows = []
    for rec in oyez.to_dict("records"):
        term = _int(rec.get("term"))
        key = _str(rec.get("docket_key")) or normalize_docket(rec.get("docket"))
        name = _str(rec.get("name")) or ""
        base = {"source": "oyez", "term": "" if term is None else str(term), "docket": str(rec.get("docket") or ""), "case_name": name}
        if term is None or key is None:
            excl.append({**base, "reason": REASON_NO_OUTCOME, "detail": "no term or docket"})
            continue
        if term not in pool_terms and term not in control_terms:
            excl.append({**base, "reason": REASON_OUTSIDE, "detail": f"term {term} outside {cfg['first_term']}-{cfg['last_term']} and control_terms"})
            continue
        pet, resp = _str(rec.get("petitioner")) or "", _str(rec.get("respondent")) or ""
        # -- SCDB join: (term, docket); else an additional docket of the same term, or the same
        #    docket one term apart (reargued cases), either only when the SCDB case name has the
        #    Oyez sides in the same order; else the same term and the same normalised case name.
        match, how = by_term_key.get((term, key)), "term_docket"
        if match is None:
            try:
                extra = [normalize_docket(d) for d in json.loads(rec.get("additional_dockets") or "[]")]
            except (TypeError, ValueError):
                extra = []
            for k2 in extra:
                cand = by_term_key.get((term, k2)) if k2 else None
                if cand is not None and _sides_consistent(name, pet, resp, cand["case_name"]):
                    match, how = cand, "additional_docket"
                    break
        if match is None:
            near = [r for r in by_key.get(key, []) if abs(int(r["_term"]) - term) == 1]
            if len(near) == 1 and _sides_consistent(name, pet, resp, near[0]["case_name"]):
                match, how = near[0], "docket_adjacent_term"
        if match is None:  # a docket misspelt on one side: same term and the same normalised name
            same = by_term_name.get((term, case_name_key(name)), [])
            if len(same) == 1:
                match, how = same[0], "term_case_name"
        label = source = None
        reason, detail = None, ""
        pw = _int(match["party_winning"]) if match is not None else None
        if match is not None and pw in (0, 1):
            label, source = pw, "scdb"
        elif match is not None and pw == 2:
            reason, detail = REASON_UNCLEAR, f"SCDB {match.get('case_id') or ''} partyWinning=2 (unclear)".replace("  ", " ")
        if label is None and reason is None:
            outcome = _str(rec.get("oyez_outcome"))
            note = _str(rec.get("oyez_outcome_note")) or ""
            if cfg["oyez_fallback"] and outcome in ("petitioner", "respondent"):
                label, source = (1 if outcome == "petitioner" else 0), "oyez"
            else:
                why = "no SCDB row" if match is None else "SCDB partyWinning not coded"
                if not cfg["oyez_fallback"]:
                    reason, detail = REASON_NO_OUTCOME, f"{why}; oyez_fallback is off"
                elif note == "dismissed":
                    reason, detail = REASON_DISMISSED, f"{why}; Oyez winning_party {rec.get('winning_party')!r}"
                elif note == "unmatched_winner":
                    reason, detail = REASON_UNMATCHED, f"{why}; Oyez winning_party {rec.get('winning_party')!r} matches neither party"
                elif note == "conflicting_decisions":
                    reason, detail = REASON_CONFLICT, f"{why}; Oyez decisions for both sides ({rec.get('winning_party')})"
                else:
                    reason, detail = REASON_NO_OUTCOME, f"{why}; no Oyez decision"
        decision_date = (_str(match.get("decision_date")) if match is not None else None) or _str(rec.get("decided_date"))
        date_source = "scdb" if match is not None and _str(match.get("decision_date")) else ("oyez" if decision_date else None)
        rows.append(
            {
                **base,
                "term_i": term,
                "docket_key": key,
                "petitioner": pet,
                "respondent": resp,
                "facts": _str(rec.get("facts")) or "",
                "question": _str(rec.get("question")) or "",
                "lower_court": _str(rec.get("lower_court")),
                "label": label,
                "label_source": source,
                "party_winning": pw,
                "reason": reason,
                "detail": detail,
                "decision_date": decision_date,
                "decision_date_source": date_source,
                "oyez_decided_date": _str(rec.get("decided_date")),
                "scdb_case_id": _str(match.get("case_id")) if match is not None else None,
                "scdb_case_name": _str(match.get("case_name")) if match is not None else None,
                "scdb_join": how if match is not None else None,
                "href": _str(rec.get("href")),
                "control": term in control_terms and term not in pool_terms,
            }
        )
    cand = pd.DataFrame(rows)
    if cand.empty:
        return cand
    # -- duplicates by docket: keep the labelled row with a date, then the latest term.
    cand["_rank_label"] = cand["label"].notna().astype(int)
    cand["_rank_date"] = cand["decision_date"].notna().astype(int)
    cand = cand.sort_values(["docket_key", "_rank_label", "_rank_date", "term_i"], ascending=[True, False, False, False], kind="mergesort")
    dup = cand.duplicated("docket_key", keep="first")
    for r in cand[dup].to_dict("records"):
        kept = cand[(cand["docket_key"] == r["docket_key"]) & ~dup].iloc[0]
        excl.append({**{k: r[k] for k in ("source", "term", "docket", "case_name")}, "reason": REASON_DUPLICATE,
                     "detail": f"docket {r['docket_key']} also in term {kept['term']} (kept)"})
    cand = cand[~dup]
    # -- two Oyez entries joined to one SCDB case: keep the one joined by its own docket
    join_rank = {"term_docket": 0, "docket_adjacent_term": 1, "additional_docket": 2, "term_case_name": 3}
    cand["_rank_join"] = cand["scdb_join"].map(lambda j: join_rank.get(j, 9) if isinstance(j, str) else 9)
    cand = cand.sort_values(["_rank_join", "docket_key"], kind="mergesort")
    has_case = cand["scdb_case_id"].notna()
    dup2 = has_case & cand.duplicated("scdb_case_id", keep="first")
    for r in cand[dup2].to_dict("records"):
        excl.append({**{k: r[k] for k in ("source", "term", "docket", "case_name")}, "reason": REASON_DUPLICATE_CASE,
                     "detail": f"SCDB case {r['scdb_case_id']} already joined to another Oyez entry"})
    cand = cand[~dup2]
    # -- no binary outcome / no date / no text
    out = []
    for r in cand.to_dict("records"):
        ident = {k: r[k] for k in ("source", "term", "docket", "case_name")}
        if is_missing_scalar(r["label"]):
            excl.append({**ident, "reason": r["reason"] or REASON_NO_OUTCOME, "detail": r["detail"]})
        elif not _str(r["decision_date"]):
            excl.append({**ident, "reason": REASON_NO_DATE, "detail": "neither SCDB dateDecision nor an Oyez Decided event"})
        elif not _str(r["facts"]) and not _str(r["question"]):
            excl.append({**ident, "reason": REASON_NO_TEXT, "detail": "Oyez has neither facts nor question"})
        else:
            r["label"] = int(r["label"])
            out.append(r)
    return pd.DataFrame(out)
