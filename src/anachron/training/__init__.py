"""TEMPO training (TEMPO paper §3, App. C and E; docs/methods.md#tempo): GRPO with the two-mode reward.

* :mod:`~anachron.training.rewards` — the reward itself: pure functions of per-completion scores
  (stdlib and numpy only, unit-tested without a model).
* :mod:`~anachron.training.scoring` — generated texts to those scores with the project's own parser,
  verifier and metrics, so training is rewarded by exactly what evaluation measures.
* :mod:`~anachron.training.trainer` — the thin TRL ``GRPOTrainer`` + PEFT LoRA wiring, validation
  and the per-step log.
* :mod:`~anachron.training.weights` and :mod:`~anachron.training.export` — base weights from a GGUF,
  and the trained adapter back to GGUF for the llama.cpp provider.
* :mod:`~anachron.training.extra` — the check for the optional ``train`` extra.

Nothing here imports torch at package load: the package imports without the ``train`` extra; the
modules that need it import it inside their functions, after
:func:`~anachron.training.extra.require_training_extra` has checked it.
"""
