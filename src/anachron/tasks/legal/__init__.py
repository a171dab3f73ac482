"""The legal task: the probability that the petitioner prevails in a court case.

Definition (docs/tasks.md#legal; TEMPO paper, legal task and App. D): Supreme Court cases
(Oyez, SCDB) and federal appellate cases (CourtListener, train only); the cutoff is the day
before the decision; Perf = 1 - (p - y)^2.

Modules: ``dataset`` (the builder, the ``tasks.legal`` config schema, case-name helpers),
``task`` (:class:`LegalTask`: prompt, Perf and hooks), ``claims`` (the outcome rules A4/A5),
``grounding`` (:class:`DecisionGrounding`, the lower courts), ``calibration`` (the planter),
``checks`` (train/eval overlap).
"""

from __future__ import annotations

from anachron.tasks.legal.dataset import CONFIG_SCHEMA, build_legal_instances
from anachron.tasks.legal.task import LegalTask, legal_perf

__all__ = ["CONFIG_SCHEMA", "LegalTask", "build_legal_instances", "legal_perf"]
