"""Stock: the Task (prompt, prediction schema, Perf) and its hooks."""

from __future__ import annotations

import datetime as dt
from typing import Sequence

import numpy as np

from anachron.errors import ConfigError
from anachron.sources.paths import PRICES, PRICES_MANIFEST, SP500_MANIFEST, SP500_MEMBERSHIP, SP500_SECTORS
from anachron.tasks.base import Task, instance_inputs, instance_label, three_step_system_prompt
from anachron.tasks.stock.claims import OUTCOME_NOUNS, is_consequence, outcome_rule
from anachron.tasks.stock.neuter import neuter_stock
from anachron.tasks.stock.calibration import StockPlanter
from anachron.tasks.stock.checks import stock_overlap
from anachron.tasks.stock.dataset import build_stock_instances
from anachron.tasks.stock.grounding import make_stock_grounding
from anachron.verify.layers.market import market_grounding_inputs

#: Fallback RAG query templates ("{s}": "name ticker" of a company, "{y}": the cutoff year).
QUERY_ASPECTS = (
    "{s} quarterly earnings {y}",
    "{s} stock price {y}",
    "{s} revenue guidance {y}",
    "{s} analyst rating {y}",
    "{s} news {y}",
    "{s} annual report {y}",
    "{s} debt and cash flow {y}",
    "{s} competition {y}",
    "{s} management {y}",
    "{s} dividends and buybacks {y}",
    "{s} risks {y}",
    "{s} industry outlook {y}",
)


def stock_perf(predicted_ranking: Sequence[str], true_ranking: Sequence[str]) -> float:
    """Perf of a predicted ranking: ``(Spearman rho + 1) / 2`` in [0, 1] (TEMPO paper, App. B.3).

    Both arguments list tickers best to worst. Identical rankings give 1.0, reversed give
    0.0. Raises ``ValueError`` when ``predicted_ranking`` is not a permutation of
    ``true_ranking`` (missing, extra or repeated tickers) or fewer than 2 items are ranked.
    """
    pred, true = list(predicted_ranking), list(true_ranking)
    if len(true) < 2:
        raise ValueError(f"need at least 2 ranked items, got {len(true)}")
    if len(set(true)) != len(true):
        raise ValueError(f"true ranking has repeated items: {true}")
    if len(pred) != len(true) or set(pred) != set(true):
        raise ValueError(f"predicted ranking {pred} is not a permutation of {true}")
    from scipy.stats import spearmanr  # here, not at import: scipy.stats takes ~0.8 s to import, which
    # every job that only names the task (run_method, verify_claims, Snakemake's start-up) would pay

    position = {t: i for i, t in enumerate(pred)}
    rho = spearmanr(np.arange(len(true)), [position[t] for t in true]).statistic
    return float((rho + 1.0) / 2.0)


class StockTask(Task):
    """Rank five same-sector S&P 500 companies by total return over a window (docs/tasks.md#stock).

    Prediction: the list of the five tickers, best return first. Perf is
    :func:`stock_perf`, (Spearman rho + 1) / 2 (TEMPO paper, App. B.3).
    """

    name = "stock"
    prediction_aliases = ("ranking",)
    outcome_nouns = OUTCOME_NOUNS
    cutoff_rule = "the day before the return window starts"
    rag_query_counts = (7, 12)  # TEMPO App. F.2 / I.2: stock benefits from more, diverse queries
    rag_query_aspects = QUERY_ASPECTS
    # hooks implemented by the package's modules
    outcome_rule = staticmethod(outcome_rule)
    is_consequence = staticmethod(is_consequence)
    overlap_problems = staticmethod(stock_overlap)
    make_grounding = staticmethod(make_stock_grounding)

    def messages(self, row):
        inp = instance_inputs(row)
        system = three_step_system_prompt(
            role="an equity analyst",
            goal="You rank a group of companies by the total stock return you expect over a given period.",
            cutoff_date=row["cutoff_date"],
            date_hint=(
                "A quarterly result is dated by its earnings release, weeks after the quarter ends; "
                "a closing price is dated by its trading day."
            ),
            prediction_spec="the tickers of all the companies listed, each exactly once, best expected return first.",
        )
        lines = "\n".join(f"- {c['ticker']} ({c['name']})" for c in inp["companies"])
        user = (
            f"Sector: {inp['sector']}\n"
            f"Period: {inp['start_date']} to {inp['end_date']}\n"
            f"Today's date: {row['cutoff_date']}\n"
            f"Companies:\n{lines}"
        )
        return [{"role": "system", "content": system}, {"role": "user", "content": user}]

    def prediction_schema(self, row):
        tickers = [c["ticker"] for c in instance_inputs(row)["companies"]]
        n = len(tickers)
        return {"type": "array", "items": {"type": "string", "enum": tickers}, "minItems": n, "maxItems": n}

    def validate_prediction(self, row, prediction):
        tickers = [c["ticker"] for c in instance_inputs(row)["companies"]]
        if not isinstance(prediction, list):
            raise ValueError(f"ranking must be a list, got {type(prediction).__name__}")
        ranking = [str(t).strip().upper() for t in prediction]
        if sorted(ranking) != sorted(t.upper() for t in tickers):
            raise ValueError(f"ranking {ranking} is not a permutation of {tickers}")
        return ranking

    def perf(self, row, prediction):
        return stock_perf(prediction, instance_label(row)["ranking"])

    def neuter(self, row):
        """Companies as "Company A" ... with neutral tickers (:func:`anachron.tasks.stock.neuter.neuter_stock`)."""
        return neuter_stock(instance_inputs(row), instance_label(row))

    def entities(self, row):
        comps = instance_inputs(row)["companies"]
        return {"tickers": [c["ticker"] for c in comps], "names": [c["name"] for c in comps]}

    def grounding_context(self, row):
        ctx = self.entities(row)
        ctx.update(cutoff_date=row["cutoff_date"], label=instance_label(row))
        return ctx

    def check_config(self, task_config):
        for i, w in enumerate(task_config["windows"]):
            try:
                start, end = dt.date.fromisoformat(w["start"]), dt.date.fromisoformat(w["end"])
            except ValueError as exc:
                raise ConfigError(f"config key tasks.stock.windows.{i}: {exc}") from None
            if end <= start:
                raise ConfigError(f"config key tasks.stock.windows.{i}: end {w['end']} is not after start {w['start']}")
        names = [w["name"] for w in task_config["windows"]]
        if len(set(names)) != len(names):
            raise ConfigError("config key tasks.stock.windows: window names must be unique")

    def dataset_inputs(self):
        return {
            "prices": PRICES,
            "membership": SP500_MEMBERSHIP,
            "sectors": SP500_SECTORS,
            "prices_manifest": PRICES_MANIFEST,
            "sp500_manifest": SP500_MANIFEST,
        }

    def build(self, tables, task_config, *, knowledge_cutoffs):
        return build_stock_instances(
            tables["prices"], tables["membership"], tables["sectors"], task_config["windows"], seed=task_config["seed"]
        )

    def describe(self, inputs):
        comps = inputs.get("companies") or []
        tick = ", ".join(f"{c.get('ticker')} ({c.get('name')})" for c in comps if isinstance(c, dict))
        span = f"from {inputs.get('start_date')} to {inputs.get('end_date')}"
        return (
            f"Rank the {inputs.get('sector', '')} companies {tick} by total stock return {span}.",
            f"the total stock returns of {tick} {span}",
        )

    def grounding_inputs(self, *, edgar):
        return market_grounding_inputs(edgar=edgar)

    def planter(self, instances, data, rng, frames, *, all_instances):
        return StockPlanter(instances, data, rng, frames)
