"""The forecast task: the probability that a binary ForecastBench question resolves Yes.

Definition (docs/tasks.md#forecast): binary ForecastBench questions; the cutoff is the
question set's freeze date; Perf = 1 - Brier = 1 - (p - y)^2.

Modules: ``dataset`` (the builder and the ``tasks.forecast`` config schema), ``task``
(:class:`ForecastTask`: prompt, Perf and hooks), ``claims`` (the outcome rule A4),
``grounding`` (:class:`ResolutionGrounding` and the shared market checks), ``calibration``
(the planter).
"""

from __future__ import annotations

from anachron.tasks.forecast.dataset import CONFIG_SCHEMA, build_forecast_instances
from anachron.tasks.forecast.task import ForecastTask

__all__ = ["CONFIG_SCHEMA", "ForecastTask", "build_forecast_instances"]
