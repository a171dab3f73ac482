"""The salary task: the average annual value (AAV) of a free agent's new contract.

Definition (docs/tasks.md#salary; TEMPO paper, App. D): train on NHL (and NFL / MLB where
a table exists), evaluate on the NBA; the cutoff is the day before the signing;
Perf = max(0, 1 - |yhat - y| / y).

Modules: ``dataset`` (the builder and the ``tasks.salary`` config schema), ``task``
(:class:`SalaryTask`: prompt, schema, parsing, Perf and hooks), ``claims`` (the outcome
rules A4/A5), ``grounding`` (:class:`ContractGrounding`), ``calibration`` (the planter),
``checks`` (train/eval overlap).
"""

from __future__ import annotations

from anachron.tasks.salary.dataset import CONFIG_SCHEMA, build_salary_instances
from anachron.tasks.salary.task import SalaryTask, parse_amount, salary_perf

__all__ = ["CONFIG_SCHEMA", "SalaryTask", "build_salary_instances", "parse_amount", "salary_perf"]
