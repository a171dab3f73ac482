"""Calibration of the claim verifier on planted claims of known truth (docs/verification.md#calibration).

* :mod:`~anachron.verify.calibration.planting`: the machinery each task's planter builds on
  (wording helpers, declared-date and date-style choices, the
  :class:`~anachron.verify.calibration.planting.Planter` base);
  :mod:`~anachron.verify.calibration.market` the market families shared by stock and forecast;
* :mod:`~anachron.verify.calibration.plant`: :func:`~anachron.verify.calibration.plant.plant_claims`
  runs a task's planter;
* :mod:`~anachron.verify.calibration.evaluate`: the verifier over the planted claims, recall
  and false-positive rates with Wilson intervals.
"""
