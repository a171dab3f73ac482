"""Glue for rule fetch_lora_converter: llama.cpp's LoRA-to-GGUF converter for the installed llama-cpp-python."""

from pathlib import Path

from anachron.logs import log_to
from anachron.training.export import llama_cpp_converter

sm = snakemake  # noqa: F821 (injected by Snakemake)

with log_to(sm.log[0]) as log:
    path = llama_cpp_converter(Path(sm.output.converter))
    log.info("converter ready in %s", path)
