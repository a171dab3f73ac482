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

The pieces: :mod:`~anachron.tasks.legal.config` (the config block), :mod:`~anachron.tasks.legal.scotus`
(Oyez joined to SCDB and labelled), :mod:`~anachron.tasks.legal.appellate` (CourtListener cases),
:mod:`~anachron.tasks.legal.parties` (case names and parties), :mod:`~anachron.tasks.legal.exclusions`
(the exclusion reasons); this module draws the splits and writes the instances.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from typing import Any, Mapping

import numpy as np
import pandas as pd

from anachron.sources.base import check_columns
from anachron.sources.dockets import normalize_docket
from anachron.tasks.base import INSTANCE_COLUMNS
from anachron.tasks.legal.appellate import COURT_NAMES, appellate_candidates
from anachron.tasks.legal.cells import int_or_none as _int
from anachron.tasks.legal.cells import none_if_na as _none
from anachron.tasks.legal.config import resolve_config
from anachron.tasks.legal.exclusions import (
    EXCLUSION_COLUMNS,
    REASON_CONTROL_EARLY,
    REASON_DUPLICATE,
    REASON_NAME_OVERLAP,
    REASON_PARTY_OVERLAP,
    REASON_TRAIN_CAP,
)
from anachron.tasks.legal.parties import case_name_key, party_counts, row_parties
from anachron.tasks.legal.scotus import scotus_candidates

log = logging.getLogger(__name__)

TASK = "legal"
SCOTUS = "Supreme Court of the United States"

#: Source tables the builder reads (``tables`` keys); courtlistener is optional.
REQUIRED_TABLES = ("oyez", "scdb")
OPTIONAL_TABLES = ("courtlistener",)
OYEZ_COLUMNS = ["term", "docket", "name", "petitioner", "respondent", "facts", "question", "decided_date", "oyez_outcome"]
SCDB_COLUMNS = ["term", "docket", "case_name", "decision_date", "party_winning"]
COURTLISTENER_COLUMNS = ["court", "case_name", "date_filed", "docket_number", "disposition", "outcome"]


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


def _day_before(iso: str) -> str:
    return (pd.Timestamp(iso) - pd.Timedelta(days=1)).date().isoformat()


#: Decisions made public before the Court announced them: normalised docket -> (day, what). The
#: cutoff is the day before the disclosure. Politico published the draft majority opinion of
#: Dobbs v. Jackson Women's Health Organization on 2022-05-02 (decided 2022-06-24).
EARLY_DISCLOSURES: dict[str, tuple[str, str]] = {
    "19-1392": ("2022-05-02", "draft majority opinion published by Politico"),
}
#: ``cutoff_rule`` of a decision announced on its day, and of one disclosed before.
RULE_DECISION = "the day before the decision"
RULE_DISCLOSURE = "the day before an early disclosure"


def cutoff_of(docket: Any, decision_date: str, appellate: bool) -> tuple[str, str]:
    """``(cutoff, cutoff_rule)`` of a decision: the day before it, or before an earlier
    disclosure of it (:data:`EARLY_DISCLOSURES`, Supreme Court dockets only)."""
    early = None if appellate else EARLY_DISCLOSURES.get(normalize_docket(docket) or "")
    if early and early[0] < decision_date:
        return _day_before(early[0]), f"{RULE_DISCLOSURE} ({early[0]}: {early[1]})"
    return _day_before(decision_date), RULE_DECISION


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
    cutoff, rule = cutoff_of(r.get("docket"), str(r["decision_date"]), appellate)
    label = {
        "petitioner_wins": int(r["label"]),
        "outcome": "petitioner" if int(r["label"]) == 1 else "respondent",
        "decision_date": r["decision_date"],
        "label_source": r["label_source"],
        "cutoff_rule": rule,
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
        "cutoff_date": cutoff,
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
        task_config: the ``tasks.legal`` block (:data:`~anachron.tasks.legal.config.CONFIG_SCHEMA`; missing keys take
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
        :data:`~anachron.tasks.legal.exclusions.EXCLUSION_COLUMNS` (``reason`` one of the ``REASON_*`` codes
        of :mod:`~anachron.tasks.legal.exclusions`).

    The result depends only on the tables and the config (seeded draws; candidate order is
    sorted). Raises :class:`~anachron.sources.base.SourceError` naming the table and the
    column when a table lacks a column, ``KeyError`` when a required table is missing,
    ``ValueError`` for a bad config.
    """
    cfg = resolve_config(task_config)
    for name in REQUIRED_TABLES:
        if name not in tables:
            raise KeyError(f"legal task needs the {name!r} source table (have: {sorted(tables)})")
    check_columns(tables["oyez"], OYEZ_COLUMNS, "oyez cases table (data/raw/oyez)")
    check_columns(tables["scdb"], SCDB_COLUMNS, "scdb table (data/raw/scdb)")
    cl = tables.get("courtlistener")
    if cl is not None and cfg["include_appellate"]:
        check_columns(cl, COURTLISTENER_COLUMNS, "courtlistener table (data/raw/courtlistener)")

    excl: list[dict[str, Any]] = []
    cand = scotus_candidates(tables["oyez"], tables["scdb"], cfg, excl)
    if cand.empty:
        raise ValueError("legal task: no labelled Supreme Court case in the configured terms; check the oyez and scdb tables")
    cand = cand.sort_values(["term_i", "docket_key"], kind="mergesort").reset_index(drop=True)
    pool = cand[~cand["control"]].reset_index(drop=True)
    control_cand = cand[cand["control"]].reset_index(drop=True)
    appellate = pd.DataFrame()
    if cl is not None and cfg["include_appellate"] and not cl.empty:
        appellate = appellate_candidates(cl, cfg, excl)
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
    counts = party_counts([pool, control_cand, appellate])
    eval_parties: dict[str, str] = {}
    for r in eval_df.to_dict("records"):
        for p in row_parties(r):
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
                shared = sorted(row_parties(r) & set(eval_parties))
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
        cutoff = cutoff_of(r.get("docket"), str(r["decision_date"]), r["source"] != "oyez")[0]
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
