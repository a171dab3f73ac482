"""Glue for rule adapter_gguf: the TEMPO LoRA adapter converted to GGUF for the llama.cpp provider."""

from pathlib import Path

from anachron.logs import log_to
from anachron.training.export import llama_cpp_converter, lora_to_gguf

sm = snakemake  # noqa: F821 (injected by Snakemake)

with log_to(sm.log[0]) as log:
    converter = llama_cpp_converter(Path(sm.input.converter))
    out = lora_to_gguf(Path(sm.input.adapter), Path(sm.input.base), Path(sm.output.gguf), converter_dir=converter)
    log.info("wrote %s (%d bytes)", out, out.stat().st_size)
