"""TEMPO training (TEMPO paper §3, App. C; docs: DESIGN §9): GRPO with the two-mode reward.

:mod:`anachron.training.rewards` holds the reward itself: pure functions of per-completion scores
(stdlib and numpy only, unit-tested without a model). :mod:`anachron.training.scoring` turns
generated texts into those scores with the project's own parser, verifier and metrics, so that
training is rewarded by exactly what evaluation measures. Neither imports torch: the package
imports without the ``train`` extra.
"""
