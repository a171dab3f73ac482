"""Glue for rule prepare_base_model: a local/ model's GGUF as transformers weights (for TEMPO training)."""

from pathlib import Path

from anachron.llm.providers.llama_cpp import resolve_gguf_path
from anachron.llm.types import ModelSpec
from anachron.logs import log_to
from anachron.training.extra import require_training_extra
from anachron.training.weights import export_base_model

sm = snakemake  # noqa: F821 (injected by Snakemake)

with log_to(sm.log[0]) as log:
    require_training_extra()
    spec = ModelSpec(name=sm.wildcards.model, **dict(sm.params.model_config))
    gguf = resolve_gguf_path(spec)
    log.info("exporting %s to %s", gguf, sm.output.base)
    export_base_model(gguf, Path(sm.output.base))
