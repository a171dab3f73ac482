"""The legal task's dataset: court cases whose outcome (does the petitioner prevail?) is predicted.

Definition (docs/tasks.md#legal; TEMPO paper, legal task and App. D):

* Supreme Court cases of the October Terms ``first_term``..``last_term`` (2014–2023) from
  Oyez (facts, question, parties). Label: SCDB ``partyWinning`` (1 = the petitioner won,
  0 = it lost), joined to Oyez by docket and term; where SCDB has no row or no code, the
  Oyez ``winning_party`` matched to the parties. A case without a clear binary outcome
  (SCDB ``partyWinning`` 2, a dismissal, a winner matching neither party, decisions for
  both sides, no decision yet) is excluded and counted.
* Cutoff = the day before the decision date (SCDB ``dateDecision``, else the Oyez
  "Decided" event in the Court's time zone).
* Eval: ``eval_size`` (100) cases spread as evenly as possible over decision years (about
  10 per year), outcome-balanced within each year (petitioner and respondent wins differ
  by at most one per year). Train: the rest, minus any case whose normalised name equals
  an eval case's, and minus any case sharing a distinctive party with an eval case (both
  counted). Federal appellate cases from CourtListener with a disposition join train.
* Control (optional): labelled cases of ``control_terms`` decided after every configured
  model's knowledge cutoff.
Instances share the columns of every task (``instance_id, task, split, cutoff_date,
inputs, label, provenance``; the last three JSON strings).
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from typing import Any, Mapping

import numpy as np
import pandas as pd

from anachron.frames import is_missing_scalar, text_or_none
from anachron.sources.base import check_columns
from anachron.sources.courtlistener.opinion_text import background_excerpt
from anachron.sources.dockets import normalize_docket
from anachron.sources.oyez import match_winning_party
from anachron.tasks.base import INSTANCE_COLUMNS

log = logging.getLogger(__name__)

TASK = "legal"
SCOTUS = "Supreme Court of the United States"
EXCLUSION_COLUMNS = ["source", "term", "docket", "case_name", "reason", "detail"]

#: Source tables the builder reads (``tables`` keys); courtlistener is optional.
REQUIRED_TABLES = ("oyez", "scdb")
OPTIONAL_TABLES = ("courtlistener",)
OYEZ_COLUMNS = ["term", "docket", "name", "petitioner", "respondent", "facts", "question", "decided_date", "oyez_outcome"]
SCDB_COLUMNS = ["term", "docket", "case_name", "decision_date", "party_winning"]
COURTLISTENER_COLUMNS = ["court", "case_name", "date_filed", "docket_number", "disposition", "outcome"]

#: Exclusion reasons (the ``reason`` column).
REASON_UNCLEAR = "unclear_outcome"  # SCDB partyWinning = 2
REASON_NO_OUTCOME = "no_outcome"  # no SCDB code and no Oyez decision
REASON_DISMISSED = "dismissed"  # Oyez: the case was dismissed, nobody won
REASON_UNMATCHED = "winner_unmatched"  # Oyez winning_party matches neither party
REASON_CONFLICT = "conflicting_decisions"  # Oyez decisions for both sides
REASON_NO_DATE = "no_decision_date"
REASON_NO_TEXT = "no_facts_or_question"
REASON_DUPLICATE = "duplicate_docket"
REASON_DUPLICATE_CASE = "duplicate_scdb_case"
REASON_OUTSIDE = "outside_terms"
REASON_NAME_OVERLAP = "name_overlap_with_eval"
REASON_PARTY_OVERLAP = "party_overlap_with_eval"
REASON_CONTROL_EARLY = "control_not_after_knowledge_cutoff"
REASON_TRAIN_CAP = "train_sample_cap"
REASON_NO_DISPOSITION = "no_disposition"
REASON_MIXED = "mixed_disposition"
REASON_APPELLATE_DISMISSED = "appellate_dismissed"
REASON_NO_FILED_DATE = "no_filed_date"

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
APPELLATE_QUESTION = (
    "Will the court of appeals rule for the appellant, i.e. reverse or vacate the decision under review "
    "(or grant the petition for review of an agency order)?"
)

#: JSON Schema of the ``tasks.legal`` config block (draft 2020-12).
CONFIG_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "default": {},
    "description": "Legal task (docs/tasks.md#legal): probability that the petitioner prevails; SCOTUS (Oyez + SCDB) and federal appellate cases.",
    "properties": {
        "seed": {"description": "Seed for the eval draw and any train cap.", "type": "integer", "default": 42},
        "first_term": {"description": "First October Term of the SCOTUS pool.", "type": "integer", "minimum": 1946, "default": 2014},
        "last_term": {"description": "Last October Term of the SCOTUS pool.", "type": "integer", "minimum": 1946, "default": 2023},
        "eval_size": {
            "description": "SCOTUS eval cases, spread evenly over decision years (about 10 per year) and outcome-balanced within each year.",
            "type": "integer",
            "minimum": 0,
            "default": 100,
        },
        "train_size": {
            "description": "Most SCOTUS train cases (a seeded sample); null keeps every remaining case.",
            "type": ["integer", "null"],
            "minimum": 0,
            "default": None,
        },
        "facts_max_chars": {
            "description": "Characters of the Oyez facts kept in the prompt (cut at a sentence end); small local models have a 4k context.",
            "type": "integer",
            "minimum": 100,
            "default": 1500,
        },
        "question_max_chars": {
            "description": "Characters of the question presented kept in the prompt.",
            "type": "integer",
            "minimum": 50,
            "default": 600,
        },
        "oyez_fallback": {
            "description": "Label a case by the Oyez winning_party (matched to the parties) when SCDB has no row or no partyWinning code.",
            "type": "boolean",
            "default": True,
        },
        "drop_party_overlap": {
            "description": "Drop train cases that share a distinctive party name with an eval case (as the TEMPO paper removed 3).",
            "type": "boolean",
            "default": True,
        },
        "party_overlap_max_cases": {
            "description": (
                "A party counts as distinctive when it names at most this many cases of the whole pool; "
                "frequent litigants (the United States, states, agencies) identify nothing and are ignored."
            ),
            "type": "integer",
            "minimum": 1,
            "default": 3,
        },
        "include_appellate": {
            "description": "Add federal appellate cases with a disposition (CourtListener, live with a token) to train.",
            "type": "boolean",
            "default": True,
        },
        "appellate_max_train": {
            "description": "Most appellate train cases (seeded sample); null keeps all.",
            "type": ["integer", "null"],
            "minimum": 0,
            "default": None,
        },
        "appellate_facts": {
            "description": (
                "Facts shown for an appellate case: 'redacted_opening' = the opinion's opening with every sentence "
                "about the outcome removed; 'none' = no facts (the opinion text states the disposition)."
            ),
            "type": "string",
            "enum": ["redacted_opening", "none"],
            "default": "redacted_opening",
        },
        "control_terms": {
            "description": (
                "October Terms whose labelled cases decided after every configured model's knowledge cutoff form the "
                "control split (Oyez labels; SCDB 2024_01 ends with Term 2023). Empty = no control split."
            ),
            "type": "array",
            "items": {"type": "integer", "minimum": 1946},
            "default": [2024],
        },
    },
}

_DEFAULTS = {k: v["default"] for k, v in CONFIG_SCHEMA["properties"].items()}

_NAME_DROP = {
    "et", "al", "inc", "llc", "llp", "lp", "ltd", "plc", "corp", "corporation", "co", "company", "the", "na",
}
_GENERIC_PARTIES = {
    "united states", "us", "usa", "district of columbia", "puerto rico", "commissioner", "in re", "doe", "john doe",
    "alabama", "alaska", "arizona", "arkansas", "california", "colorado", "connecticut", "delaware", "florida",
    "georgia", "hawaii", "idaho", "illinois", "indiana", "iowa", "kansas", "kentucky", "louisiana", "maine",
    "maryland", "massachusetts", "michigan", "minnesota", "mississippi", "missouri", "montana", "nebraska", "nevada",
    "new hampshire", "new jersey", "new mexico", "new york", "north carolina", "north dakota", "ohio", "oklahoma",
    "oregon", "pennsylvania", "rhode island", "south carolina", "south dakota", "tennessee", "texas", "utah",
    "vermont", "virginia", "washington", "west virginia", "wisconsin", "wyoming",
}


# ---------------------------------------------------------------------------
# helpers (public where tests and checks use them)
# ---------------------------------------------------------------------------


def case_name_key(name: Any) -> str:
    """Normalised case name for overlap checks.

    Lower case; "&" -> "and"; "U.S." -> "united states"; "United States of America" ->
    "united states"; punctuation dropped; "vs."/"v." -> "v"; "et al.", corporate suffixes
    (Inc., LLC, Corp., Co., Ltd.) and "the" removed; whitespace collapsed.
    "Smith v. Acme Widgets, Inc., et al." and "SMITH v. ACME WIDGETS" give the same key.
    """
    s = str(name or "").lower().replace("&", " and ")
    s = re.sub(r"\bu\.\s?s\.(?=[\s,]|$)", " united states ", s)
    s = s.replace(".", "")
    s = re.sub(r"[^\w\s]", " ", s)
    tokens = [t for t in s.split() if t not in _NAME_DROP]
    s = " ".join("v" if t in {"v", "vs"} else t for t in tokens)
    s = s.replace("united states of america", "united states")
    return s


def case_parties(name: Any) -> list[str]:
    """The two sides of a normalised case name (:func:`case_name_key` split at " v ")."""
    key = case_name_key(name)
    parts = key.split(" v ", 1)
    parts = [re.sub(r"\bex rel\b.*$", "", p).strip() for p in parts]
    return [p for p in parts if p]


_OFFICIAL = re.compile(
    r"\b(?:secretary|attorney\s+general|solicitor\s+general|commissioner|director|warden|governor|president|"
    r"administrator|superintendent|sheriff|chair(?:man|woman|person)?|acting|officer|mayor|judge|comptroller|"
    r"treasurer|chief|official\s+capacity|superintendent)\b",
    re.I,
)


def party_key(full_name: Any) -> str | None:
    """Identifying key of one party's full name, or None when it identifies nothing.

    An official sued in that capacity ("Nancy A. Berryhill, Acting Commissioner of Social
    Security", "Jefferson B. Sessions III, Attorney General") gives None: the same official
    is a party to many unrelated cases. Otherwise the name up to its first comma or
    "et al." (so "Coinbase, Inc." -> "coinbase"), with a leading "State of" /
    "Commonwealth of" dropped, normalised like :func:`case_name_key`; the United States,
    the states and other generic litigants give None.
    """
    s = str(full_name or "").strip()
    if not s or _OFFICIAL.search(s):
        return None
    s = re.split(r",|\bet\.?\s+al\b", s, maxsplit=1, flags=re.I)[0]
    key = case_name_key(s)
    key = re.sub(r"^(?:state|commonwealth|people of the state) of\s+", "", key)
    if not key or len(key) <= 2 or key in _GENERIC_PARTIES:
        return None
    return key


def truncate_text(text: Any, max_chars: int) -> tuple[str, bool]:
    """``(text, truncated)``: ``text`` cut to at most ``max_chars`` characters.

    Cuts at the last sentence end (". ", "? ", "! ") in the second half of the budget,
    else at the last space, and appends " [...]" (within the budget). Whitespace runs
    inside paragraphs are kept as they are.
    """
    s = str(text or "").strip()
    if len(s) <= max_chars:
        return s, False
    marker = " [...]"
    budget = max(1, max_chars - len(marker))
    head = s[:budget]
    cut = max(head.rfind(". "), head.rfind("? "), head.rfind("! "), head.rfind(".\n"))
    if cut >= budget // 2:
        head = head[: cut + 1]
    else:
        space = head.rfind(" ")
        if space > 0:
            head = head[:space]
    return head.rstrip() + marker, True


def allocate_per_year(capacity: Mapping[int, tuple[int, int]], total: int) -> dict[int, int]:
    """Split ``total`` eval cases over years as evenly as balance allows.

    ``capacity`` maps year -> (petitioner wins, respondent wins) available. A year can
    give at most ``2 * min + (1 if the counts differ)`` cases while keeping the two
    outcomes within one of each other. Cases are handed out one at a time to the year
    with the fewest so far (earlier year on ties) that still has room, so quotas differ by
    at most one unless a year runs out. Returns year -> quota (sum <= ``total``; less only
    when capacity runs out).
    """
    room = {y: 2 * min(a, b) + (1 if a != b else 0) for y, (a, b) in capacity.items()}
    quota = {y: 0 for y in capacity}
    for _ in range(max(0, int(total))):
        open_years = [y for y in sorted(quota) if quota[y] < room[y]]
        if not open_years:
            break
        y = min(open_years, key=lambda k: (quota[k], k))
        quota[y] += 1
    return quota


def _seq(seed: int, name: str) -> np.random.SeedSequence:
    digest = hashlib.sha256(name.encode("utf-8")).digest()
    return np.random.SeedSequence([int(seed), int.from_bytes(digest[:8], "little")])


def _str(v: Any) -> str | None:
    return text_or_none(v, is_missing_scalar)


def _int(v: Any) -> int | None:
    if is_missing_scalar(v):
        return None
    try:
        return int(v)
    except (TypeError, ValueError):
        return None


def _none(v: Any) -> Any:
    """NaN / NA / NaT -> None (pandas 3 turns None into NaN in string columns); a list, dict or
    string is kept as it is."""
    return None if not isinstance(v, (list, dict, str)) and is_missing_scalar(v) else v


def _day_before(iso: str) -> str:
    return (pd.Timestamp(iso) - pd.Timedelta(days=1)).date().isoformat()


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


# ---------------------------------------------------------------------------
# building
# ---------------------------------------------------------------------------


def _config(task_config: Mapping[str, Any] | None) -> dict[str, Any]:
    cfg = dict(_DEFAULTS)
    unknown = sorted(set(task_config or {}) - set(cfg))
    if unknown:
        raise ValueError(f"tasks.legal: unknown key(s) {unknown}; known: {sorted(cfg)}")
    cfg.update(task_config or {})
    if cfg["last_term"] < cfg["first_term"]:
        raise ValueError(f"tasks.legal: last_term {cfg['last_term']} is before first_term {cfg['first_term']}")
    return cfg


def _scotus_candidates(oyez: pd.DataFrame, scdb: pd.DataFrame, cfg: dict[str, Any], excl: list[dict[str, Any]]) -> pd.DataFrame:
    """Label every Oyez case of the pool and control terms; return labelled, deduplicated rows."""
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


def _appellate_candidates(cl: pd.DataFrame, cfg: dict[str, Any], excl: list[dict[str, Any]]) -> pd.DataFrame:
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


def _row_parties(r: Mapping[str, Any]) -> set[str]:
    return {k for k in (party_key(r.get("petitioner")), party_key(r.get("respondent"))) if k}


def _party_counts(frames: list[pd.DataFrame]) -> dict[str, int]:
    """How many cases of the frames name each party key."""
    counts: dict[str, int] = {}
    for df in frames:
        if df is None or df.empty:
            continue
        for r in df.to_dict("records"):
            for p in _row_parties(r):
                counts[p] = counts.get(p, 0) + 1
    return counts


def _instance(row: Mapping[str, Any], split: str, cfg: dict[str, Any]) -> dict[str, Any]:
    r = {k: _none(v) for k, v in dict(row).items()}
    appellate = r["source"] != "oyez"
    facts, facts_cut = truncate_text(r.get("facts") or "", cfg["facts_max_chars"])
    question, question_cut = truncate_text(r.get("question") or "", cfg["question_max_chars"])
    court = COURT_NAMES.get(r.get("court", ""), r.get("court", "")) if appellate else SCOTUS
    inputs = {
        "kind": "appellate" if appellate else "scotus",
        "court": court,
        "case_name": r["case_name"],
        "term": int(r["term_i"]),
        "docket": r["docket"],
        "petitioner": r["petitioner"],
        "respondent": r["respondent"],
        "lower_court": None if appellate else r.get("lower_court"),
        "facts": facts,
        "question": question,
    }
    label = {
        "petitioner_wins": int(r["label"]),
        "outcome": "petitioner" if int(r["label"]) == 1 else "respondent",
        "decision_date": r["decision_date"],
        "label_source": r["label_source"],
    }
    if appellate:
        label["disposition"] = r.get("disposition")
        provenance = {
            "source": "courtlistener",
            "court": r.get("court"),
            "cluster_id": r.get("cluster_id"),
            "disposition_source": r.get("disposition_source"),
            "party_source": r.get("party_source"),
            "facts": cfg["appellate_facts"],
            "facts_truncated": facts_cut,
            "seed": int(cfg["seed"]),
        }
        iid = f"{TASK}-{split}-{r['court']}-{r['docket_key']}"
    else:
        label["party_winning"] = _int(r.get("party_winning"))
        provenance = {
            "source": "oyez+scdb" if r.get("scdb_case_id") else "oyez",
            "oyez_href": r.get("href"),
            "scdb_case_id": r.get("scdb_case_id"),
            "scdb_join": r.get("scdb_join"),
            "decision_date_source": r.get("decision_date_source"),
            "oyez_decided_date": r.get("oyez_decided_date"),
            "decision_year": int(str(r["decision_date"])[:4]),
            "facts_truncated": facts_cut,
            "question_truncated": question_cut,
            "seed": int(cfg["seed"]),
        }
        iid = f"{TASK}-{split}-scotus-{r['term_i']}-{r['docket_key']}"
    return {
        "instance_id": re.sub(r"[^A-Za-z0-9._-]+", "_", iid),
        "task": TASK,
        "split": split,
        "cutoff_date": _day_before(r["decision_date"]),
        "inputs": json.dumps(inputs, ensure_ascii=False),
        "label": json.dumps(label, ensure_ascii=False),
        "provenance": json.dumps(provenance, ensure_ascii=False, sort_keys=True),
    }


def build_legal_instances(
    tables: Mapping[str, pd.DataFrame],
    task_config: Mapping[str, Any] | None,
    *,
    knowledge_cutoffs: Mapping[str, str] | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Build the legal task's instances; return ``(instances, exclusions)``.

    Args:
        tables: ``"oyez"`` (the ``cases`` table of :mod:`anachron.sources.oyez`), ``"scdb"``
            (:mod:`anachron.sources.scdb`) and optionally ``"courtlistener"``
            (:mod:`anachron.sources.courtlistener`; rows without a winner are excluded).
        task_config: the ``tasks.legal`` block (:data:`CONFIG_SCHEMA`; missing keys take
            their defaults).
        knowledge_cutoffs: model name -> ISO knowledge cutoff; control instances are
            decided after the latest of them (cutoff date later than every one).

    Returns:
        ``instances`` with :data:`~anachron.tasks.base.INSTANCE_COLUMNS` (ids
        ``legal-<split>-scotus-<term>-<docket>`` / ``legal-train-<court>-<docket>``;
        ``inputs`` JSON: kind, court, case_name, term, docket, petitioner, respondent,
        lower_court, facts, question; ``label`` JSON: petitioner_wins (0/1), outcome,
        decision_date, label_source, party_winning / disposition; ``provenance`` JSON:
        join and date sources, truncation flags, seed) and ``exclusions`` with
        :data:`EXCLUSION_COLUMNS` (``reason`` one of the ``REASON_*`` codes).

    The result depends only on the tables and the config (seeded draws; candidate order is
    sorted). Raises :class:`~anachron.sources.base.SourceError` naming the table and the
    column when a table lacks a column, ``KeyError`` when a required table is missing,
    ``ValueError`` for a bad config.
    """
    cfg = _config(task_config)
    for name in REQUIRED_TABLES:
        if name not in tables:
            raise KeyError(f"legal task needs the {name!r} source table (have: {sorted(tables)})")
    check_columns(tables["oyez"], OYEZ_COLUMNS, "oyez cases table (data/raw/oyez)")
    check_columns(tables["scdb"], SCDB_COLUMNS, "scdb table (data/raw/scdb)")
    cl = tables.get("courtlistener")
    if cl is not None and cfg["include_appellate"]:
        check_columns(cl, COURTLISTENER_COLUMNS, "courtlistener table (data/raw/courtlistener)")

    excl: list[dict[str, Any]] = []
    cand = _scotus_candidates(tables["oyez"], tables["scdb"], cfg, excl)
    if cand.empty:
        raise ValueError("legal task: no labelled Supreme Court case in the configured terms; check the oyez and scdb tables")
    cand = cand.sort_values(["term_i", "docket_key"], kind="mergesort").reset_index(drop=True)
    pool = cand[~cand["control"]].reset_index(drop=True)
    control_cand = cand[cand["control"]].reset_index(drop=True)
    appellate = pd.DataFrame()
    if cl is not None and cfg["include_appellate"] and not cl.empty:
        appellate = _appellate_candidates(cl, cfg, excl)
        if not appellate.empty:
            appellate = appellate.sort_values(["court", "docket_key"], kind="mergesort").reset_index(drop=True)
            dup = appellate.duplicated(["court", "docket_key"], keep="first")
            for r in appellate[dup].to_dict("records"):
                excl.append({**{k: r[k] for k in ("source", "term", "docket", "case_name")}, "reason": REASON_DUPLICATE,
                             "detail": f"docket {r['docket_key']} repeated in {r['court']}"})
            appellate = appellate[~dup].reset_index(drop=True)

    # -- eval: even over decision years, balanced within each year
    pool["year"] = pool["decision_date"].str[:4].astype(int)
    capacity = {int(y): (int((g["label"] == 1).sum()), int((g["label"] == 0).sum())) for y, g in pool.groupby("year")}
    quotas = allocate_per_year(capacity, cfg["eval_size"])
    if sum(quotas.values()) < cfg["eval_size"]:
        log.warning("legal: only %d balanced eval cases available (eval_size %d)", sum(quotas.values()), cfg["eval_size"])
    eval_idx: list[int] = []
    for year in sorted(quotas):
        q = quotas[year]
        if q == 0:
            continue
        rng = np.random.default_rng(_seq(cfg["seed"], f"legal-eval-{year}"))
        g = pool[pool["year"] == year]
        wins, losses = g.index[g["label"] == 1].tolist(), g.index[g["label"] == 0].tolist()
        n_w = n_l = q // 2
        if q % 2:
            larger = [c for c, n in (("w", len(wins)), ("l", len(losses))) if n > q // 2]
            pick = larger[int(rng.integers(len(larger)))] if len(larger) > 1 else larger[0]
            n_w, n_l = (n_w + 1, n_l) if pick == "w" else (n_w, n_l + 1)
        eval_idx += [wins[int(i)] for i in rng.choice(len(wins), size=n_w, replace=False)]
        eval_idx += [losses[int(i)] for i in rng.choice(len(losses), size=n_l, replace=False)]
    eval_set = set(eval_idx)
    eval_df = pool.loc[sorted(eval_set)]
    rest = pool.drop(index=list(eval_set))

    # -- train: no case-name overlap, no distinctive shared party
    eval_names = set(eval_df["case_name"].map(case_name_key))
    counts = _party_counts([pool, control_cand, appellate])
    eval_parties: dict[str, str] = {}
    for r in eval_df.to_dict("records"):
        for p in _row_parties(r):
            if counts.get(p, 0) <= cfg["party_overlap_max_cases"]:
                eval_parties.setdefault(p, r["case_name"])

    def keep_for_train(df: pd.DataFrame) -> pd.DataFrame:
        keep = []
        for idx, r in df.iterrows():
            ident = {k: r[k] for k in ("source", "term", "docket", "case_name")}
            key = case_name_key(r["case_name"])
            if key in eval_names:
                excl.append({**ident, "reason": REASON_NAME_OVERLAP, "detail": f"same normalised name as an eval case: {key!r}"})
                continue
            if cfg["drop_party_overlap"]:
                shared = sorted(_row_parties(r) & set(eval_parties))
                if shared:
                    excl.append({**ident, "reason": REASON_PARTY_OVERLAP,
                                 "detail": f"party {shared[0]!r} also in eval case {eval_parties[shared[0]]!r}"})
                    continue
            keep.append(idx)
        return df.loc[keep]

    train = keep_for_train(rest)
    if cfg["train_size"] is not None and len(train) > cfg["train_size"]:
        rng = np.random.default_rng(_seq(cfg["seed"], "legal-train"))
        chosen = set(train.index[sorted(rng.choice(len(train), size=cfg["train_size"], replace=False))])
        for idx, r in train.iterrows():
            if idx not in chosen:
                excl.append({**{k: r[k] for k in ("source", "term", "docket", "case_name")}, "reason": REASON_TRAIN_CAP,
                             "detail": f"train_size {cfg['train_size']}"})
        train = train.loc[sorted(chosen)]
    app_train = keep_for_train(appellate) if not appellate.empty else appellate
    if not app_train.empty and cfg["appellate_max_train"] is not None and len(app_train) > cfg["appellate_max_train"]:
        rng = np.random.default_rng(_seq(cfg["seed"], "legal-appellate"))
        chosen = set(app_train.index[sorted(rng.choice(len(app_train), size=cfg["appellate_max_train"], replace=False))])
        for idx, r in app_train.iterrows():
            if idx not in chosen:
                excl.append({**{k: r[k] for k in ("source", "term", "docket", "case_name")}, "reason": REASON_TRAIN_CAP,
                             "detail": f"appellate_max_train {cfg['appellate_max_train']}"})
        app_train = app_train.loc[sorted(chosen)]

    # -- control: decided after every configured model's knowledge cutoff
    latest_kc = max((str(v) for v in (knowledge_cutoffs or {}).values()), default=None)
    control_rows = []
    for _, r in control_cand.iterrows():
        cutoff = _day_before(r["decision_date"])
        if latest_kc is not None and cutoff <= latest_kc:
            excl.append({**{k: r[k] for k in ("source", "term", "docket", "case_name")}, "reason": REASON_CONTROL_EARLY,
                         "detail": f"cutoff {cutoff} not after the latest knowledge cutoff {latest_kc}"})
            continue
        control_rows.append(r)

    records = [_instance(r, "eval", cfg) for _, r in eval_df.iterrows()]
    records += [_instance(r, "train", cfg) for _, r in train.iterrows()]
    records += [_instance(r, "train", cfg) for _, r in app_train.iterrows()]
    records += [_instance(r, "control", cfg) for r in control_rows]
    instances = pd.DataFrame(records, columns=INSTANCE_COLUMNS)
    for c in INSTANCE_COLUMNS:
        instances[c] = instances[c].astype("str")
    dup_ids = instances["instance_id"][instances["instance_id"].duplicated()].tolist()
    if dup_ids:
        raise ValueError(f"legal task: duplicate instance ids {dup_ids[:3]}")
    exclusions = pd.DataFrame(excl, columns=EXCLUSION_COLUMNS).fillna("").astype("str")
    log.info(
        "legal: %d eval, %d train (%d appellate), %d control; %d excluded",
        len(eval_df), len(train) + len(app_train), len(app_train), len(control_rows), len(exclusions),
    )
    return instances, exclusions
