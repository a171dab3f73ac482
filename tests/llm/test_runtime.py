"""The local-model runtime check (anachron.llm.runtime): a child that crashes, hangs or fails is one
message naming the model, what happened and the fix; the build script and the check agree on the
portable flags; a native crash in a job leaves its Python stack in the rule's log."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from anachron.llm.providers.llama_cpp import gguf_header_problem
from anachron.llm.runtime import (
    BASELINE_CMAKE_ARGS,
    LLAMA_CPP_VERSION,
    PORTABLE_CMAKE_ARGS,
    LocalRuntimeError,
    check_local_models,
    probe_local_model,
    probe_message,
)
from anachron.llm.types import ModelSpec

from conftest import REPO

HAS_LLAMA = importlib.util.find_spec("llama_cpp") is not None

#: A stand-in for llama_cpp whose decode dies as the AMX build did: SIGSEGV inside a native call.
CRASHING = """
import ctypes
def llama_print_system_info():
    return b"CPU : SSE3 = 1 | AVX2 = 1 | AMX_INT8 = 1 | AVX512 = 1 |"
class Llama:
    def __init__(self, **kwargs):
        pass
    def create_completion(self, *args, **kwargs):
        ctypes.string_at(0)  # reads address 0: a segmentation fault in native code
    create_chat_completion = create_completion
"""


def fake_runtime(root: Path, body: str) -> dict[str, str]:
    """Write a package ``llama_cpp`` with ``body`` under ``root``; the environment that imports it first."""
    pkg = root / "llama_cpp"
    pkg.mkdir(parents=True, exist_ok=True)
    (pkg / "__init__.py").write_text(textwrap.dedent(body))
    src = str(REPO / "src")
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), src, os.environ.get("PYTHONPATH", "")])}


def test_portable_flags_and_version_agree_with_the_build_script_and_the_pin():
    script = (REPO / "tools" / "install-llama-cpp.sh").read_text()
    assert f'PORTABLE="{PORTABLE_CMAKE_ARGS}"' in script
    assert "-DGGML_NATIVE=OFF" in PORTABLE_CMAKE_ARGS and "AVX512" not in PORTABLE_CMAKE_ARGS and "AMX" not in PORTABLE_CMAKE_ARGS
    assert f'"llama-cpp-python=={LLAMA_CPP_VERSION}"' in (REPO / "pyproject.toml").read_text()


def test_a_child_that_dies_by_a_signal_is_reported_with_its_stack_and_the_fix(tmp_path):
    env = fake_runtime(tmp_path, CRASHING)
    probe = probe_local_model(tmp_path / "m.gguf", models=["smollm2"], n_ctx=512, env=env)
    assert not probe.ok and probe.signal == "SIGSEGV" and probe.phase == "decode"
    assert probe.is_build_problem
    assert probe.details[0].startswith("Fatal Python error: Segmentation fault")
    assert any("create_completion" in d for d in probe.details)  # the Python frame that crashed
    spec = ModelSpec(name="smollm2", model="local/smollm2-135m-instruct", knowledge_cutoff="2024-06-30",
                     gguf_path=str(tmp_path / "m.gguf"), n_ctx=512)
    with pytest.raises(LocalRuntimeError) as err:
        check_local_models([spec], env=env)
    msg = str(err.value)
    assert msg.startswith("local model check failed before any job started")
    assert "'smollm2'" in msg and "SIGSEGV (Segmentation fault) while decoding" in msg
    assert "AMX_INT8 = 1" in msg  # what the build was compiled with
    assert "probe_endpoints=False" in msg
    assert "make setup LLAMA_NATIVE=0" in probe_message(probe, record="llama-cpp-python 0.3.36 native-0a1b: ...")
    assert PORTABLE_CMAKE_ARGS in probe_message(probe, record=None)
    already = probe_message(probe, record="llama-cpp-python 0.3.36 portable-avx2: CMAKE_ARGS=...")
    assert "already the portable one" in already and BASELINE_CMAKE_ARGS in already


@pytest.mark.parametrize(
    ("error", "key"),
    [("Failed to load model from file: m.gguf", "gguf_path"), ("Failed to create llama_context", "n_ctx")],
)
def test_a_library_error_names_the_config_key_to_change(tmp_path, error, key):
    env = fake_runtime(tmp_path, f"""
        import sys
        def llama_print_system_info():
            return b"CPU : AVX2 = 1 |"
        class Llama:
            def __init__(self, **kwargs):
                print("llama_model_load: error loading model: tensor data is not within file bounds", file=sys.stderr)
                raise ValueError({error!r})
    """)
    probe = probe_local_model(tmp_path / "m.gguf", models=["big"], env=env)
    assert not probe.ok and probe.phase == "load" and probe.signal is None and not probe.is_build_problem
    assert error in probe.problem and "while loading the model" in probe.problem
    assert any("not within file bounds" in d for d in probe.details)  # the library's own message
    spec = ModelSpec(name="big", model="local/x", knowledge_cutoff="2024-06-30", gguf_path=str(tmp_path / "m.gguf"))
    with pytest.raises(LocalRuntimeError, match=rf"Fix: .*models\.big\.{key}"):
        check_local_models([spec], env=env)


def test_a_hung_child_is_killed_and_reported(tmp_path):
    env = fake_runtime(tmp_path, """
        import time
        class Llama:
            def __init__(self, **kwargs):
                time.sleep(60)
    """)
    probe = probe_local_model(tmp_path / "m.gguf", env=env, timeout_s=2)
    assert not probe.ok and probe.timed_out and probe.phase == "load" and probe.is_build_problem
    assert "did not finish within 2 s" in probe.problem


def test_a_runtime_that_cannot_be_imported_is_a_build_problem(tmp_path):
    env = fake_runtime(tmp_path, "raise OSError('libllama.so: cannot open shared object file')\n")
    probe = probe_local_model(tmp_path / "m.gguf", env=env)
    assert not probe.ok and probe.phase == "import" and probe.is_build_problem
    assert "libllama.so" in probe.problem


def test_models_sharing_a_file_are_probed_once_and_other_providers_not_at_all(tmp_path, monkeypatch):
    import anachron.llm.runtime as runtime

    seen = []

    def fake_probe(gguf, **kwargs):
        seen.append((gguf, tuple(kwargs["models"])))
        return runtime.RuntimeProbe(models=tuple(kwargs["models"]), gguf=str(gguf), n_ctx=kwargs["n_ctx"], ok=True, phase="done")

    monkeypatch.setattr(runtime, "probe_local_model", fake_probe)
    gguf = str(tmp_path / "m.gguf")
    specs = [ModelSpec(name=n, model="local/m", knowledge_cutoff="2024-06-30", gguf_path=gguf) for n in ("a", "b")]
    specs.append(ModelSpec(name="remote", model="openai/x", knowledge_cutoff="2024-06-30"))
    notes = check_local_models(specs)
    assert seen == [(gguf, ("a", "b"))] and len(notes) == 1 and "a, b" in notes[0]


def test_a_file_that_is_not_gguf_is_caught_by_its_header(tmp_path):
    html = tmp_path / "model.gguf"
    html.write_text("<html>404 Not Found</html>")
    assert "is not a GGUF file" in gguf_header_problem(html)
    short = tmp_path / "short.gguf"
    short.write_bytes(b"GGUF\x03\x00")
    assert "too short" in gguf_header_problem(short)
    from anachron.llm.providers.llama_cpp import LocalLlamaProvider

    spec = ModelSpec(name="m", model="local/m", knowledge_cutoff="2024-06-30", gguf_path=str(html))
    problems = LocalLlamaProvider.readiness_problems(spec)
    assert any("is not a GGUF file" in p and "models.m.gguf_path" in p for p in problems)


def test_a_native_crash_in_a_job_leaves_the_python_stack_in_the_rules_log(tmp_path):
    """A Snakemake rule whose script segfaults: its log holds faulthandler's stack, and the error that
    Snakemake prints names that log."""
    (tmp_path / "crash.py").write_text(textwrap.dedent("""
        import ctypes
        from anachron.logs import log_to

        def native_call():
            ctypes.string_at(0)

        with log_to(snakemake.log[0]) as log:
            log.info("about to call native code")
            native_call()
    """))
    (tmp_path / "Snakefile").write_text(textwrap.dedent("""
        rule crash:
            output: "out.txt"
            log: "logs/crash.log"
            script: "crash.py"
    """))
    snakemake = str(Path(sys.executable).with_name("snakemake"))
    proc = subprocess.run([snakemake, "--cores", "1", "--directory", str(tmp_path), "-s", str(tmp_path / "Snakefile")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode != 0
    log = (tmp_path / "logs" / "crash.log").read_text()
    assert "about to call native code" in log
    assert "Fatal Python error: Segmentation fault" in log
    assert re.search(r'File ".*crash\.py", line \d+ in native_call', log)
    assert "logs/crash.log" in proc.stdout + proc.stderr


# ------------------------------------------------------------ the real runtime (the SmolLM2 GGUF)

needs_llama = pytest.mark.skipif(not HAS_LLAMA, reason="llama-cpp-python is not installed")


@pytest.mark.local_runtime
@needs_llama
def test_the_installed_runtime_loads_and_decodes_the_default_model():
    from anachron.llm.providers.llama_cpp import default_gguf_path

    probe = probe_local_model(default_gguf_path(), models=["smollm2"], n_ctx=512, n_threads=1)
    assert probe.ok, probe
    assert probe.cpu_features and "AVX2 = 1" in probe.cpu_features


@pytest.mark.local_runtime
@needs_llama
def test_a_truncated_gguf_and_an_impossible_context_fail_with_the_librarys_message(tmp_path):
    from anachron.llm.providers.llama_cpp import default_gguf_path

    real = default_gguf_path()
    cut = tmp_path / "cut.gguf"
    with open(real, "rb") as fh:
        cut.write_bytes(fh.read(4 << 20))  # the header and the first tensors of the file
    assert gguf_header_problem(cut) is None  # the header alone cannot tell
    probe = probe_local_model(cut, models=["cut"], n_ctx=512, n_threads=1)
    assert not probe.ok and probe.phase == "load" and probe.signal is None, probe
    assert "cannot load the model" in probe.problem
    longer = probe_local_model(real, models=["long"], n_ctx=16384, n_threads=1)  # SmolLM2 was trained on 8192
    assert not longer.ok and "larger than the context the model was trained with (8192 tokens)" in longer.problem
    huge = probe_local_model(real, models=["huge"], n_ctx=50_000_000, n_threads=1)
    assert not huge.ok and huge.signal is None and "Failed to create llama_context" in huge.problem, huge
    assert "Fix: lower models.huge.n_ctx" in probe_message(huge)


def test_the_workflow_stops_before_any_job_when_the_local_runtime_crashes(tmp_path):
    """`snakemake` on the default config with a runtime that segfaults: one message before any job
    (the model, the signal, the fix), nothing built."""
    env = fake_runtime(tmp_path / "broken", CRASHING)
    snakemake = str(Path(sys.executable).with_name("snakemake"))
    work = tmp_path / "work"
    proc = subprocess.run(
        [snakemake, "--snakefile", "workflow/Snakefile", "--configfile", "config/config.yaml", "-d", str(work),
         "--cores", "1", "--config", f"snapshot_dir={tmp_path / 'snapshot'}"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=600,
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out[-3000:]
    assert "anachron local model error" in out and "local model check failed before any job started" in out
    assert "'smollm2'" in out and "SIGSEGV" in out and "Fix: " in out and "pip install --force-reinstall" in out
    assert out.count("local model check failed") == 1
    assert not (work / "data").exists() and not (work / "results").exists()


#: Registers and instructions beyond AVX2: AVX-512 (zmm, mask registers), AMX (tiles), AVX-VNNI.
BEYOND_AVX2 = re.compile(r"%zmm\d|%tmm\d|%k[1-7]\b|\b(ldtilecfg|tileloadd|tdpbssd|tdpbf16ps|vpdpbusd)\b")


@pytest.mark.local_runtime
@pytest.mark.skipif(not HAS_LLAMA, reason="llama-cpp-python is not installed")
def test_the_portable_build_holds_no_instruction_beyond_avx2():
    """What `make setup` installs by default runs on any x86-64 CPU with AVX2: its native libraries,
    disassembled, use no AVX-512, AMX or AVX-VNNI instruction (and do use AVX2)."""
    import shutil

    from anachron.llm.runtime import build_record

    record = build_record()
    if not record or " portable-" not in record:
        pytest.skip(f"this environment's llama-cpp-python is not the portable build ({record or 'no build record'})")
    if shutil.which("objdump") is None:
        pytest.skip("needs objdump (binutils)")
    lib = Path(importlib.util.find_spec("llama_cpp").origin).parent / "lib"
    libs = sorted(p for p in lib.glob("lib*.so") if p.is_file())
    assert {p.name for p in libs} >= {"libggml-cpu.so", "libllama.so"}
    ymm = 0
    for so in libs:
        text = subprocess.run(["objdump", "-d", "--no-show-raw-insn", str(so)], capture_output=True, text=True,
                              check=True).stdout
        code = [re.sub(r"<[^>]*>", "", ln) for ln in text.splitlines() if re.match(r"\s+[0-9a-f]+:\t", ln)]
        beyond = [ln.strip() for ln in code if BEYOND_AVX2.search(ln)]
        assert not beyond, f"{so.name}: {len(beyond)} instructions beyond AVX2, e.g. {beyond[:3]}"
        ymm += sum("%ymm" in ln for ln in code)
    assert ymm > 1000  # the AVX2 kernels are there


def test_on_a_machine_where_the_runtime_crashes_only_the_tests_that_need_it_fail(tmp_path):
    """pytest with a runtime that segfaults: the tests marked local_runtime fail with the check's
    explanation, the others pass, and pytest itself is not killed."""
    env = fake_runtime(tmp_path, CRASHING)
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "not live",
         "tests/llm/test_llama_cpp.py::test_json_schema_output_parses", "tests/test_money.py"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=600,
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out[-3000:]  # tests failed; not a process killed by a signal
    assert re.search(r"\d+ passed, 1 error", out), out[-2000:]  # failed in its set-up, with the reason
    assert "local model check failed before the tests that need it" in out
    assert "SIGSEGV (Segmentation fault)" in out and "Fix: " in out


def test_the_logs_of_a_failed_invocation_that_hold_a_native_crash_are_named(tmp_path):
    from anachron.logs import native_crash_logs

    logs = tmp_path / "logs"
    (logs / "run_method" / "stock").mkdir(parents=True)
    crash = logs / "run_method" / "stock" / "m.log"
    crash.write_text("INFO start\nFatal Python error: Segmentation fault\n\nThread 0x1 (most recent call first):\n"
                     '  File "/venv/lib/python3.11/site-packages/llama_cpp/_internals.py", line 300 in decode\n'
                     '  File "/src/anachron/llm/providers/llama_cpp.py", line 380 in _complete_sync\n')
    other = logs / "shapley.log"
    other.write_text('Fatal Python error: Aborted\n  File "/src/anachron/llm/providers/llama_cpp.py", line 1 in f\n')
    clean = logs / "verify.log"
    clean.write_text("INFO all fine\n")
    old = logs / "old.log"
    old.write_text("Fatal Python error: Segmentation fault\n")
    os.utime(old, (1_000_000, 1_000_000))
    found = native_crash_logs(logs, since=2_000_000)
    assert found == [(crash, "Fatal Python error: Segmentation fault", True), (other, "Fatal Python error: Aborted", False)]
    assert native_crash_logs(tmp_path / "absent") == []
