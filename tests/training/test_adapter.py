"""TEMPO's inference side: the training extra check, the base-model export, the LoRA -> GGUF
conversion and the adapter in the llama.cpp provider and the LLM cache key.

Everything runs on a tiny randomly initialised Llama (hidden 64, 2 layers, a 300-token byte-level
BPE tokenizer trained here), written as a GGUF with gguf's writer; never the real weights. Tests
that need llama.cpp's converter (the llama-cpp-python sdist, ~77 MB, or a checkout named by
ANACHRON_LLAMA_CPP_DIR) are marked slow.
"""

from __future__ import annotations

import asyncio
import importlib.util
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from anachron.errors import ConfigError
from anachron.llm.cache import cache_key
from anachron.llm.client import CallLog, LLMClient
from anachron.llm.providers import LocalLlamaProvider, check_provider_ready
from anachron.llm.providers.mock import MockProvider
from anachron.llm.types import ChatRequest, ModelSpec
from anachron.training import export as export_mod
from anachron.training import extra as extra_mod
from anachron.training.export import CONVERTER_DIR_ENV, llama_cpp_converter, lora_to_gguf
from anachron.training.extra import require_training_extra, training_extra_problems
from anachron.training.weights import base_manifest, export_base_model, load_base_model
from conftest import HAS_TRAIN, TINY_LAYERS as N_LAYERS, TINY_TEXT as TEXT, write_tiny_gguf

needs_train = pytest.mark.skipif(not HAS_TRAIN, reason="needs the training extra (pip install -e '.[train]')")
needs_llama = pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None, reason="needs llama-cpp-python")

TARGETS = ("q_proj", "v_proj")


# ---------------------------------------------------------------- the training extra

def test_missing_modules_are_named_in_one_message(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(extra_mod.importlib.util, "find_spec",
                        lambda name, *a: None if name in ("torch", "peft") else real(name, *a))
    assert training_extra_problems() == ["torch", "peft"]
    with pytest.raises(ConfigError) as ei:
        require_training_extra()
    msg = str(ei.value)
    assert "torch, peft" in msg and "trl" not in msg
    assert "pip install -e '.[train]'" in msg and "make setup-train" in msg


def test_nothing_missing_raises_nothing(monkeypatch):
    monkeypatch.setattr(extra_mod.importlib.util, "find_spec", lambda name, *a: object())
    assert training_extra_problems() == []
    require_training_extra()


# ---------------------------------------------------------------- adapter in spec, provider and cache key

def _local_spec(**kw) -> ModelSpec:
    return ModelSpec(name="smollm2", model="local/smollm2-135m-instruct", knowledge_cutoff="2024-06-30",
                     params={"temperature": 0, "max_tokens": 64}, **kw)


def _client(spec: ModelSpec) -> LLMClient:
    mock = MockProvider(ModelSpec(name="m", model="mock/echo", knowledge_cutoff="2024-01-01"))
    return LLMClient(spec, None, CallLog(), provider=mock)


REQUEST = ChatRequest(
    messages=[{"role": "user", "content": "When did it happen?"}], params={"seed": 3},
    response_schema={"type": "object", "properties": {"b": {"type": "string"}, "a": {"type": "integer"}}},
    sample_index=1,
)


def test_key_without_adapter_is_unchanged():
    # computed with the code before ModelSpec had lora_path: existing caches stay valid
    assert _client(_local_spec()).key_for(REQUEST) == "37efc09ae8fd82fbec413a4c76fd6b794ae594208de4857eb2e12bedf58d9534"
    assert cache_key("local", "m", REQUEST.messages, None, None) == cache_key("local", "m", REQUEST.messages, None, None, adapter=None)


def test_key_follows_the_adapter_content(tmp_path):
    a, a_copy, b = tmp_path / "a.gguf", tmp_path / "elsewhere.gguf", tmp_path / "b.gguf"
    a.write_bytes(b"adapter one")
    a_copy.write_bytes(b"adapter one")
    b.write_bytes(b"adapter two")
    plain = _client(_local_spec()).key_for(REQUEST)
    key_a = _client(_local_spec(lora_path=str(a))).key_for(REQUEST)
    assert key_a != plain
    assert _client(_local_spec(lora_path=str(a_copy))).key_for(REQUEST) == key_a  # content, not path
    assert _client(_local_spec(lora_path=str(b))).key_for(REQUEST) not in (plain, key_a)
    # the digest is read once per client: a retrained file is seen by the next client
    client = _client(_local_spec(lora_path=str(a)))
    assert client.key_for(REQUEST) == key_a
    a.write_bytes(b"adapter retrained")
    assert client.key_for(REQUEST) == key_a
    assert _client(_local_spec(lora_path=str(a))).key_for(REQUEST) not in (plain, key_a)


def test_adapter_digest_is_recorded_with_the_cached_answer(tmp_path):
    from anachron.llm.cache import LLMCache

    lora = tmp_path / "a.gguf"
    lora.write_bytes(b"adapter one")
    client = LLMClient(_local_spec(lora_path=str(lora)), LLMCache(tmp_path / "cache"), CallLog(),
                       provider=MockProvider(ModelSpec(name="m", model="mock/echo", knowledge_cutoff="2024-01-01")))
    result = client.complete_many([ChatRequest(messages=[{"role": "user", "content": "hi"}])], progress=False)[0]
    record = client.cache.get(result.cache_key)
    assert record["adapter"] == client.adapter_digest and record["adapter"].startswith("sha256:")


def test_missing_adapter_file_names_the_config_key(tmp_path):
    spec = _local_spec(lora_path=str(tmp_path / "nope.gguf"))
    problems = LocalLlamaProvider.readiness_problems(spec)
    assert any("LoRA adapter file not found" in p and "models.smollm2.lora_path" in p for p in problems)
    with pytest.raises(ConfigError, match=r"models\.smollm2\.lora_path"):
        check_provider_ready(spec)
    with pytest.raises(ConfigError, match=r"models\.smollm2\.lora_path"):
        _client(spec).key_for(REQUEST)
    with pytest.raises(ConfigError, match=r"models\.smollm2\.lora_path"):
        asyncio.run(LocalLlamaProvider(spec).complete(ChatRequest(messages=[{"role": "user", "content": "x"}])))
    assert not any("lora" in p.lower() for p in LocalLlamaProvider.readiness_problems(_local_spec()))


def test_lora_path_is_for_local_models_only():
    with pytest.raises(ConfigError, match=r"models\.x\.lora_path"):
        ModelSpec.from_config("x", {"model": "openai/some-model", "knowledge_cutoff": "2024-01-01", "lora_path": "a.gguf"})
    assert ModelSpec.from_config("x", {"model": "local/m", "knowledge_cutoff": "2024-01-01", "lora_path": "~/a.gguf"}).adapter_path == Path("~/a.gguf").expanduser()


def test_provider_hands_the_adapter_to_llama_cpp(tmp_path, monkeypatch):
    llama_cpp = pytest.importorskip("llama_cpp")
    seen: dict = {}

    class FakeLlama:
        def __init__(self, **kwargs):
            seen.update(kwargs)

    monkeypatch.setattr(llama_cpp, "Llama", FakeLlama)
    gguf_file, lora = tmp_path / "m.gguf", tmp_path / "a.gguf"
    gguf_file.write_bytes(b"x")
    lora.write_bytes(b"y")
    LocalLlamaProvider(_local_spec(gguf_path=str(gguf_file), lora_path=str(lora))).load()
    assert seen["model_path"] == str(gguf_file) and seen["lora_path"] == str(lora)
    seen.clear()
    LocalLlamaProvider(_local_spec(gguf_path=str(gguf_file))).load()
    assert seen["lora_path"] is None


# ---------------------------------------------------------------- tiny model fixtures

# ---------------------------------------------------------------- base-model export

@needs_train
def test_export_writes_a_reloadable_float32_model(tiny_model):
    gguf_path, base = tiny_model
    import torch
    from transformers import AutoModelForCausalLM

    manifest = base_manifest(base)
    assert manifest["gguf_sha256"] == export_mod.sha256_file(gguf_path)
    assert manifest["gguf_size_bytes"] == gguf_path.stat().st_size and manifest["source_gguf"] == str(gguf_path.resolve())
    assert manifest["versions"]["transformers"] and manifest["versions"]["torch"]
    assert {"config.json", "model.safetensors", "tokenizer.json"} <= set(manifest["files"])
    assert "quantization_config" not in json.loads((base / "config.json").read_text())

    model, tokenizer = load_base_model(base)
    ref = AutoModelForCausalLM.from_pretrained(str(gguf_path.parent), gguf_file=gguf_path.name, dtype=torch.float32)
    assert model.dtype == torch.float32 and model.config.hidden_size == 64
    for (name, p), (_, q) in zip(model.state_dict().items(), ref.state_dict().items()):
        assert torch.equal(p, q), name
    assert tokenizer.decode(tokenizer.encode(TEXT, add_special_tokens=False)) == TEXT
    assert len(tokenizer) == model.config.vocab_size == 300


@needs_train
def test_export_is_skipped_when_up_to_date_and_redone_for_another_gguf(tiny_model, tmp_path, monkeypatch):
    gguf_path, base = tiny_model
    out = tmp_path / "base"
    shutil.copytree(base, out)
    import transformers

    def refuse(*a, **k):
        raise AssertionError("the GGUF was loaded again")

    with monkeypatch.context() as m:
        m.setattr(transformers.AutoModelForCausalLM, "from_pretrained", refuse)
        assert export_base_model(gguf_path, out) == out  # same digest: nothing loaded

    other = write_tiny_gguf(tmp_path / "other.gguf", seed=1)
    export_base_model(other, out)
    assert base_manifest(out)["gguf_sha256"] == export_mod.sha256_file(other)
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temp or old dirs left


@needs_train
def test_interrupted_export_leaves_nothing(tiny_model, tmp_path, monkeypatch):
    gguf_path, _ = tiny_model
    import transformers

    def boom(self, *a, **k):
        (Path(a[0]) / "model.safetensors").write_bytes(b"half")
        raise KeyboardInterrupt

    monkeypatch.setattr(transformers.PreTrainedModel, "save_pretrained", boom)
    with pytest.raises(KeyboardInterrupt):
        export_base_model(gguf_path, tmp_path / "base")
    assert list(tmp_path.iterdir()) == []


@needs_train
def test_export_refuses_bad_inputs(tiny_model, tmp_path):
    gguf_path, base = tiny_model
    with pytest.raises(ConfigError, match=r"not found at .*missing\.gguf.*gguf_path"):
        export_base_model(tmp_path / "missing.gguf", tmp_path / "out")
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine")
    with pytest.raises(ConfigError, match="not a base-model export"):
        export_base_model(gguf_path, foreign)
    assert (foreign / "notes.txt").read_text() == "mine"
    with pytest.raises(ConfigError, match="not a complete base-model export"):
        load_base_model(foreign)
    broken = tmp_path / "broken"
    shutil.copytree(base, broken)
    (broken / "model.safetensors").write_bytes(b"truncated")
    with pytest.raises(ConfigError, match="not a complete base-model export"):
        load_base_model(broken)
    export_base_model(gguf_path, broken)  # a damaged export is redone
    assert base_manifest(broken)["files"] == base_manifest(base)["files"]
    with pytest.raises(ConfigError, match="unknown torch dtype"):
        load_base_model(base, dtype="float33")


# ---------------------------------------------------------------- the converter directory

def _fake_sdist(path: Path, version: str) -> Path:
    top = f"llama_cpp_python-{version}/vendor/llama.cpp"
    files = {
        f"{top}/convert_lora_to_gguf.py": b"print('lora')\n",
        f"{top}/convert_hf_to_gguf.py": b"print('hf')\n",
        f"{top}/LICENSE": b"MIT\n",
        f"{top}/conversion/__init__.py": b"",
        f"{top}/gguf-py/gguf/__init__.py": b"",
        f"{top}/ggml/src/ggml.c": b"int x;\n",
        f"{top}/README.md": b"readme\n",
        f"llama_cpp_python-{version}/llama_cpp/llama.py": b"",
    }
    with tarfile.open(path, "w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        link = tarfile.TarInfo(f"{top}/gguf-py/evil")
        link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
        tar.addfile(link)
    return path


def test_converter_is_downloaded_once_and_trimmed(tmp_path, monkeypatch):
    monkeypatch.delenv(CONVERTER_DIR_ENV, raising=False)
    calls: list[list[str]] = []

    def fake_run(cmd, **kwargs):
        calls.append(cmd)
        dest = Path(cmd[cmd.index("-d") + 1])
        dest.mkdir(parents=True)
        _fake_sdist(dest / "llama_cpp_python-9.9.9.tar.gz", "9.9.9")
        return subprocess.CompletedProcess(cmd, 0, "Saved\n", "")

    monkeypatch.setattr(export_mod.subprocess, "run", fake_run)
    conv = llama_cpp_converter(tmp_path, version="9.9.9")
    assert conv == tmp_path / "llama.cpp-9.9.9"
    assert calls[0][:3] == [sys.executable, "-m", "pip"] and "llama-cpp-python==9.9.9" in calls[0]
    assert {"--no-deps", ":all:"} <= set(calls[0])
    kept = sorted(str(p.relative_to(conv)) for p in conv.rglob("*") if p.is_file() or p.is_symlink())
    assert kept == ["LICENSE", "anachron_converter.json", "conversion/__init__.py", "convert_hf_to_gguf.py",
                    "convert_lora_to_gguf.py", "gguf-py/gguf/__init__.py"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["llama.cpp-9.9.9"]  # tarball and work dir gone
    assert llama_cpp_converter(tmp_path, version="9.9.9") == conv and len(calls) == 1


def test_converter_download_failure_says_what_to_do(tmp_path, monkeypatch):
    monkeypatch.delenv(CONVERTER_DIR_ENV, raising=False)
    monkeypatch.setattr(export_mod.subprocess, "run",
                        lambda cmd, **k: subprocess.CompletedProcess(cmd, 1, "", "ERROR: No matching distribution"))
    with pytest.raises(ConfigError) as ei:
        llama_cpp_converter(tmp_path, version="9.9.9")
    assert "No matching distribution" in str(ei.value) and CONVERTER_DIR_ENV in str(ei.value)
    assert list(tmp_path.iterdir()) == []


def test_converter_checkout_from_the_environment_wins(tmp_path, monkeypatch):
    monkeypatch.setattr(export_mod.subprocess, "run", lambda *a, **k: pytest.fail("no download with a checkout"))
    checkout = tmp_path / "llama.cpp"
    checkout.mkdir()
    monkeypatch.setenv(CONVERTER_DIR_ENV, str(checkout))
    with pytest.raises(ConfigError, match=f"{CONVERTER_DIR_ENV}=.*convert_lora_to_gguf.py"):
        llama_cpp_converter(tmp_path / "cache")
    (checkout / "convert_lora_to_gguf.py").write_text("")
    assert llama_cpp_converter(tmp_path / "cache") == checkout


def _write_adapter_config(d: Path, **cfg) -> Path:
    d.mkdir(parents=True, exist_ok=True)
    (d / "adapter_config.json").write_text(json.dumps({"peft_type": "LORA", "r": 4, "lora_alpha": 8, **cfg}))
    (d / "adapter_model.safetensors").write_bytes(b"")
    return d


def test_adapter_settings_llama_cpp_would_apply_differently_are_refused(tmp_path):
    base = tmp_path / "base"
    base.mkdir()
    (base / "config.json").write_text("{}")
    for cfg in ({"use_rslora": True}, {"alpha_pattern": {"q_proj": 4}}, {"use_dora": True}):
        with pytest.raises(ConfigError, match=next(iter(cfg))):
            lora_to_gguf(_write_adapter_config(tmp_path / "a", **cfg), base, tmp_path / "a.gguf", converter_dir=tmp_path)
    with pytest.raises(ConfigError, match="not a PEFT adapter directory"):
        lora_to_gguf(tmp_path / "nothing", base, tmp_path / "a.gguf", converter_dir=tmp_path)
    with pytest.raises(ConfigError, match="outtype"):
        lora_to_gguf(_write_adapter_config(tmp_path / "b"), base, tmp_path / "a.gguf", converter_dir=tmp_path, outtype="q4_0")
    assert not (tmp_path / "a.gguf").exists()


# ---------------------------------------------------------------- the real converter (slow)

@pytest.fixture(scope="session")
def converter_dir(tmp_path_factory) -> Path:
    """llama.cpp's converter: ANACHRON_LLAMA_CPP_DIR, else the sdist of the installed llama-cpp-python
    (downloaded once per session)."""
    if importlib.util.find_spec("llama_cpp") is None and not os.environ.get(CONVERTER_DIR_ENV):
        pytest.skip("needs llama-cpp-python (or ANACHRON_LLAMA_CPP_DIR)")
    return llama_cpp_converter(tmp_path_factory.mktemp("llama_cpp_converter"))


@pytest.fixture(scope="module")
def tiny_lora(tiny_model, tmp_path_factory):
    """A PEFT LoRA (r=4, alpha=8, q_proj + v_proj) on the exported tiny model, with random B so it
    changes the outputs: ``(adapter_dir, peft_model)``."""
    import torch
    from peft import LoraConfig, get_peft_model

    _, base = tiny_model
    model, _ = load_base_model(base)
    torch.manual_seed(1)
    peft_model = get_peft_model(model, LoraConfig(r=4, lora_alpha=8, target_modules=list(TARGETS), lora_dropout=0.0))
    with torch.no_grad():
        for name, p in peft_model.named_parameters():
            if "lora_B" in name:
                p.normal_(0.0, 0.3)
    out = tmp_path_factory.mktemp("lora") / "adapter"
    peft_model.save_pretrained(str(out))
    peft_model.eval()
    return out, peft_model


@pytest.mark.slow
@needs_train
def test_lora_to_gguf_writes_a_llama_cpp_lora_adapter(tiny_model, tiny_lora, converter_dir, tmp_path):
    import gguf

    _, base = tiny_model
    adapter, _ = tiny_lora
    out = lora_to_gguf(adapter, base, tmp_path / "adapter.gguf", converter_dir=converter_dir)
    reader = gguf.GGUFReader(str(out))
    assert reader.fields["general.type"].contents() == "adapter"
    assert reader.fields["adapter.type"].contents() == "lora"
    assert reader.fields["adapter.lora.alpha"].contents() == pytest.approx(8.0)
    shapes = {t.name: tuple(int(s) for s in t.shape) for t in reader.tensors}
    expected = {f"blk.{i}.{g}.weight.lora_{ab}" for i in range(N_LAYERS) for g in ("attn_q", "attn_v") for ab in "ab"}
    assert set(shapes) == expected
    assert shapes["blk.0.attn_q.weight.lora_a"] == (64, 4) and shapes["blk.0.attn_v.weight.lora_b"] == (4, 32)
    assert [p.name for p in tmp_path.iterdir()] == ["adapter.gguf"]


@pytest.mark.slow
@needs_train
def test_converter_failure_carries_its_output(tiny_model, tiny_lora, converter_dir, tmp_path):
    _, base = tiny_model
    adapter, _ = tiny_lora
    odd = tmp_path / "odd_base"
    odd.mkdir()
    cfg = json.loads((base / "config.json").read_text())
    (odd / "config.json").write_text(json.dumps({**cfg, "architectures": ["NoSuchModelForCausalLM"]}))
    with pytest.raises(RuntimeError, match=r"(?s)convert_lora_to_gguf.py failed.*NoSuchModelForCausalLM"):
        lora_to_gguf(adapter, odd, tmp_path / "adapter.gguf", converter_dir=converter_dir)
    assert not any(tmp_path.glob("*adapter.gguf*"))


@pytest.mark.slow
@pytest.mark.local_runtime
@needs_train
@needs_llama
def test_llama_cpp_with_the_adapter_matches_peft(tiny_model, tiny_lora, converter_dir, tmp_path):
    """The whole chain: GGUF -> export -> PEFT LoRA -> GGUF adapter -> llama.cpp gives PEFT's logits."""
    import numpy as np
    import torch
    from llama_cpp import Llama

    gguf_path, base = tiny_model
    adapter, peft_model = tiny_lora
    lora = lora_to_gguf(adapter, base, tmp_path / "adapter.gguf", converter_dir=converter_dir)
    _, tokenizer = load_base_model(base)
    ids = tokenizer.encode(TEXT, add_special_tokens=False)
    with torch.no_grad():
        peft_logits = peft_model(torch.tensor([ids])).logits[0].numpy()
        with peft_model.disable_adapter():
            base_logits = peft_model(torch.tensor([ids])).logits[0].numpy()

    def llama_logits(lora_path):
        llm = Llama(model_path=str(gguf_path), lora_path=lora_path, n_ctx=64, n_threads=1, logits_all=True, verbose=False)
        llm.eval(ids)
        return np.array(llm.scores[: len(ids)])

    with_adapter, without = llama_logits(str(lora)), llama_logits(None)
    assert np.abs(peft_logits - base_logits).max() > 0.1  # the adapter matters
    assert np.abs(with_adapter - peft_logits).max() < 2e-3
    assert np.abs(without - base_logits).max() < 2e-3

    # and through the provider, as the `tempo` method runs it: greedy answers change with the adapter
    def answer(lora_path):
        spec = ModelSpec(name="tiny", model="local/tiny", knowledge_cutoff="2024-01-01", gguf_path=str(gguf_path),
                         lora_path=lora_path, n_ctx=64, n_threads=1, params={"temperature": 0.0, "max_tokens": 8})
        request = ChatRequest(messages=[{"role": "user", "content": TEXT}])
        result = asyncio.run(LocalLlamaProvider(spec).complete(request))
        assert result.ok, result.error
        return result.text

    assert answer(str(lora)) != answer(None)


def test_vocab_gguf_needs_a_model_directory_and_a_converter(tmp_path):
    from anachron.training.export import vocab_gguf

    with pytest.raises(ConfigError, match="config.json"):
        vocab_gguf(tmp_path, tmp_path / "v.gguf", converter_dir=tmp_path)
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(ConfigError, match="convert_hf_to_gguf.py"):
        vocab_gguf(tmp_path, tmp_path / "v.gguf", converter_dir=tmp_path)
    assert not (tmp_path / "v.gguf").exists()
