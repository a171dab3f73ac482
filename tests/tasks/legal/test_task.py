"""The legal task: labels, exclusions, balanced eval per decision year, no overlap, prompts, Perf.

Synthetic Oyez/SCDB/CourtListener tables with invented case names; one test runs the
source readers on the invented snapshot fixtures and builds from their output.
"""

from __future__ import annotations

import json
from collections import Counter

import jsonschema
import numpy as np
import pandas as pd
import pytest

from anachron.llm.structured import parse_output
from anachron.tables import ParseStatus
from anachron.sources import courtlistener, oyez, scdb
from anachron.sources.base import SNAPSHOT_ENV, SourceError
from anachron.tasks.base import INSTANCE_COLUMNS
from anachron.tasks.legal import CONFIG_SCHEMA, LegalTask, build_legal_instances, legal_perf
from anachron.tasks.legal.checks import legal_overlap_problems
from anachron.tasks.legal.dataset import allocate_per_year, truncate_text
from anachron.tasks.legal.exclusions import EXCLUSION_COLUMNS
from anachron.tasks.legal.parties import case_name_key, party_key

from conftest import TESTS

SNAPSHOTS = TESTS / "fixtures" / "snapshots"
KC = {"tiny": "2024-06-30"}
MONTHS = [11, 12, 1, 2, 3, 4, 5, 6]


def _case(term: int, i: int, *, name: str | None = None, pet: str | None = None, resp: str | None = None, label: int | None = None,
          decided: str | None = None, facts: str | None = None):
    docket = f"{(term - 2001) % 100:02d}-{100 + i}"
    pet = pet or f"Alder{term}x{i:02d}"
    resp = resp or f"Birch{term}x{i:02d} Holdings, Inc."
    name = name or f"{pet} v. {resp}"
    month = MONTHS[i % len(MONTHS)]
    year = term if month >= 10 else term + 1
    decided = decided or f"{year}-{month:02d}-{10 + i % 15:02d}"
    label = (0 if i % 3 == 0 else 1) if label is None else label
    o = {
        "term": term, "docket": docket, "docket_key": docket, "name": name, "petitioner": pet, "respondent": resp,
        "facts": facts if facts is not None else f"{pet} sued {resp} over a lease signed in {term - 3}.",
        "question": "Does the lease bind a successor?", "decided_date": decided,
        "oyez_outcome": None, "oyez_outcome_note": "no_decision", "winning_party": None,
        "lower_court": "United States Court of Appeals for the Ninth Circuit", "additional_dockets": "[]",
        "href": f"https://api.oyez.org/cases/{term}/{docket}",
    }
    s = {"term": term, "docket": docket, "docket_key": docket, "case_id": f"{term}-{i:03d}", "case_name": name.upper(),
         "decision_date": decided, "argument_date": None, "party_winning": label, "decision_type": 1, "us_cite": None}
    return o, s


def synthetic_tables(per_term: int = 24) -> dict[str, pd.DataFrame]:
    """Terms 2014-2023 (per_term cases each, ~1/3 respondent wins) plus special cases."""
    o_rows, s_rows = [], []
    for term in range(2014, 2024):
        for i in range(per_term):
            o, s = _case(term, i)
            o_rows.append(o)
            s_rows.append(s)
    # more cases decided in December 2014, so that decision year 2014 can fill its share
    for i in range(24, 34):
        o, s = _case(2014, i, decided=f"2014-12-{i - 10:02d}", label=i % 2)
        o_rows.append(o)
        s_rows.append(s)
    # the same case name in two terms (e.g. a case that came back): 6 pairs
    for k in range(6):
        for term, i in ((2015 + k, 60 + k), (2017 + k, 70 + k)):
            o, s = _case(term, i, name=f"Repeat{k} v. Again{k}", pet=f"Repeat{k}", resp=f"Again{k}")
            o_rows.append(o)
            s_rows.append(s)
    # a distinctive party in two otherwise different cases: 6 pairs
    for k in range(6):
        for term, i, resp in ((2016 + k, 80 + k, f"Ward{k}"), (2018, 90 + k, f"Keeper{k}")):
            o, s = _case(term, i, pet=f"Solo Zed{k}", resp=resp)
            o_rows.append(o)
            s_rows.append(s)
    # SCDB says unclear (2) although Oyez names a winner: excluded, no fallback
    o, s = _case(2016, 40, label=2)
    o.update(oyez_outcome="petitioner", oyez_outcome_note="matched", winning_party="Alder2016x40")
    o_rows.append(o)
    s_rows.append(s)
    # not in SCDB: labelled from Oyez
    o, _ = _case(2017, 41)
    o.update(oyez_outcome="respondent", oyez_outcome_note="matched", winning_party="Birch2017x41")
    o_rows.append(o)
    # not in SCDB and dismissed on Oyez
    o, _ = _case(2017, 42)
    o.update(oyez_outcome_note="dismissed", winning_party="dismissal")
    o_rows.append(o)
    # reargued: the same docket in term 2019 (no decision) and 2020 (decided, in SCDB)
    o, _ = _case(2019, 43)
    o.update(decided_date=None)
    o_rows.append(o)
    o2, s2 = _case(2020, 43)
    o2.update(docket=o["docket"], docket_key=o["docket_key"])
    s2.update(docket=o["docket"], docket_key=o["docket_key"])
    o_rows.append(o2)
    s_rows.append(s2)
    # long facts
    o, s = _case(2018, 44, facts="The lease was signed. " * 300)
    o_rows.append(o)
    s_rows.append(s)
    # control term 2024: Oyez labels only; one decided before the model's knowledge cutoff
    for i, (decided, outcome) in enumerate([("2025-03-04", "petitioner"), ("2025-06-27", "respondent"), ("2024-06-20", "petitioner")]):
        o, _ = _case(2024, 50 + i, decided=decided)
        o.update(oyez_outcome=outcome, oyez_outcome_note="matched")
        o_rows.append(o)
    appellate = pd.DataFrame(
        [
            {"court": "ca9", "case_name": "Maple Rowe v. Quince Logistics", "date_filed": "2021-05-03", "docket_number": "20-55001",
             "disposition": "reversed", "outcome": "petitioner", "disposition_note": "matched 'we reverse'", "disposition_source": "text",
             "text": "Rowe drove for Quince. The district court found for Quince. We reverse.", "appellant": "Maple Rowe",
             "appellee": "Quince Logistics", "party_source": "caption_roles", "cluster_id": 501},
            {"court": "ca2", "case_name": "Sorrel v. Tamarind Bank", "date_filed": "2019-02-11", "docket_number": "18-1234",
             "disposition": "affirmed", "outcome": "respondent", "disposition_note": "cluster", "disposition_source": "cluster",
             "text": "", "appellant": "Sorrel", "appellee": "Tamarind Bank", "party_source": "case_name_order", "cluster_id": 502},
            {"court": "cafc", "case_name": "Umber Tools v. Vetch Corp.", "date_filed": "2022-08-30", "docket_number": "22-1001",
             "disposition": "mixed", "outcome": None, "disposition_note": "part disposition", "disposition_source": "text",
             "text": "", "appellant": "Umber Tools", "appellee": "Vetch Corp.", "party_source": "case_name_order", "cluster_id": 503},
            {"court": "ca1", "case_name": "Wattle v. Xylem", "date_filed": "2020-01-02", "docket_number": "19-1111",
             "disposition": None, "outcome": None, "disposition_note": "listing only", "disposition_source": None,
             "text": "", "appellant": "Wattle", "appellee": "Xylem", "party_source": "case_name_order", "cluster_id": None},
        ]
    )
    return {"oyez": pd.DataFrame(o_rows), "scdb": pd.DataFrame(s_rows), "courtlistener": appellate}


@pytest.fixture(scope="module")
def tables() -> dict[str, pd.DataFrame]:
    return synthetic_tables()


@pytest.fixture(scope="module")
def built(tables):
    return build_legal_instances(tables, {"seed": 7}, knowledge_cutoffs=KC)


def _decoded(instances: pd.DataFrame) -> pd.DataFrame:
    out = instances.copy()
    for c in ("inputs", "label", "provenance"):
        out[c] = out[c].map(json.loads)
    return out


# -- shape, splits and labels --------------------------------------------------------------------


def test_shape_and_columns(built):
    inst, excl = built
    assert list(inst.columns) == INSTANCE_COLUMNS
    assert list(excl.columns) == EXCLUSION_COLUMNS
    assert inst["instance_id"].is_unique and (inst["task"] == "legal").all()
    assert set(inst["split"]) == {"train", "eval", "control"}
    assert (inst["split"] == "eval").sum() == 100
    for c in INSTANCE_COLUMNS:
        assert all(isinstance(v, str) for v in inst[c])


def test_cutoff_is_the_day_before_the_decision(built):
    inst = _decoded(built[0])
    for _, r in inst.iterrows():
        assert r["cutoff_date"] == (pd.Timestamp(r["label"]["decision_date"]) - pd.Timedelta(days=1)).date().isoformat()


def test_eval_is_balanced_within_each_decision_year_and_spread_evenly(built):
    inst = _decoded(built[0])
    ev = inst[inst["split"] == "eval"]
    years = ev["label"].map(lambda l: l["decision_date"][:4])
    wins = ev["label"].map(lambda l: l["petitioner_wins"])
    per_year = Counter(years)
    assert len(per_year) == 11  # decision years 2014..2024
    assert max(per_year.values()) - min(per_year.values()) <= 1  # about 10 per year
    for y in per_year:
        w = int(wins[years == y].sum())
        n = per_year[y]
        assert abs(w - (n - w)) <= 1, (y, w, n)


def test_labels_scdb_first_then_oyez(built):
    inst, excl = built
    dec = _decoded(inst)
    src = Counter(dec["label"].map(lambda l: l["label_source"]))
    assert src["scdb"] > 200 and src["courtlistener"] == 2
    oyez_only = dec[dec["provenance"].map(lambda p: p.get("source") == "oyez") & (dec["split"] != "control")]
    assert len(oyez_only) == 1
    assert oyez_only.iloc[0]["label"] == {**oyez_only.iloc[0]["label"], "outcome": "respondent", "petitioner_wins": 0, "label_source": "oyez"}


def test_scdb_unclear_outcome_is_excluded_without_oyez_fallback(built):
    inst, excl = built
    unclear = excl[excl["reason"] == "unclear_outcome"]
    assert len(unclear) == 1 and unclear.iloc[0]["docket"] == "15-140"
    assert "partyWinning=2" in unclear.iloc[0]["detail"]
    assert not inst["inputs"].map(lambda s: json.loads(s)["docket"] == "15-140").any()


def test_no_binary_outcome_reasons_are_counted(built):
    excl = built[1]
    counts = Counter(excl["reason"])
    assert counts["dismissed"] == 1
    assert counts["no_disposition"] == 1 and counts["mixed_disposition"] == 1


def test_duplicate_docket_removed_and_counted(built):
    inst, excl = built
    dup = excl[excl["reason"] == "duplicate_docket"]
    assert len(dup) == 1 and dup.iloc[0]["term"] == "2019" and dup.iloc[0]["docket"] == "18-143"
    dockets = inst["inputs"].map(lambda s: json.loads(s)["docket"])
    assert (dockets == "18-143").sum() == 1  # the decided 2020 entry is kept


def test_no_case_name_overlap_between_train_and_eval(built):
    inst, excl = built
    dec = _decoded(inst)
    names = dec["inputs"].map(lambda i: case_name_key(i["case_name"]))
    assert not set(names[dec["split"] == "train"]) & set(names[dec["split"] == "eval"])
    dropped = excl[excl["reason"] == "name_overlap_with_eval"]
    assert len(dropped) >= 1  # with this seed some repeated names land in eval
    assert set(dropped["case_name"].map(case_name_key)) <= set(names[dec["split"] == "eval"])
    assert legal_overlap_problems(inst) == []


def test_train_cases_sharing_a_distinctive_party_with_eval_are_dropped(built):
    inst, excl = built
    dec = _decoded(inst)
    eval_parties = {party_key(p) for i in dec.loc[dec["split"] == "eval", "inputs"] for p in (i["petitioner"], i["respondent"])} - {None}
    for i in dec.loc[dec["split"] == "train", "inputs"]:
        assert not {party_key(i["petitioner"]), party_key(i["respondent"])} & eval_parties
    dropped = excl[excl["reason"] == "party_overlap_with_eval"]
    assert len(dropped) >= 1 and dropped["case_name"].str.startswith("Solo Zed").all()
    # switched off, they stay in train
    inst2, excl2 = build_legal_instances(synthetic_tables(), {"seed": 7, "drop_party_overlap": False}, knowledge_cutoffs=KC)
    assert "party_overlap_with_eval" not in set(excl2["reason"])
    assert (inst2["split"] == "train").sum() == (inst["split"] == "train").sum() + len(dropped)


def test_party_key_ignores_officials_and_generic_litigants():
    assert party_key("Coinbase, Inc.") == "coinbase"
    assert party_key("Nancy A. Berryhill, Acting Commissioner of Social Security") is None
    assert party_key("United States of America") is None and party_key("State of Texas") is None
    assert party_key("O. John Benisek, et al.") == "o john benisek"


def test_control_split_after_every_knowledge_cutoff(built):
    inst, excl = built
    ctrl = inst[inst["split"] == "control"]
    assert len(ctrl) == 2 and (ctrl["cutoff_date"] > KC["tiny"]).all()
    early = excl[excl["reason"] == "control_not_after_knowledge_cutoff"]
    assert len(early) == 1 and early.iloc[0]["term"] == "2024"
    inst2, _ = build_legal_instances(synthetic_tables(), {"seed": 7, "control_terms": []}, knowledge_cutoffs=KC)
    assert "control" not in set(inst2["split"])


def test_appellate_cases_join_train_with_redacted_facts(built):
    dec = _decoded(built[0])
    app = dec[dec["inputs"].map(lambda i: i["kind"] == "appellate")]
    assert set(app["split"]) == {"train"} and len(app) == 2
    maple = app[app["inputs"].map(lambda i: i["case_name"].startswith("Maple"))].iloc[0]
    assert maple["inputs"]["court"] == "U.S. Court of Appeals for the Ninth Circuit"
    assert maple["inputs"]["petitioner"] == "Maple Rowe" and maple["label"]["petitioner_wins"] == 1
    assert "reverse" not in maple["inputs"]["facts"].lower() and "Rowe drove" in maple["inputs"]["facts"]
    assert maple["cutoff_date"] == "2021-05-02" and maple["instance_id"] == "legal-train-ca9-20-55001"


def test_facts_are_truncated_for_small_contexts(built):
    dec = _decoded(built[0])
    long = dec[dec["inputs"].map(lambda i: i["docket"] == "17-144")].iloc[0]
    assert len(long["inputs"]["facts"]) <= 1500 and long["inputs"]["facts"].endswith("[...]")
    assert long["provenance"]["facts_truncated"] is True


def test_deterministic_and_seed_dependent(tables, built):
    again = build_legal_instances(tables, {"seed": 7}, knowledge_cutoffs=KC)
    pd.testing.assert_frame_equal(built[0], again[0])
    pd.testing.assert_frame_equal(built[1], again[1])
    other, _ = build_legal_instances(tables, {"seed": 8}, knowledge_cutoffs=KC)
    ev = lambda df: set(df.loc[df["split"] == "eval", "instance_id"].str.replace("legal-eval-", ""))  # noqa: E731
    assert ev(built[0]) != ev(other)


def test_train_size_cap_is_counted(tables):
    inst, excl = build_legal_instances(tables, {"seed": 7, "train_size": 50, "include_appellate": False}, knowledge_cutoffs=KC)
    assert (inst["split"] == "train").sum() == 50
    assert (excl["reason"] == "train_sample_cap").sum() > 0


def test_missing_column_names_table_and_column(tables):
    broken = dict(tables, oyez=tables["oyez"].drop(columns=["question"]))
    with pytest.raises(SourceError) as err:
        build_legal_instances(broken, {}, knowledge_cutoffs=KC)
    assert "oyez" in str(err.value) and "question" in str(err.value)
    with pytest.raises(KeyError, match="scdb"):
        build_legal_instances({"oyez": tables["oyez"]}, {}, knowledge_cutoffs=KC)


def test_bad_config_is_a_value_error(tables):
    with pytest.raises(ValueError, match="unknown key"):
        build_legal_instances(tables, {"eval_sise": 10}, knowledge_cutoffs=KC)
    with pytest.raises(ValueError, match="last_term"):
        build_legal_instances(tables, {"first_term": 2020, "last_term": 2015}, knowledge_cutoffs=KC)


def test_allocate_per_year_even_and_capacity_aware():
    assert allocate_per_year({2015: (9, 9), 2016: (9, 9)}, 10) == {2015: 5, 2016: 5}
    # a year with one respondent win can give at most 3 balanced cases (2 + 1)
    q = allocate_per_year({2014: (5, 1), 2015: (20, 20), 2016: (20, 20)}, 30)
    assert q == {2014: 3, 2015: 14, 2016: 13}
    assert sum(allocate_per_year({2014: (1, 0)}, 10).values()) == 1


def test_config_schema_is_valid_and_complete():
    jsonschema.Draft202012Validator.check_schema(CONFIG_SCHEMA)
    assert CONFIG_SCHEMA["additionalProperties"] is False
    for key, prop in CONFIG_SCHEMA["properties"].items():
        assert "default" in prop and "description" in prop, key
    validator = jsonschema.Draft202012Validator(CONFIG_SCHEMA)
    validator.validate({k: v["default"] for k, v in CONFIG_SCHEMA["properties"].items()})
    assert list(validator.iter_errors({"eval_size": -1}))


# -- from the source readers (invented snapshot fixtures) -----------------------------------------


def test_builds_from_the_source_readers(monkeypatch):
    monkeypatch.delenv(SNAPSHOT_ENV, raising=False)
    o, _ = oyez.fetch(snapshot_dir=SNAPSHOTS, terms=[2018, 2019, 2020])
    s, _ = scdb.fetch(snapshot_dir=SNAPSHOTS, terms=[2018, 2019, 2020])
    c, _ = courtlistener.fetch(snapshot_dir=SNAPSHOTS)
    cfg = {"first_term": 2018, "last_term": 2020, "eval_size": 2, "control_terms": [], "seed": 1}
    inst, excl = build_legal_instances({"oyez": o, "scdb": s, "courtlistener": c}, cfg, knowledge_cutoffs=KC)
    dec = _decoded(inst).set_index(inst["inputs"].map(lambda x: json.loads(x)["docket"]))
    assert set(dec.index) == {"18-9001", "18-9002", "19-9004", "144 Orig"}
    assert dec.loc["18-9001", "cutoff_date"] == "2020-06-13"  # SCDB decision 2020-06-14
    assert dec.loc["18-9001", "label"]["label_source"] == "scdb" and dec.loc["18-9001", "label"]["petitioner_wins"] == 1
    assert dec.loc["18-9002", "label"]["petitioner_wins"] == 0
    assert dec.loc["19-9004", "label"]["label_source"] == "oyez"  # SCDB partyWinning not coded; Oyez "FWC"
    assert dec.loc["144 Orig", "provenance"]["scdb_join"] == "term_docket"
    reasons = Counter(excl["reason"])
    assert reasons["unclear_outcome"] == 1  # 18-9003: SCDB partyWinning = 2
    assert reasons["duplicate_docket"] == 1  # 18-9001 in 2018 and 2019
    assert reasons["conflicting_decisions"] == 1 and reasons["no_outcome"] == 1
    assert reasons["no_disposition"] == 3  # snapshot listings carry no disposition
    assert (inst["split"] == "eval").sum() == 2


# -- the Task interface ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def eval_row(built):
    inst = built[0]
    return inst[inst["split"] == "eval"].iloc[0]


def test_messages_hold_the_fields_and_the_cutoff(eval_row):
    task = LegalTask()
    system, user = task.messages(eval_row)
    inp = json.loads(eval_row["inputs"])
    assert system["role"] == "system" and "expert Supreme Court analyst" in system["content"]
    assert eval_row["cutoff_date"] in system["content"] and "probability that the petitioner prevails" in system["content"]
    for field in ("case_name", "petitioner", "respondent", "question"):
        assert inp[field] in user["content"]
    assert f"October Term {inp['term']}" in user["content"]
    assert f"Today's date: {eval_row['cutoff_date']}" in user["content"]
    assert json.loads(eval_row["label"])["decision_date"] not in user["content"]


def test_appellate_prompt_names_the_court_and_roles(built):
    inst = built[0]
    row = inst[inst["instance_id"] == "legal-train-ca9-20-55001"].iloc[0]
    system, user = LegalTask().messages(row)
    assert "courts of appeals" in system["content"]
    assert "Petitioner (appellant): Maple Rowe" in user["content"] and "Ninth Circuit" in user["content"]


def test_prediction_schema_and_validation(eval_row):
    task = LegalTask()
    assert task.prediction_schema(eval_row) == {"type": "number", "minimum": 0, "maximum": 1}
    assert task.validate_prediction(eval_row, 0) == 0.0 and task.validate_prediction(eval_row, 1) == 1.0
    assert task.validate_prediction(eval_row, 0.35) == 0.35 and task.validate_prediction(eval_row, " 0.4 ") == 0.4
    for bad in (1.2, -0.1, float("nan"), float("inf"), True, None, "likely", [0.5], 65):
        with pytest.raises(ValueError):
            task.validate_prediction(eval_row, bad)


def test_parse_output_rejects_out_of_range_probability(eval_row):
    task = LegalTask()
    validate = lambda p: task.validate_prediction(eval_row, p)  # noqa: E731
    good = parse_output('{"evidence": [{"id": 1, "fact": "x", "source_date": "2019-01-01"}], "reasoning": "[1]", "prediction": 0.7}', validate)
    assert good.status == ParseStatus.OK and good.prediction == 0.7
    bad = parse_output('{"evidence": [], "reasoning": "", "prediction": 1.7}', validate)
    assert bad.status == ParseStatus.INVALID_PREDICTION
    alias = parse_output('{"evidence": [], "reasoning": "", "probability_petitioner": 0.2}', validate, task.prediction_aliases)
    assert alias.prediction == 0.2


def test_perf_is_one_minus_squared_error(eval_row):
    task = LegalTask()
    y = json.loads(eval_row["label"])["petitioner_wins"]
    assert task.perf(eval_row, float(y)) == 1.0
    assert task.perf(eval_row, 1.0 - y) == 0.0
    assert task.perf(eval_row, 0.5) == pytest.approx(0.75)
    assert legal_perf(0.8, 1) == pytest.approx(0.96) and legal_perf(0.8, 0) == pytest.approx(0.36)
    with pytest.raises(ValueError):
        legal_perf(1.5, 1)
    with pytest.raises(ValueError):
        legal_perf(0.5, 2)


def test_entities_and_grounding_context(eval_row):
    task = LegalTask()
    inp, lab = json.loads(eval_row["inputs"]), json.loads(eval_row["label"])
    ent = task.entities(eval_row)
    assert ent["case_name"] == [inp["case_name"]] and ent["parties"] == [inp["petitioner"], inp["respondent"]]
    ctx = task.grounding_context(eval_row)
    assert ctx["cutoff_date"] == eval_row["cutoff_date"] and ctx["decision_date"] == lab["decision_date"]
    assert ctx["outcome"] == lab["outcome"] and ctx["petitioner"] == inp["petitioner"] and ctx["case_name"] == inp["case_name"]
    json.dumps(ctx)


# -- helpers ----------------------------------------------------------------------------------------


def test_case_name_key_normalises_spelling():
    assert case_name_key("Smith v. Acme Widgets, Inc., et al.") == case_name_key("SMITH v. ACME WIDGETS")
    assert case_name_key("U.S. v. Jones") == case_name_key("United States of America vs. Jones") == "united states v jones"
    assert case_name_key("Doe & Roe v. Poe") == "doe and roe v poe"


def test_truncate_text_at_sentence_end():
    text = "First sentence is right here and long. Second sentence is longer than the first one. Third."
    out, cut = truncate_text(text, 50)
    assert cut and out == "First sentence is right here and long. [...]" and len(out) <= 50
    assert truncate_text("short", 50) == ("short", False)
    out, cut = truncate_text("word " * 40, 30)
    assert cut and len(out) <= 30 and out.endswith("[...]")


def test_overlap_check_reports_shared_names(built):
    inst = built[0].copy()
    ev = inst.index[inst["split"] == "eval"][0]
    tr = inst.index[inst["split"] == "train"][0]
    inputs = json.loads(inst.at[tr, "inputs"])
    inputs["case_name"] = json.loads(inst.at[ev, "inputs"])["case_name"]
    inst.at[tr, "inputs"] = json.dumps(inputs)
    assert any("case names" in p for p in legal_overlap_problems(inst))
    assert np.isfinite(len(inst))


def test_an_early_disclosure_moves_the_cutoff_before_it():
    from anachron.tasks.legal.dataset import EARLY_DISCLOSURES, RULE_DECISION, cutoff_of

    day, rule = cutoff_of("19-1392", "2022-06-24", appellate=False)  # Dobbs: the draft opinion published May 2
    assert day == "2022-05-01" and rule.startswith("the day before an early disclosure") and "2022-05-02" in rule
    assert cutoff_of("No. 19-1392", "2022-06-24", appellate=False)[0] == "2022-05-01"  # any docket spelling
    assert cutoff_of("20-1199", "2023-06-29", appellate=False) == ("2023-06-28", RULE_DECISION)
    assert cutoff_of("19-1392", "2022-06-24", appellate=True) == ("2022-06-23", RULE_DECISION)  # another court's docket
    assert all(d[0] <= "2100" and d[1] for d in EARLY_DISCLOSURES.values())
