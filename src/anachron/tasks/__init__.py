"""Prediction tasks: one package per task (``stock``, ``salary``, ``legal``, ``forecast``).

A task package ``anachron/tasks/<name>/`` owns everything about its task: the data it is
built from, the dataset builder, the prompt and prediction schema, parsing and Perf, the
claim rules for its instance's own outcome (A4/A5), its grounded checks, its calibration
planter and its train/eval overlap check. Its :class:`~anachron.tasks.base.Task` subclass
exposes them as hooks (see :mod:`anachron.tasks.base`); the generic code finds the task
through :mod:`anachron.tasks.registry` and never branches on a task's name.

To add a task:

1. Write the package: a ``Task`` subclass with ``name``, ``messages``,
   ``prediction_schema``, ``validate_prediction`` and ``perf`` (or a
   :class:`~anachron.tasks.base.ProbabilityTask`), plus the hooks it has: ``sources`` or
   ``dataset_inputs`` and ``build`` for its dataset, ``grounding_context``,
   ``outcome_rule`` / ``outcome_nouns`` / ``is_consequence`` for the categoriser,
   ``grounding_inputs`` / ``make_grounding`` for the grounded layer, ``planter`` for
   calibration, ``overlap_problems`` for the dataset checks. The existing packages split
   these into ``dataset``, ``task``, ``claims``, ``grounding``, ``calibration`` and ``checks``.
2. Add one line to :data:`anachron.tasks.registry.TASKS` (``"<name>": "module:Class"``).
3. Give it a ``tasks.<name>`` block in the config schema and name it in ``run.tasks``.

``tests/tasks/test_toy_task.py`` defines a task inside a test and runs it through build,
Temporal Hint, verification and scoring with nothing else changed.
"""
