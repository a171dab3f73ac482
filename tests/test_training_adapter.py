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
from anachron.training.weights import MANIFEST_NAME, base_manifest, export_base_model, load_base_model

HAS_TRAIN = all(importlib.util.find_spec(m) is not None for m in ("torch", "transformers", "peft", "gguf", "tokenizers"))
needs_train = pytest.mark.skipif(not HAS_TRAIN, reason="needs the training extra (pip install -e '.[train]')")
needs_llama = pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None, reason="needs llama-cpp-python")

TARGETS = ("q_proj", "v_proj")
N_LAYERS = 2
TEXT = "the court ruled on the case in 2019"


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

def _tiny_tokenizer_json(path: Path) -> dict:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=300, special_tokens=["<|endoftext|>", "<|im_start|>", "<|im_end|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False,
    )
    tok.train_from_iterator([TEXT, "stocks rose after the earnings report"] * 5, trainer)
    tok.save(str(path))
    return json.loads(path.read_text())


#: HF Llama module -> GGUF tensor name inside block i.
_GGUF_BLOCK_NAMES = {
    "self_attn.q_proj": "attn_q", "self_attn.k_proj": "attn_k", "self_attn.v_proj": "attn_v",
    "self_attn.o_proj": "attn_output", "mlp.gate_proj": "ffn_gate", "mlp.up_proj": "ffn_up",
    "mlp.down_proj": "ffn_down", "input_layernorm": "attn_norm", "post_attention_layernorm": "ffn_norm",
}


def write_tiny_gguf(path: Path, seed: int = 0) -> Path:
    """A random float32 Llama (hidden 64, 2 layers, 4 heads / 2 KV heads, vocab 300) as a GGUF with a
    byte-level BPE tokenizer, written with gguf's writer in the layout of the SmolLM2 GGUF."""
    import gguf
    import torch

    tj = _tiny_tokenizer_json(path.with_suffix(".tokenizer.json"))
    vocab = tj["model"]["vocab"]
    tokens = sorted(vocab, key=vocab.get)
    gen = torch.Generator().manual_seed(seed)
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_name("tiny")
    w.add_context_length(256)
    w.add_embedding_length(64)
    w.add_block_count(N_LAYERS)
    w.add_feed_forward_length(128)
    w.add_head_count(4)
    w.add_head_count_kv(2)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_rope_freq_base(10000.0)
    w.add_vocab_size(len(tokens))
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("default")
    w.add_token_list(tokens)
    w.add_token_types([3 if t.startswith("<|") else 1 for t in tokens])
    w.add_token_merges([m if isinstance(m, str) else " ".join(m) for m in tj["model"]["merges"]])
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_pad_token_id(2)
    w.add_unk_token_id(0)

    def rand(*shape: int):
        return (torch.randn(*shape, generator=gen) * 0.1).numpy()

    w.add_tensor("token_embd.weight", rand(len(tokens), 64))
    w.add_tensor("output_norm.weight", (1 + rand(64)).astype("float32"))
    shapes = {"attn_q": (64, 64), "attn_k": (32, 64), "attn_v": (32, 64), "attn_output": (64, 64),
              "ffn_gate": (128, 64), "ffn_up": (128, 64), "ffn_down": (64, 128), "attn_norm": (64,), "ffn_norm": (64,)}
    for i in range(N_LAYERS):
        for name in _GGUF_BLOCK_NAMES.values():
            t = rand(*shapes[name])
            w.add_tensor(f"blk.{i}.{name}.weight", (1 + t) if name.endswith("norm") else t)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


@pytest.fixture(scope="module")
def torch_1thread():
    torch = pytest.importorskip("torch")
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield torch
    torch.set_num_threads(n)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory, torch_1thread):
    """``(gguf_path, export_dir)`` of the tiny model, exported once for the module."""
    if not HAS_TRAIN:
        pytest.skip("needs the training extra")
    root = tmp_path_factory.mktemp("tiny")
    gguf_path = write_tiny_gguf(root / "tiny.gguf")
    return gguf_path, export_base_model(gguf_path, root / "base")


# ---------------------------------------------------------------- base-model export

@needs_train
def test_export_writes_a_reloadable_float32_model(tiny):
    gguf_path, base = tiny
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
def test_export_is_skipped_when_up_to_date_and_redone_for_another_gguf(tiny, tmp_path, monkeypatch):
    gguf_path, base = tiny
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
def test_interrupted_export_leaves_nothing(tiny, tmp_path, monkeypatch):
    gguf_path, _ = tiny
    import transformers

    def boom(self, *a, **k):
        (Path(a[0]) / "model.safetensors").write_bytes(b"half")
        raise KeyboardInterrupt

    monkeypatch.setattr(transformers.PreTrainedModel, "save_pretrained", boom)
    with pytest.raises(KeyboardInterrupt):
        export_base_model(gguf_path, tmp_path / "base")
    assert list(tmp_path.iterdir()) == []


@needs_train
def test_export_refuses_bad_inputs(tiny, tmp_path):
    gguf_path, base = tiny
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
def tiny_lora(tiny, tmp_path_factory):
    """A PEFT LoRA (r=4, alpha=8, q_proj + v_proj) on the exported tiny model, with random B so it
    changes the outputs: ``(adapter_dir, peft_model)``."""
    import torch
    from peft import LoraConfig, get_peft_model

    _, base = tiny
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
def test_lora_to_gguf_writes_a_llama_cpp_lora_adapter(tiny, tiny_lora, converter_dir, tmp_path):
    import gguf

    _, base = tiny
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
def test_converter_failure_carries_its_output(tiny, tiny_lora, converter_dir, tmp_path):
    _, base = tiny
    adapter, _ = tiny_lora
    odd = tmp_path / "odd_base"
    odd.mkdir()
    cfg = json.loads((base / "config.json").read_text())
    (odd / "config.json").write_text(json.dumps({**cfg, "architectures": ["NoSuchModelForCausalLM"]}))
    with pytest.raises(RuntimeError, match=r"(?s)convert_lora_to_gguf.py failed.*NoSuchModelForCausalLM"):
        lora_to_gguf(adapter, odd, tmp_path / "adapter.gguf", converter_dir=converter_dir)
    assert not any(tmp_path.glob("*adapter.gguf*"))


@pytest.mark.slow
@needs_train
@needs_llama
def test_llama_cpp_with_the_adapter_matches_peft(tiny, tiny_lora, converter_dir, tmp_path):
    """The whole chain: GGUF -> export -> PEFT LoRA -> GGUF adapter -> llama.cpp gives PEFT's logits."""
    import numpy as np
    import torch
    from llama_cpp import Llama

    gguf_path, base = tiny
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
