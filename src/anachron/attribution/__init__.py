"""Attribution of a run's predictions to its claims by model calls (Shapley values on claim coalitions).

The estimators themselves are pure and live in :mod:`anachron.metrics.shapley`; this package
asks the model for the value of each coalition (:mod:`anachron.attribution.shapley`).
"""
