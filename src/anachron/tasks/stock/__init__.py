"""The stock task: rank 5 companies of one GICS sector by total return over a window.

Definition (docs/tasks.md#stock; TEMPO paper, App. B.3): the cutoff is the day before the
window starts; the universe is the S&P 500 as of the cutoff, survivorship-free; the label
is the ranking by total return over the window; Perf is ``(Spearman rho + 1) / 2``.

Modules: ``dataset`` (the builder), ``task`` (:class:`StockTask`: prompt, schema, Perf and
hooks), ``claims`` (the outcome rules A4/A5), ``grounding`` (the shared market checks),
``calibration`` (the planter), ``checks`` (train/eval overlap).
"""

from __future__ import annotations

from anachron.tasks.stock.config import CONFIG_SCHEMA
from anachron.tasks.stock.dataset import build_stock_instances, prices_window_summary
from anachron.tasks.stock.task import StockTask, stock_perf

__all__ = ["CONFIG_SCHEMA", "StockTask", "build_stock_instances", "prices_window_summary", "stock_perf"]
