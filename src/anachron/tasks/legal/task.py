"""Legal: the Task (prompt, Perf) and its hooks."""

from __future__ import annotations

from anachron.tasks.base import ProbabilityTask, brier_perf, instance_inputs, instance_label, three_step_system_prompt
from anachron.tasks.legal.claims import OUTCOME_NOUNS, is_consequence, outcome_rule
from anachron.tasks.legal.neuter import neuter_legal
from anachron.tasks.legal.calibration import LegalPlanter
from anachron.tasks.legal.checks import legal_overlap_problems
from anachron.tasks.legal.dataset import OPTIONAL_TABLES, REQUIRED_TABLES, build_legal_instances
from anachron.tasks.legal.records import open_case_records


def legal_perf(probability: float, petitioner_wins: int | bool) -> float:
    """Perf = 1 - (p - y)^2 (docs/tasks.md#legal): :func:`~anachron.tasks.base.brier_perf` with y = petitioner won."""
    return brier_perf(probability, petitioner_wins)


class LegalTask(ProbabilityTask):
    """Probability that the petitioner prevails in a court case (docs/tasks.md#legal).

    Prediction: one number in [0, 1]. Perf is :func:`legal_perf`, 1 - (p - y)^2.
    """

    name = "legal"
    prediction_aliases = ("probability_petitioner", "probability", "p_petitioner")
    sources = REQUIRED_TABLES + OPTIONAL_TABLES
    outcome_nouns = OUTCOME_NOUNS
    cutoff_rule = "the day before the decision"  # each label's cutoff_rule (tasks.legal.dataset.cutoff_of)
    audit_fields = ("facts", "question")
    # the Supreme Court Database's first term (October Term 1946)
    data_begins = "1946-10-07"
    # hooks implemented by the package's modules
    outcome_rule = staticmethod(outcome_rule)
    is_consequence = staticmethod(is_consequence)
    overlap_problems = staticmethod(legal_overlap_problems)
    build = staticmethod(build_legal_instances)

    def messages(self, row):
        inp = instance_inputs(row)
        appellate = inp.get("kind") == "appellate"
        system = three_step_system_prompt(
            role="an expert analyst of the federal courts of appeals" if appellate else "an expert Supreme Court analyst",
            goal=(
                "You judge how likely it is that the petitioner"
                + (" (the appellant)" if appellate else "")
                + " wins a pending case: that the court's judgment goes the petitioner's way, typically by reversing "
                "or vacating the decision under review."
            ),
            cutoff_date=row["cutoff_date"],
            date_hint=(
                "A ruling is dated by the day the court announced it, a brief or petition by its filing day, and an "
                "oral argument by the day it was heard; the term a case belongs to is not the date it was decided."
            ),
            prediction_spec=(
                "a single number from 0 to 1, your probability that the petitioner prevails "
                "(1 = surely the petitioner, 0 = surely the respondent)."
            ),
        )
        lines = [
            f"Case: {inp['case_name']}",
            f"Court: {inp['court']}",
            (f"Year: {inp['term']}" if appellate else f"Term: October Term {inp['term']}"),
            f"Docket: {inp['docket']}",
            f"Petitioner{' (appellant)' if appellate else ''}: {inp['petitioner']}",
            f"Respondent{' (appellee)' if appellate else ''}: {inp['respondent']}",
        ]
        if inp.get("lower_court"):
            lines.append(f"Decision under review: {inp['lower_court']}")
        if inp.get("facts"):
            lines += ["", "Facts:", inp["facts"]]
        if inp.get("question"):
            lines += ["", "Question:", inp["question"]]
        lines += ["", f"Today's date: {row['cutoff_date']}"]
        return [{"role": "system", "content": system}, {"role": "user", "content": "\n".join(lines)}]



    def perf(self, row, prediction):
        return legal_perf(prediction, instance_label(row)["petitioner_wins"])

    def neuter(self, row):
        """Parties as "Petitioner" / "Respondent", names in the facts replaced (:func:`anachron.tasks.legal.neuter.neuter_legal`)."""
        return neuter_legal(instance_inputs(row))

    def entities(self, row):
        inp = instance_inputs(row)
        return {
            "case_name": [inp["case_name"]],
            "parties": [p for p in (inp.get("petitioner"), inp.get("respondent")) if p],
            "court": [inp["court"]],
            "docket": [str(inp.get("docket") or "")],
        }

    def grounding_context(self, row):
        inp, lab = instance_inputs(row), instance_label(row)
        return {
            "cutoff_date": row["cutoff_date"],
            "case_name": inp["case_name"],
            "court": inp["court"],
            "docket": inp.get("docket"),
            "petitioner": inp.get("petitioner"),
            "respondent": inp.get("respondent"),
            "decision_date": lab["decision_date"],
            "outcome": lab["outcome"],
            "petitioner_wins": lab["petitioner_wins"],
            # what the case is about: ties an unnamed ruling to it (grounding.states_ruling)
            "facts": inp.get("facts"),
            "lower_court": inp.get("lower_court"),
            "question": inp.get("question"),
        }

    def describe(self, inputs):
        case = inputs.get("case_name", "the case")
        return (
            f"Estimate the probability that the petitioner ({inputs.get('petitioner', '?')}) prevails in {case} "
            f"before the {inputs.get('court', 'court')}.",
            f"the {inputs.get('court', 'court')}'s decision in {case}",
        )

    def grounding_inputs(self, *, edgar):
        return {k: v for k, v in self.dataset_inputs().items() if k in ("scdb", "oyez")}

    def make_grounding(self, inputs):
        return open_case_records(inputs)

    def planter(self, instances, data, rng, frames, *, all_instances):
        return LegalPlanter(instances, data, rng, frames, all_instances=all_instances)
