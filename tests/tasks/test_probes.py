"""The probe datasets: each task's anonymiser, the checks that nothing else changed, and the reasons recorded per instance."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from anachron.tasks.base import instance_inputs, instance_label
from anachron.tasks.forecast import ForecastTask
from anachron.tasks.legal import LegalTask
from anachron.tasks.neutering import Neutering, ProbeSkip, reidentifies, replace_names
from anachron.tasks.probes import PROBE_RECORD_COLUMNS, build_probe_dataset
from anachron.tasks.salary import SalaryTask
from anachron.tasks.stock import StockTask
from fictional_corpus import stock_row


def _row(task: str, iid: str, cutoff: str, inputs: dict, label: dict, provenance: dict | None = None) -> dict:
    return {"instance_id": iid, "task": task, "split": "eval", "cutoff_date": cutoff, "inputs": json.dumps(inputs),
            "label": json.dumps(label), "provenance": json.dumps(provenance or {})}


def legal_row(iid="l1", petitioner="Orla Quennell", respondent="Brackwater Mills, Inc.", case="Quennell v. Brackwater Mills",
              facts="Orla Quennell sued Brackwater Mills after the flood. Quennell lost below.", cutoff="2019-10-01"):
    inputs = {"kind": "scotus", "court": "Supreme Court of the United States", "case_name": case, "term": "2019",
              "docket": "18-1234", "petitioner": petitioner, "respondent": respondent,
              "lower_court": "United States Court of Appeals for the Ninth Circuit", "facts": facts,
              "question": f"May {respondent.split(',')[0]} be held liable?"}
    return _row("legal", iid, cutoff, inputs, {"petitioner_wins": 1, "decision_date": "2020-03-01", "outcome": "reversed"})


def salary_row(iid="s1", player="Tobias Vantwerp", cutoff="2019-06-29"):
    inputs = {"sport": "basketball", "league": "NBA", "year": 2019, "player": player, "status": "unrestricted"}
    return _row("salary", iid, cutoff, inputs, {"aav": 20_000_000.0, "signing_date": "2019-07-06", "team": "Lakers"})


def forecast_row(iid="f1", source="yfinance", ticker="CYGR"):
    inputs = {"question": f"Will {ticker}'s market close price on 2024-07-28 be higher than on 2024-07-21?",
              "background": "Cygnet Robotics Incorporated designs and sells warehouse robots.",
              "resolution_criteria": f"Resolves to the close at https://finance.yahoo.com/quote/{ticker}.",
              "market_resolution_criteria": "None", "source": source, "question_type": "dataset",
              "freeze_date": "2024-07-12", "resolution_date": "2024-07-28", "freeze_value": "12.5",
              "freeze_value_explanation": f"The latest market close price of {ticker}.", "show_freeze_value": "True"}
    return _row("forecast", iid, "2024-07-12", inputs, {"resolved_to": 1, "resolution_date": "2024-07-28"},
                {"question_id": ticker})


def _prompt(task, row) -> str:
    return "\n".join(m["content"] for m in task.messages(pd.Series(row)))


def test_stock_companies_become_neutral_names_and_the_ranking_follows():
    task = StockTask()
    row = pd.Series(stock_row("k1", "2019-11-30", [("CYGR", "Cygnet Robotics"), ("ALL", "Allcove Insurance")]))
    (out,), rec = build_probe_dataset(task, pd.DataFrame([row]), "neutered")[0].iterrows(), None
    out = out[1]
    inp, lab = instance_inputs(out), instance_label(out)
    assert [c["ticker"] for c in inp["companies"]] == ["CO-A", "CO-B"]
    assert lab["ranking"] == ["CO-A", "CO-B"]
    assert task.perf(out, task.validate_prediction(out, ["CO-A", "CO-B"])) == 1.0
    prompt = _prompt(task, out)
    assert "CYGR" not in prompt and "Cygnet" not in prompt and "Industrials" in prompt and "2019-11-30" in prompt
    # "ALL" is a word first: no form; the company is still found by its name
    forms = task.neuter(row).forms
    assert "ALL" not in forms and "Allcove" in forms and "CYGR" in forms


def test_legal_parties_are_replaced_in_every_field_consistently():
    task = LegalTask()
    row = pd.Series(legal_row())
    n = task.neuter(row)
    assert n.inputs["case_name"] == "Petitioner v. Respondent" and n.inputs["docket"] == "withheld"
    assert n.inputs["facts"] == "Petitioner sued Respondent after the flood. Petitioner lost below."
    assert n.inputs["question"] == "May Respondent be held liable?"
    assert {"Quennell", "Orla Quennell", "Brackwater Mills"} <= set(n.forms)
    assert n.inputs["court"] == "Supreme Court of the United States" and n.inputs["term"] == "2019"


def test_legal_generic_litigants_are_no_form_and_a_case_of_only_such_parties_is_skipped():
    task = LegalTask()
    n = task.neuter(pd.Series(legal_row(respondent="United States", case="Quennell v. United States",
                                        facts="The United States charged Quennell.")))
    assert "United States" not in n.forms and "Quennell" in n.forms
    assert n.inputs["facts"] == "The United States charged Petitioner."  # the generic party is kept in the text
    with pytest.raises(ProbeSkip) as exc:
        task.neuter(pd.Series(legal_row(petitioner="State of Texas", respondent="State of New Mexico",
                                        case="Texas v. New Mexico", facts="A river.")))
    assert exc.value.reason == "names_are_common_words"


def test_salary_player_becomes_the_player_with_name_and_surname_as_forms():
    task = SalaryTask()
    row = pd.Series(salary_row())
    n = task.neuter(row)
    assert n.inputs["player"] == "the player" and n.forms == ("Tobias Vantwerp", "Vantwerp")
    new = pd.Series({**row, "inputs": json.dumps(dict(n.inputs))})
    assert "Vantwerp" not in _prompt(task, new) and "the player signs" in _prompt(task, new)
    # a surname that is a common word is no form on its own
    assert task.neuter(pd.Series(salary_row(player="Kevin Will"))).forms == ("Kevin Will",)


def test_forecast_neuters_a_stock_question_and_skips_the_others_with_a_reason():
    task = ForecastTask()
    n = task.neuter(pd.Series(forecast_row()))
    assert "CYGR" not in json.dumps(dict(n.inputs)) and "Cygnet" not in json.dumps(dict(n.inputs))
    assert n.inputs["question"].startswith("Will Company A's market close price")
    assert {"CYGR", "Cygnet", "Cygnet Robotics Incorporated"} <= set(n.forms)
    _, rec = build_probe_dataset(task, pd.DataFrame([forecast_row("f2", source="fred", ticker="GDP")]), "neutered")
    assert rec.loc[0, "status"] == "skipped" and rec.loc[0, "reason"] == "no_named_entity"


def test_a_name_left_in_the_neutered_prompt_skips_the_instance_never_a_raw_prompt_labelled_neutered():
    class Leaky(SalaryTask):
        def neuter(self, row):  # forgets the player in the question line: the prompt still names him
            inp = instance_inputs(row)
            return Neutering({**inp}, None, ("Tobias Vantwerp",), ("the player",))

    out, rec = build_probe_dataset(Leaky(), pd.DataFrame([salary_row()]), "neutered")
    assert out.empty and list(rec.columns) == PROBE_RECORD_COLUMNS
    assert rec.loc[0, "reason"] == "name_left_in_prompt" and "Tobias Vantwerp" in rec.loc[0, "detail"]


def test_a_task_without_an_anonymiser_records_no_anonymiser():
    class Plain(SalaryTask):
        neuter = SalaryTask.__mro__[1].neuter  # the Task default

    _, rec = build_probe_dataset(Plain(), pd.DataFrame([salary_row()]), "neutered")
    assert rec.loc[0, "reason"] == "no_anonymiser"


def test_date_shift_moves_only_the_date_and_keeps_everything_else_byte_identical():
    task = LegalTask()
    row = legal_row()
    out, rec = build_probe_dataset(task, pd.DataFrame([row]), "date_shift", shift_days=365)
    assert out.loc[0, "cutoff_date"] == "2018-10-01" and rec.loc[0, "probe_cutoff_date"] == "2018-10-01"
    assert _prompt(task, out.loc[0]).replace("2018-10-01", "2019-10-01") == _prompt(task, row)
    assert out.loc[0, "label"] == row["label"] and out.loc[0, "inputs"] == row["inputs"]


def test_date_shift_before_the_records_begin_and_a_prompt_that_changes_more_are_skipped():
    task = LegalTask()
    _, rec = build_probe_dataset(task, pd.DataFrame([legal_row(cutoff="1947-01-15")]), "date_shift", shift_days=365)
    assert rec.loc[0, "reason"] == "shift_before_data"

    class YearInPrompt(SalaryTask):
        def messages(self, row):  # writes the cutoff's year apart from the date
            msgs = super().messages(row)
            msgs[-1] = {**msgs[-1], "content": msgs[-1]["content"] + f"\nSeason: {str(row['cutoff_date'])[:4]}"}
            return msgs

    _, rec = build_probe_dataset(YearInPrompt(), pd.DataFrame([salary_row()]), "date_shift", shift_days=365)
    assert rec.loc[0, "reason"] == "prompt_differs_beyond_date"
    # a forecast prompt showing the value of its freeze date cannot move before that date
    _, rec = build_probe_dataset(ForecastTask(), pd.DataFrame([forecast_row()]), "date_shift", shift_days=365)
    assert rec.loc[0, "reason"] == "shift_before_data" and "2024-07-12" in rec.loc[0, "detail"]
    hidden = json.loads(forecast_row()["inputs"]) | {"show_freeze_value": False}
    out, rec = build_probe_dataset(ForecastTask(), pd.DataFrame([forecast_row() | {"inputs": json.dumps(hidden)}]),
                                   "date_shift", shift_days=365)
    assert rec.loc[0, "status"] == "ok" and out.loc[0, "cutoff_date"] == "2023-07-13"


def test_reidentification_reads_forms_after_removing_the_neutral_names():
    forms, holders = ["CYGR", "Cygnet"], ["CO-A", "Company A"]
    assert reidentifies("Company A should lead: CO-A has momentum.", forms, holders) == []
    assert reidentifies("Company A (that is, Cygnet) should lead.", forms, holders) == ["Cygnet"]
    assert reidentifies("CYGRX is another ticker; cygnet is a bird.", forms, holders) == []
    assert replace_names("Vantwerp and Vantwerps", {"Vantwerp": "the player"}) == "the player and Vantwerps"


def test_unknown_probe_is_an_error():
    with pytest.raises(ValueError, match="unknown probe"):
        build_probe_dataset(SalaryTask(), pd.DataFrame([salary_row()]), "masked")
