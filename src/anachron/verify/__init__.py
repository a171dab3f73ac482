"""Claim-level verification (docs/verification.md): claims, their categories and dates, the verifier's layers.

Modules, each depending only on those above it:

* :mod:`~anachron.verify.taxonomy` (the categories, :class:`~anachron.verify.taxonomy.Claim`),
  :mod:`~anachron.verify.citations` (citation parsing), :mod:`~anachron.verify.dates` (time
  references in claim text, declared-date normalisation), :mod:`~anachron.verify.features`
  (the text features the category rules test);
* :mod:`~anachron.verify.layers` (grounded checks, plausibility rules, the LLM judge) and
  :mod:`~anachron.verify.calibration.planting` (the planters' machinery): what the task
  packages build their own rules, checks and planters on;
* :mod:`~anachron.verify.task_rules` (:class:`~anachron.verify.task_rules.TaskRules`: the task
  hooks the verifier calls);
* :mod:`~anachron.verify.categorize` (the categoriser, with the outcome rules of the task in the
  context), :mod:`~anachron.verify.extract` (the rules and LLM extractors);
* :mod:`~anachron.verify.pipeline` (the order of the layers and the verdict) and
  :mod:`~anachron.verify.calibration` (planting a task's claims, evaluating the verifier on
  them); :mod:`~anachron.verify.setup` builds the verifier model's client for the workflow rules.

The verifier sits below the tasks (docs/code-map.md#layers): it never looks a task up by name.
Its callers hand in the task they hold, and the verifier calls only its
:class:`~anachron.verify.task_rules.TaskRules` hooks.
"""
