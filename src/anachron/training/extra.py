"""Is the optional training extra installed? One check, one message.

TEMPO training (docs/methods.md#tempo) needs torch, transformers, TRL, PEFT and gguf, which the
base install leaves out. The check only looks the modules up (``importlib.util.find_spec``),
so it costs milliseconds and imports nothing heavy; run it before scheduling any training job.
"""

from __future__ import annotations

import importlib.util

from anachron.errors import ConfigError

#: Import names of the modules training needs (torch: tensors; transformers: the base model;
#: trl: GRPO; peft: LoRA; gguf: reading the base GGUF and the converted adapter).
TRAINING_MODULES = ("torch", "transformers", "trl", "peft", "gguf")

#: How to install them, quoted in every message about a missing one.
TRAINING_FIX = "pip install -e '.[train]' (or: make setup-train)"


def training_extra_problems() -> list[str]:
    """Names of the modules of :data:`TRAINING_MODULES` that cannot be imported here (empty when all are)."""
    return [name for name in TRAINING_MODULES if importlib.util.find_spec(name) is None]


def require_training_extra() -> None:
    """Check that the training extra is installed.

    Raises:
        ConfigError: one message naming every missing module and the install command.
    """
    missing = training_extra_problems()
    if missing:
        raise ConfigError(
            f"TEMPO training needs the training extra; missing module(s): {', '.join(missing)}. "
            f"Install it with: {TRAINING_FIX}"
        )
