"""Shared fixtures: a tiny, synthetic snapshot directory laid out like the real sources."""

from __future__ import annotations

import gzip
import importlib.util
import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

REPO = Path(__file__).resolve().parents[1]
#: tests/ (its fixtures/ and plugins/ folders).
TESTS = Path(__file__).resolve().parent


def edgar_row(cik, name, concept, val, start, end, fy, fp, form, filed, accn, unit="USD") -> dict:
    """One row of an EDGAR point-in-time facts table (``anachron.sources.edgar``'s columns before
    ``add_revisions``), for grounded-check fixtures."""
    return {
        "cik": cik, "entity_name": name, "taxonomy": "us-gaap", "concept": concept, "label": concept,
        "unit": unit, "val": float(val), "start": start, "end": end, "fy": fy, "fp": fp, "form": form,
        "filed": filed, "accn": accn, "frame": None,
    }

#: ticker -> (name, sector, start_date, end_date or "")
E2E_MEMBERS = {
    "ALFA": ("Alfa Energy Co", "Energy", "2005-01-03", ""),
    "BRVO": ("Bravo Oil Corp", "Energy", "2010-06-01", ""),
    "CHRL": ("Charlie Drilling Inc", "Energy", "2001-02-01", ""),
    "DLTA": ("Delta Pipelines", "Energy", "2012-03-15", "2020-03-20"),  # removed after the cutoff: still in
    "ECHO": ("Echo Refining", "Energy", "2015-01-02", ""),
    "FXTR": ("Foxtrot Gas", "Energy", "2019-12-20", ""),  # added after the cutoff: out
    "GOLF": ("Golf Petroleum", "Energy", "2003-01-02", "2019-10-01"),  # removed before the cutoff: out
    "HTLX": ("Hotel Exploration", "Energy", "2011-05-02", ""),
    "INDA": ("India Airlines", "Industrials", "2004-01-02", ""),
    "JLTT": ("Juliett Rail", "Industrials", "2006-01-03", ""),
    "KILO": ("Kilo Machines", "Industrials", "2007-01-03", ""),
    "LIMA": ("Lima Aerospace", "Industrials", "2008-01-02", ""),
    "MIKE": ("Mike Freight", "Industrials", "2009-01-02", ""),
}


def write_fixture_snapshot(root: Path, seed: int = 7) -> Path:
    """Write a synthetic snapshot (yahoo prices, sp500 spells/changes/sectors) under ``root``."""
    rng = np.random.default_rng(seed)
    days = pd.bdate_range("2019-06-03", "2020-07-31")
    rows = []
    for ticker in E2E_MEMBERS:
        steps = rng.normal(0.0, 0.02, size=len(days))
        close = 40.0 * np.exp(np.cumsum(steps))
        for d, c in zip(days, close):
            rows.append((ticker, d.strftime("%Y-%m-%d"), c, c * 1.01, c * 0.99, c, c * 0.97, 1_000_000))
    prices = pd.DataFrame(rows, columns=["ticker", "date", "open", "high", "low", "close", "adj_close", "volume"])
    (root / "yahoo").mkdir(parents=True, exist_ok=True)
    with gzip.open(root / "yahoo" / "prices_daily_2019-06-03_2020-07-31.csv.gz", "wt") as fh:
        prices.to_csv(fh, index=False, float_format="%.6f")
    (root / "yahoo" / "missing_tickers.txt").write_text("")
    sp = root / "sp500"
    sp.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(
        [(t, s, e) for t, (_, _, s, e) in E2E_MEMBERS.items()], columns=["ticker", "start_date", "end_date"]
    ).to_csv(sp / "sp500_ticker_start_end.csv", index=False)
    pd.DataFrame([("2019-12-20", "FXTR", "XXXX"), ("2020-03-20", "YYYY", "DLTA")], columns=["date", "add", "remove"]).to_csv(
        sp / "sp500_changes_since_2019.csv", index=False
    )
    pd.DataFrame(
        [(t, n, s) for t, (n, s, _, e) in E2E_MEMBERS.items() if t != "GOLF"], columns=["Symbol", "Name", "Sector"]
    ).to_csv(sp / "constituents_2020-01-10.csv", index=False)
    return root


_RUNTIME_CHECK: dict[str, str | None] = {}


def local_runtime_problem() -> str | None:
    """Why the installed llama-cpp-python cannot load and decode the default SmolLM2 GGUF here, or
    None when it can (or when it is not installed: those tests skip themselves). Checked once per
    session in a child process (anachron.llm.runtime), so a runtime that crashes on this CPU fails
    the tests that need it with the explanation instead of killing pytest."""
    if "problem" not in _RUNTIME_CHECK:
        problem = None
        if importlib.util.find_spec("llama_cpp") is not None:
            from anachron.errors import AnachronError
            from anachron.llm.runtime import SKIP_HINT, check_local_models
            from anachron.llm.types import ModelSpec

            spec = ModelSpec(name="smollm2", model="local/smollm2-135m-instruct", knowledge_cutoff="2024-06-30",
                             n_ctx=512, n_threads=1)
            try:
                check_local_models([spec])
            except AnachronError as exc:
                problem = str(exc).replace("before any job started", "before the tests that need it")
                problem = problem.replace(f"\n({SKIP_HINT})", "")
        _RUNTIME_CHECK["problem"] = problem
    return _RUNTIME_CHECK["problem"]


def pytest_runtest_setup(item):
    """Tests marked ``local_runtime`` run only where the local-model runtime works; elsewhere they fail
    with the check's message (what happened, and the rebuild command) and the other tests still run."""
    if item.get_closest_marker("local_runtime") is not None:
        problem = local_runtime_problem()
        if problem:
            pytest.fail(problem, pytrace=False)


@pytest.fixture(scope="session")
def fixture_snapshot(tmp_path_factory) -> Path:
    return write_fixture_snapshot(tmp_path_factory.mktemp("snapshots"))


def write_workflow_snapshot(dest: Path, fixture_snapshot: Path) -> Path:
    """A snapshot directory at ``dest`` for whole-workflow runs: the synthetic yahoo/ and sp500/ of
    ``fixture_snapshot`` plus the source tests' hand-written fixtures (nba, nhl, oyez, scdb, courts,
    forecastbench, edgar, news)."""
    shutil.copytree(fixture_snapshot, dest)
    fixtures = REPO / "tests" / "fixtures"
    for name in ("nba", "nhl", "oyez", "scdb", "courts"):
        shutil.copytree(fixtures / "snapshots" / name, dest / name)
    for name in ("forecastbench", "edgar"):
        shutil.copytree(fixtures / name, dest / name)
    shutil.copytree(fixtures / "news" / "news", dest / "news")
    return dest


# -- a tiny random Llama as a GGUF (TEMPO training and adapter tests; never the real weights) --

#: Whether the ``train`` extra (and the tokenizer library it brings) is installed.
HAS_TRAIN = all(importlib.util.find_spec(m) is not None for m in ("torch", "transformers", "trl", "peft", "gguf", "tokenizers"))
TINY_LAYERS = 2
TINY_TEXT = "the court ruled on the case in 2019"

def _tiny_tokenizer_json(path: Path) -> dict:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=300, special_tokens=["<|endoftext|>", "<|im_start|>", "<|im_end|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False,
    )
    tok.train_from_iterator([TINY_TEXT, '{"evidence": [{"id": 1, "fact": "x", "source_date": "2019-01-01"}], "reasoning": "[1]", "prediction": 0.5}', "stocks rose after the earnings report"] * 5, trainer)
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
    w.add_block_count(TINY_LAYERS)
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
    w.add_chat_template(  # ChatML, as SmolLM2's
        "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
        "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
    )

    def rand(*shape: int):
        return (torch.randn(*shape, generator=gen) * 0.1).numpy()

    w.add_tensor("token_embd.weight", rand(len(tokens), 64))
    w.add_tensor("output_norm.weight", (1 + rand(64)).astype("float32"))
    shapes = {"attn_q": (64, 64), "attn_k": (32, 64), "attn_v": (32, 64), "attn_output": (64, 64),
              "ffn_gate": (128, 64), "ffn_up": (128, 64), "ffn_down": (64, 128), "attn_norm": (64,), "ffn_norm": (64,)}
    for i in range(TINY_LAYERS):
        for name in _GGUF_BLOCK_NAMES.values():
            t = rand(*shapes[name])
            w.add_tensor(f"blk.{i}.{name}.weight", (1 + t) if name.endswith("norm") else t)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path



@pytest.fixture(scope="session")
def torch_1thread():
    """torch limited to one thread for the session's tiny-model tests."""
    torch = pytest.importorskip("torch")
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield torch
    torch.set_num_threads(n)


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory, torch_1thread):
    """``(gguf_path, export_dir)`` of the tiny model: written as a GGUF, exported once per session
    with :func:`anachron.training.weights.export_base_model` (the real export path)."""
    if not HAS_TRAIN:
        pytest.skip("needs the train extra (pip install -e '.[train]')")
    from anachron.training.weights import export_base_model

    root = tmp_path_factory.mktemp("tiny")
    gguf_path = write_tiny_gguf(root / "tiny.gguf")
    return gguf_path, export_base_model(gguf_path, root / "base")


@pytest.fixture(scope="session")
def tiny_base_dir(tiny_model):
    """The tiny model's transformers weights (safetensors + tokenizer + chat template)."""
    return tiny_model[1]
