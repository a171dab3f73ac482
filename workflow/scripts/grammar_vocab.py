"""Glue for rule grammar_vocab: the vocabulary of an hf_path model as a GGUF, for the rollouts' output grammar."""

from pathlib import Path

from anachron.logs import log_to
from anachron.training.export import llama_cpp_converter, vocab_gguf

sm = snakemake  # noqa: F821 (injected by Snakemake)

with log_to(sm.log[0]) as log:
    converter = llama_cpp_converter(Path(sm.input.converter))
    out = vocab_gguf(Path(sm.params.model_dir).expanduser(), Path(sm.output.vocab), converter_dir=converter)
    log.info("wrote %s (%d bytes)", out, out.stat().st_size)
