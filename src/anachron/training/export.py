"""A trained PEFT LoRA adapter as a GGUF file, for the llama.cpp provider (``ModelSpec.lora_path``).

The conversion is llama.cpp's own ``convert_lora_to_gguf.py``, run in a subprocess with its
``gguf-py`` package first on the path. The script is not part of the llama-cpp-python wheel, but
its source distribution carries a copy of llama.cpp under ``vendor/llama.cpp``;
:func:`llama_cpp_converter` downloads the sdist of the installed llama-cpp-python version once
(``pip download``, about 77 MB) and keeps only what the converter imports:

* ``convert_lora_to_gguf.py`` (and ``convert_hf_to_gguf.py``, the full-model converter),
* ``conversion/`` (the per-architecture tensor mapping both scripts share),
* ``gguf-py/`` (the GGUF writer of that llama.cpp version), and ``LICENSE``.

Taking the converter of the same llama.cpp version that runs the adapter keeps the tensor names
and metadata keys in step with the loader. A llama.cpp checkout named by the environment variable
``ANACHRON_LLAMA_CPP_DIR`` is used instead when set (offline machines).

The converted file holds, per adapted weight ``W`` (PEFT: ``W + (alpha / r) · B · A``), the
tensors ``<gguf name>.lora_a`` (r × in) and ``.lora_b`` (out × r) and the metadata
``general.type = "adapter"``, ``adapter.type = "lora"``, ``adapter.lora.alpha = alpha``;
llama.cpp scales by ``alpha / r`` with r read from the tensor shapes, as PEFT does.
"""

from __future__ import annotations

import importlib.metadata
import json
import logging
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path, PurePosixPath

from anachron.errors import ConfigError
from anachron.io import atomic_path, sha256_file, utc_now, write_json

log = logging.getLogger(__name__)

#: Environment variable naming a llama.cpp checkout whose converter is used instead of the sdist's.
CONVERTER_DIR_ENV = "ANACHRON_LLAMA_CPP_DIR"

#: The converter script, relative to a llama.cpp directory.
LORA_CONVERTER = "convert_lora_to_gguf.py"

#: What is kept from ``vendor/llama.cpp`` of the sdist: files, and directories taken whole.
_KEEP_FILES = ("convert_lora_to_gguf.py", "convert_hf_to_gguf.py", "LICENSE")
_KEEP_DIRS = ("conversion", "gguf-py")

#: Written last into an extracted converter directory: marks it complete.
_MARKER = "anachron_converter.json"

#: Output types of the converter this module accepts (float only: the adapter stays exact enough).
OUTTYPES = ("f32", "f16")


def _tail(text: str, lines: int = 25) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


def _checkout_hint(version: str) -> str:
    return (
        f"or point {CONVERTER_DIR_ENV} at a llama.cpp checkout "
        f"(git clone https://github.com/ggml-org/llama.cpp; the one vendored by llama-cpp-python {version} fits best)"
    )


def _installed_llama_cpp_version() -> str:
    try:
        return importlib.metadata.version("llama-cpp-python")
    except importlib.metadata.PackageNotFoundError:
        raise ConfigError(
            "the LoRA converter is taken from the llama-cpp-python release in use, but llama-cpp-python is not "
            f"installed (pip install llama-cpp-python==0.3.36), {_checkout_hint('0.3.36')}"
        ) from None


def _kept(rel: PurePosixPath) -> bool:
    """Whether a path relative to ``vendor/llama.cpp`` is part of what the converter needs."""
    if not rel.parts or ".." in rel.parts or "__pycache__" in rel.parts:
        return False
    if len(rel.parts) == 1:
        return rel.parts[0] in _KEEP_FILES
    return rel.parts[0] in _KEEP_DIRS


def _extract_converter(sdist: Path, dest: Path) -> int:
    """Copy the converter's files from ``vendor/llama.cpp`` of the sdist tarball into ``dest``.

    Only regular files on the kept paths are written (no links, nothing outside ``dest``).
    Returns the number of files written. Raises ``ConfigError`` when the tarball has no converter.
    """
    written = 0
    with tarfile.open(sdist, "r:gz") as tar:
        for member in tar:
            parts = PurePosixPath(member.name).parts
            if not member.isfile() or len(parts) < 4 or parts[1:3] != ("vendor", "llama.cpp"):
                continue
            rel = PurePosixPath(*parts[3:])
            if not _kept(rel):
                continue
            target = dest.joinpath(*rel.parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            src = tar.extractfile(member)
            assert src is not None  # a regular file always has a data stream
            with src, open(target, "wb") as fh:
                shutil.copyfileobj(src, fh)
            written += 1
    if not (dest / LORA_CONVERTER).is_file() or not (dest / "gguf-py" / "gguf").is_dir():
        raise ConfigError(f"{sdist.name} has no vendor/llama.cpp/{LORA_CONVERTER} with gguf-py; {_checkout_hint('?')}")
    return written


def _checked_checkout(path: Path) -> Path:
    if not (path / LORA_CONVERTER).is_file():
        raise ConfigError(
            f"{CONVERTER_DIR_ENV}={path} has no {LORA_CONVERTER}: point it at the root of a llama.cpp checkout"
        )
    return path


def llama_cpp_converter(cache_dir: Path, version: str | None = None) -> Path:
    """The directory holding llama.cpp's ``convert_lora_to_gguf.py`` (with ``gguf-py`` and ``conversion/``).

    Resolution order: the directory named by ``ANACHRON_LLAMA_CPP_DIR`` when set; else
    ``<cache_dir>/llama.cpp-<version>`` when a previous call completed it; else the sdist of
    ``llama-cpp-python==<version>`` is downloaded into a temporary directory under ``cache_dir``
    (``python -m pip download --no-deps --no-binary :all:``), the converter's files are extracted
    (see the module docstring), the tarball is deleted and the directory renamed into place.

    Args:
        cache_dir: where extracted converters are kept (a few MB each).
        version: llama-cpp-python release to take the converter from; ``None`` means the
            installed one.

    Raises:
        ConfigError: the environment variable names a directory without the converter,
            llama-cpp-python is not installed (and no version given), or pip cannot fetch the sdist
            (the message carries pip's output and says how to use a local checkout instead).
    """
    env_dir = os.environ.get(CONVERTER_DIR_ENV)
    if env_dir:
        return _checked_checkout(Path(env_dir).expanduser())
    version = version or _installed_llama_cpp_version()
    cache_dir = Path(cache_dir)
    target = cache_dir / f"llama.cpp-{version}"
    if (target / _MARKER).is_file():
        return target
    cache_dir.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".llama.cpp-{version}.", suffix=".tmp", dir=cache_dir))
    try:
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
               "--disable-pip-version-check", "-d", str(work / "sdist"), f"llama-cpp-python=={version}"]
        log.info("downloading the llama-cpp-python %s sdist for its LoRA converter", version)
        proc = subprocess.run(cmd, capture_output=True, text=True)
        sdists = sorted((work / "sdist").glob("*.tar.gz")) if proc.returncode == 0 else []
        if not sdists:
            raise ConfigError(
                f"could not download the llama-cpp-python {version} source distribution (which carries llama.cpp's "
                f"{LORA_CONVERTER}) with pip: {_tail(proc.stdout + proc.stderr, 8) or 'no sdist'}; "
                f"check the network / package index, {_checkout_hint(version)}"
            )
        tree = work / "llama.cpp"
        n_files = _extract_converter(sdists[0], tree)
        write_json(
            tree / _MARKER,
            {"llama_cpp_python": version, "sdist": sdists[0].name, "sdist_sha256": sha256_file(sdists[0]),
             "files": n_files, "created_at": utc_now()},
        )
        try:
            os.rename(tree, target)
        except OSError:  # another process finished first, or a stale incomplete directory is in the way
            if not (target / _MARKER).is_file():
                shutil.rmtree(target, ignore_errors=True)
                os.rename(tree, target)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return target


def _check_adapter_config(adapter_dir: Path) -> dict:
    """The adapter's ``adapter_config.json``, refused when llama.cpp would apply it differently from PEFT.

    llama.cpp scales every adapted weight by ``alpha / r``; PEFT's rank-stabilized scaling
    (``use_rslora``: ``alpha / sqrt(r)``), per-module ``rank_pattern`` / ``alpha_pattern`` and DoRA
    would change the outputs silently, so they are errors.
    """
    path = adapter_dir / "adapter_config.json"
    if not path.is_file() or not any((adapter_dir / n).is_file() for n in ("adapter_model.safetensors", "adapter_model.bin")):
        raise ConfigError(f"{adapter_dir} is not a PEFT adapter directory (needs adapter_config.json and adapter_model.safetensors)")
    cfg = json.loads(path.read_text(encoding="utf-8"))
    bad = [k for k in ("use_rslora", "use_dora", "rank_pattern", "alpha_pattern") if cfg.get(k)]
    if cfg.get("peft_type", "LORA") != "LORA":
        bad.append(f"peft_type={cfg.get('peft_type')}")
    if bad:
        raise ConfigError(
            f"LoRA adapter {adapter_dir} uses {', '.join(bad)}, which llama.cpp does not apply like PEFT "
            "(it scales every adapted weight by lora_alpha / r); train without these settings"
        )
    return cfg


def lora_to_gguf(
    adapter_dir: Path, base_dir: Path, out_path: Path, *, converter_dir: Path, outtype: str = "f32"
) -> Path:
    """Convert the PEFT LoRA adapter in ``adapter_dir`` to the GGUF file ``out_path``.

    Runs ``<python> <converter_dir>/convert_lora_to_gguf.py <adapter_dir> --base <base_dir>
    --outfile <tmp> --outtype <outtype>`` with ``<converter_dir>/gguf-py`` first on ``PYTHONPATH``;
    the temporary file beside ``out_path`` is renamed onto it only when the converter succeeds.

    Args:
        adapter_dir: PEFT output (``adapter_config.json`` + ``adapter_model.safetensors``).
        base_dir: the base model as a transformers directory (only its ``config.json`` is read),
            e.g. an export of :func:`anachron.training.weights.export_base_model`.
        out_path: the GGUF file to write.
        converter_dir: from :func:`llama_cpp_converter`.
        outtype: ``"f32"`` (exact) or ``"f16"`` (half the size).

    Returns:
        ``out_path``.

    Raises:
        ConfigError: a missing adapter / base config / converter, an adapter setting llama.cpp
            would apply differently (see ``_check_adapter_config``), or an unknown ``outtype``.
        RuntimeError: the converter failed; the message ends with the tail of its output.
    """
    adapter_dir, base_dir, out_path, converter_dir = (Path(p) for p in (adapter_dir, base_dir, out_path, converter_dir))
    if outtype not in OUTTYPES:
        raise ConfigError(f"unknown adapter GGUF outtype {outtype!r}; use one of {', '.join(OUTTYPES)}")
    _check_adapter_config(adapter_dir)
    if not (base_dir / "config.json").is_file():
        raise ConfigError(f"base model directory {base_dir} has no config.json (export the base model first)")
    _run_converter(converter_dir, LORA_CONVERTER, [str(adapter_dir), "--base", str(base_dir), "--outtype", outtype],
                   out_path, f"adapter {adapter_dir}")
    log.info("converted LoRA adapter %s to %s", adapter_dir, out_path)
    return out_path


def _run_converter(converter_dir: Path, name: str, args: list[str], out_path: Path, what: str) -> None:
    """Run llama.cpp's converter ``name`` of ``converter_dir`` with ``args`` and ``--outfile``, its
    ``gguf-py`` first on ``PYTHONPATH``; the file is renamed onto ``out_path`` only when it succeeds.

    Raises:
        ConfigError: the checkout has no ``name``.
        RuntimeError: the converter failed or wrote nothing; the message ends with the tail of its output.
    """
    script = converter_dir / name
    if not script.is_file():
        raise ConfigError(f"no {name} in {converter_dir}; get it with llama_cpp_converter()")
    env = {k: v for k, v in os.environ.items() if k != "NO_LOCAL_GGUF"}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(converter_dir / "gguf-py"), env.get("PYTHONPATH")) if p)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(out_path) as tmp:
        proc = subprocess.run([sys.executable, str(script), *args, "--outfile", str(tmp)], capture_output=True, text=True, env=env)
        if proc.returncode != 0 or not tmp.is_file() or tmp.stat().st_size == 0:
            raise RuntimeError(f"{name} failed (exit {proc.returncode}) for {what}:\n{_tail(proc.stderr or proc.stdout)}")


#: llama.cpp's full-model converter (kept in the converter checkout), used for vocabulary-only GGUFs.
HF_CONVERTER = "convert_hf_to_gguf.py"


def vocab_gguf(model_dir: Path, out_path: Path, *, converter_dir: Path) -> Path:
    """A vocabulary-only GGUF of the transformers model in ``model_dir``: what the output grammar of
    TEMPO rollouts runs over for a model that has no GGUF (``training.grammar_vocab``,
    docs/methods.md#tempo-grammar).

    Runs ``convert_hf_to_gguf.py --vocab-only`` of ``converter_dir`` (as :func:`lora_to_gguf`);
    written atomically, skipped when ``out_path`` exists.

    Raises:
        ConfigError: no ``config.json`` / tokenizer in ``model_dir``, or no converter.
        RuntimeError: the converter failed (e.g. a tokenizer llama.cpp does not know); the message
            ends with the tail of its output.
    """
    model_dir, out_path, converter_dir = Path(model_dir), Path(out_path), Path(converter_dir)
    if out_path.is_file() and out_path.stat().st_size > 0:
        return out_path
    if not (model_dir / "config.json").is_file():
        raise ConfigError(f"model directory {model_dir} has no config.json")
    _run_converter(converter_dir, HF_CONVERTER, [str(model_dir), "--vocab-only"], out_path, f"the vocabulary of {model_dir}")
    log.info("wrote the vocabulary of %s to %s", model_dir, out_path)
    return out_path

