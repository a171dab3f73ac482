"""The legal task: the probability that the petitioner prevails in a court case.

Definition (docs/tasks.md#legal; TEMPO paper, legal task and App. D): Supreme Court cases
(Oyez, SCDB) and federal appellate cases (CourtListener, train only); the cutoff is the day
before the decision; Perf = 1 - (p - y)^2.

Modules: ``dataset`` (the builder: the splits and the instances), ``config`` (the ``tasks.legal``
config schema), ``scotus`` (Oyez joined to SCDB and labelled), ``appellate`` (CourtListener cases),
``parties`` (case-name and party keys), ``exclusions`` (the exclusion reasons), ``cells`` (reading
the source tables' cells), ``task`` (:class:`LegalTask`: prompt, Perf and hooks), ``claims`` (the
outcome rules A4/A5), ``grounding`` (:class:`DecisionGrounding`, the lower courts),
``calibration`` (the planter), ``checks`` (train/eval overlap).
"""

from __future__ import annotations

from anachron.tasks.legal.config import CONFIG_SCHEMA
from anachron.tasks.legal.dataset import build_legal_instances
from anachron.tasks.legal.task import LegalTask, legal_perf

__all__ = ["CONFIG_SCHEMA", "LegalTask", "build_legal_instances", "legal_perf"]
