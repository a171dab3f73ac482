"""The evaluation's output grammar in training (anachron.training.grammar, the grammar trainer):
allowed sets from llama.cpp over the tiny model's GGUF vocabulary, constrained sampling with the
sets recorded, their replay from tokens, and the constrained policy's log-probabilities."""

from __future__ import annotations

import json

import numpy as np
import pytest

from anachron.errors import ConfigError

pytest.importorskip("llama_cpp")

from anachron.llm.providers.llama_cpp import schema_to_gbnf  # noqa: E402
from anachron.llm.structured import output_schema  # noqa: E402
from anachron.training.grammar import (  # noqa: E402
    GrammarVocab,
    RolloutGrammar,
    TokenGrammar,
    masked_token_logps,
    pack,
    recent_tokens,
    replay_allowed,
    unpack_tensor,
)

EOS = 2
#: a schema small enough for a random 256-context model to finish
SMALL = {"type": "object", "properties": {"a": {"type": "string", "maxLength": 3}, "ok": {"type": "boolean"}},
         "required": ["a", "ok"]}


@pytest.fixture(scope="module")
def vocab(tiny_model):
    v = GrammarVocab(tiny_model[0])
    yield v


@pytest.fixture(scope="module")
def tokenizer(tiny_base_dir):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(tiny_base_dir))


def _ids(tokenizer, text: str) -> list[int]:
    return tokenizer(text, add_special_tokens=False)["input_ids"]


def test_every_token_of_a_schema_answer_is_allowed_and_eos_only_at_the_end(vocab, tokenizer):
    gbnf = schema_to_gbnf(output_schema({"type": "number"}))
    answer = json.dumps({"evidence": [{"id": 1, "fact": "The player signed in May 2019.", "source_date": "2019-05-02"}],
                         "reasoning": "See [1].", "prediction": 12000000})
    state = TokenGrammar(vocab, gbnf, eos=[EOS])
    for tok in _ids(tokenizer, answer):
        mask = state.allowed()
        assert mask[tok] and not mask[EOS]  # the answer is not complete before its last token
        state.accept(tok)
    end = state.allowed()
    assert end[EOS]
    # the other end-of-generation tokens the vocabulary declares are never offered
    assert not any(end[t] for t in vocab.eog - {EOS})
    state.close()


def test_a_token_the_grammar_rejects_is_masked_and_cannot_be_accepted(vocab, tokenizer):
    state = TokenGrammar(vocab, schema_to_gbnf(output_schema({"type": "number"})), eos=[EOS])
    mask = state.allowed()
    x = _ids(tokenizer, "x")[0]
    brace = _ids(tokenizer, "{")[0]
    assert mask[brace] and not mask[x] and not mask[EOS]
    with pytest.raises(ValueError, match="not allowed"):
        state.accept(x)
    state.accept(brace)  # the state is unchanged by the refused token
    state.close()


def test_a_missing_or_unreadable_vocabulary_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="training.grammar_vocab"):
        GrammarVocab(tmp_path / "absent.gguf")
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"not a gguf at all")
    with pytest.raises(ConfigError, match="cannot read"):
        GrammarVocab(bad)


def test_constrained_sampling_gives_schema_answers_and_records_the_sets_it_sampled_from(vocab, tiny_base_dir, tokenizer):
    import torch
    from transformers import LogitsProcessorList

    from anachron.training.weights import load_base_model

    model, tok = load_base_model(tiny_base_dir)
    gbnf = schema_to_gbnf(SMALL)
    grammar = RolloutGrammar(vocab, {"i1": gbnf, "i2": gbnf}, [EOS], penalty=1.3, last_n=8)
    rows = ["i1", "i2", "i1", "i2"]
    processor = grammar.processor(rows)
    prompt = torch.tensor([_ids(tok, "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n")] * 4)
    torch.manual_seed(0)
    with torch.no_grad():
        out = model.generate(input_ids=prompt, attention_mask=torch.ones_like(prompt), max_new_tokens=60, do_sample=True,
                             temperature=0.7, top_k=0, top_p=1.0, pad_token_id=EOS, eos_token_id=EOS,
                             logits_processor=LogitsProcessorList([processor]), output_scores=True, return_dict_in_generate=True)
    new = out.sequences[:, prompt.shape[1]:].tolist()
    recorded = processor.allowed_packed()
    processor.close()
    width = model.config.vocab_size
    assert recorded.shape == (4, len(new[0]), (width + 7) // 8)
    # the loss's log-probabilities (penalty, temperature, mask) are those of the distribution sampled from
    with torch.no_grad():
        logits = model(input_ids=out.sequences).logits[:, prompt.shape[1] - 1:-1]
    completion = out.sequences[:, prompt.shape[1]:]
    sets = unpack_tensor(torch.from_numpy(recorded), width)
    ours, _ = masked_token_logps(logits, completion, sets, 0.7, penalty=1.3, last_n=8)
    sampled = torch.stack([torch.log_softmax(s.float(), -1) for s in out.scores], 1).gather(-1, completion.unsqueeze(-1)).squeeze(-1)
    live = torch.tensor([[i <= (t.index(EOS) if EOS in t else len(t)) for i in range(len(t))] for t in new])
    assert torch.allclose(ours[live], sampled[live], atol=1e-4)
    plain, _ = masked_token_logps(logits, completion, sets, 0.7)  # without the penalty: another policy
    assert not torch.allclose(plain[live], sampled[live], atol=1e-3)
    for r, toks in enumerate(new):
        assert EOS in toks, "every row finished inside the token budget"
        body = toks[: toks.index(EOS)]
        answer = json.loads(tok.decode(body), strict=False)  # llama.cpp's JSON strings admit control characters
        assert set(answer) == {"a", "ok"} and isinstance(answer["a"], str) and isinstance(answer["ok"], bool)
        sets = unpack_tensor(torch.from_numpy(recorded[r]), width).numpy()
        for step, t in enumerate(toks[: len(body) + 1]):
            assert sets[step, t], f"row {r} step {step}: sampled a token outside its allowed set"
        # the sets replayed from the tokens alone are the ones the sampler used
        replayed, rejected = replay_allowed(vocab, gbnf, toks[: len(body) + 1], [EOS], width)
        assert rejected is None
        assert np.array_equal(replayed, recorded[r, : len(body) + 1])
        assert not sets[: len(body)].all(axis=1).any(), "the grammar restricted every step"


def test_replay_marks_where_a_completion_leaves_the_grammar(vocab, tokenizer):
    import torch

    gbnf = schema_to_gbnf(SMALL)
    toks = _ids(tokenizer, '{"a": "xy", "ok": maybe}')
    packed, rejected = replay_allowed(vocab, gbnf, toks, [EOS], 300)
    assert rejected is not None and rejected > 0
    sets = unpack_tensor(torch.from_numpy(packed), 300)
    assert sets[rejected:].all() and not sets[:rejected].all(-1).any()  # unconstrained from the first rejected token on
    grammar = RolloutGrammar(vocab, {"a": gbnf}, [EOS])
    sets, left = grammar.replay(["a", "a"], [toks, toks[:3]], 300)
    assert left == 1 and sets.shape == (2, len(toks), 38) and (sets[1, 3:] == 255).all()


def test_masked_logps_are_the_log_probabilities_the_sampler_drew_with():
    import torch

    gen = torch.Generator().manual_seed(3)
    logits = torch.randn(2, 5, 11, generator=gen) * 3
    allowed = torch.rand(2, 5, 11, generator=gen) < 0.4
    allowed[..., 0] = True
    temperature = 0.6
    probs = torch.softmax((logits / temperature).masked_fill(~allowed, float("-inf")), dim=-1)
    tokens = torch.multinomial(probs.reshape(-1, 11), 1, generator=gen).reshape(2, 5)
    logps, entropy = masked_token_logps(logits, tokens, allowed, temperature, compute_entropy=True)
    assert torch.allclose(logps.exp(), probs.gather(-1, tokens.unsqueeze(-1)).squeeze(-1), atol=1e-6)
    manual = -(probs * torch.where(probs > 0, probs.log(), torch.zeros_like(probs))).sum(-1)
    assert torch.allclose(entropy, manual, atol=1e-5)
    # the constrained probabilities of every allowed token at a position sum to one
    every = torch.stack([masked_token_logps(logits, torch.full_like(tokens, v), allowed, temperature)[0] for v in range(11)], -1)
    assert torch.allclose(every.exp().masked_fill(~allowed, 0).sum(-1), torch.ones(2, 5), atol=1e-5)
    # the unconstrained policy gives the allowed token less (it keeps mass on rejected tokens)
    plain, _ = masked_token_logps(logits, tokens, None, temperature)
    assert (plain <= logps + 1e-6).all() and (plain < logps - 1e-3).any()
    # a token outside its set (a grammar mismatch) is scored unconstrained, never -inf
    outside = (~allowed).float().argmax(-1)
    lp, _ = masked_token_logps(logits, outside, allowed, temperature)
    assert torch.isfinite(lp).all()
    assert torch.allclose(lp, torch.log_softmax(logits / temperature, -1).gather(-1, outside.unsqueeze(-1)).squeeze(-1))


def test_the_penalty_window_is_the_last_n_completion_tokens():
    import torch

    tokens = torch.tensor([[5, 6, 5, 7, 8]])
    seen = recent_tokens(tokens, 2, 10)
    assert [sorted(torch.nonzero(seen[0, t]).flatten().tolist()) for t in range(5)] == [[], [5], [5, 6], [5, 6], [5, 7]]


def test_pack_and_unpack_round_trip():
    import torch

    mask = np.random.default_rng(0).random((3, 4, 301)) < 0.5
    assert torch.equal(unpack_tensor(torch.from_numpy(pack(mask)), 301), torch.from_numpy(mask))


def test_the_grammar_trainer_scores_with_the_constrained_policy(vocab, tiny_base_dir, tokenizer):
    """The log-probabilities the loss, the importance ratio and the KL term take are those of the
    constrained policy: softmax over the recorded allowed set, at the sampled token."""
    import contextlib

    import torch

    from anachron.training.trainer import _grammar_trainer
    from anachron.training.weights import load_base_model

    class Base:  # the part of TRL's GRPOTrainer the override uses
        temperature = 0.6
        use_vllm = False

        class accelerator:  # noqa: N801
            autocast = staticmethod(contextlib.nullcontext)

        def __init__(self, **_):
            pass

        def _get_per_token_logps_and_entropies(self, *a, **k):
            raise AssertionError("the unconstrained path must not be taken while sets are active")

    class Decoding:
        penalty, last_n = 1.0, 64

    model, tok = load_base_model(tiny_base_dir)
    trainer = _grammar_trainer(Base)(rollout_grammar=Decoding())
    gbnf = schema_to_gbnf(SMALL)
    prompt = _ids(tok, "<|im_start|>assistant\n")
    completion = _ids(tok, '{"a": "hi", "ok": true}') + [EOS]
    packed, rejected = replay_allowed(vocab, gbnf, completion, [EOS], model.config.vocab_size)
    assert rejected is None
    ids = torch.tensor([prompt + completion] * 2)
    trainer._allowed = torch.from_numpy(np.stack([packed, packed]))
    with torch.no_grad():
        logps, entropy, _ = trainer._get_per_token_logps_and_entropies(model, ids, torch.ones_like(ids), len(completion),
                                                                       batch_size=1, compute_entropy=True)
        logits = model(input_ids=ids).logits[:, len(prompt) - 1:-1] / 0.6
    sets = unpack_tensor(torch.from_numpy(packed), model.config.vocab_size)
    expected = torch.log_softmax(logits.masked_fill(~sets, float("-inf")), -1).gather(
        -1, torch.tensor([completion] * 2).unsqueeze(-1)).squeeze(-1)
    assert torch.allclose(logps, expected, atol=1e-5) and torch.isfinite(entropy).all()
    # the tokens the grammar forces (quotes, keys) have probability one under the constrained policy
    forced = sets.sum(-1) == 1
    assert forced.any() and torch.allclose(logps[0][forced], torch.zeros(int(forced.sum())), atol=1e-5)


def test_vllm_gets_the_same_grammar_and_per_instance_grammars_go_to_transformers():
    from anachron.training.trainer import TrainSettings, vllm_rollouts

    class G:
        def __init__(self, distinct):
            self.distinct = distinct

    on = TrainSettings(use_vllm=True)
    assert vllm_rollouts(G(["root ::= x"]), on) == (True, {"structured_outputs": {"grammar": "root ::= x"}})
    assert vllm_rollouts(G(["root ::= x"]), TrainSettings()) == (False, None)
    assert vllm_rollouts(None, on) == (True, None)
    assert vllm_rollouts(G(["a", "b"]), on) == (False, None)  # one grammar per vLLM batch: transformers rollouts


def test_rollout_grammar_needs_a_gguf_vocabulary_matching_the_tokenizer(tiny_model, tiny_base_dir, tmp_path, tokenizer):
    import pandas as pd

    from anachron.tasks.registry import get_task
    from anachron.training.trainer import TrainSettings, rollout_grammar

    task = get_task("salary")
    rows = pd.DataFrame([{"instance_id": "s1", "inputs": "{}"}])
    g = rollout_grammar(task, rows, tokenizer, TrainSettings(), tiny_base_dir, [EOS])
    assert g.vocab.path == tiny_model[0] and list(g.grammars) == ["s1"]
    assert g.grammars["s1"] == schema_to_gbnf(output_schema(task.prediction_schema(rows.iloc[0])))
    with pytest.raises(ConfigError, match="training.grammar_vocab"):
        rollout_grammar(task, rows, tokenizer, TrainSettings(), tmp_path, [EOS])  # not an export: no source GGUF

    class Bigger:
        def __len__(self):
            return 49152

    with pytest.raises(ConfigError, match="tokens"):
        rollout_grammar(task, rows, Bigger(), TrainSettings(grammar_vocab=str(tiny_model[0])), tmp_path, [EOS])
    with pytest.raises(ConfigError, match="answer_prefix"):
        rollout_grammar(task, rows, tokenizer, TrainSettings(answer_prefix="Sure! "), tiny_base_dir, [EOS]).processor(["s1"])
    prefixed = rollout_grammar(task, rows, tokenizer, TrainSettings(answer_prefix='{"evidence": ['), tiny_base_dir, [EOS])
    assert len(prefixed.prefix) > 0 and prefixed.processor(["s1"]).states[0].allowed().any()


@pytest.mark.parametrize("value, ok", [("0", True), ("1", True), ("0.35", True), ("1.0", True), ("0.000001", True),
                                       ("1.5", False), ("2", False), ("-0.1", False), ("1.01", False), ("0.1234567", False)])
def test_a_probability_is_held_to_the_unit_interval_by_the_grammar(vocab, tokenizer, value, ok):
    """llama.cpp enforces no number bounds; a [0, 1] prediction gets its own rule, so a probability
    answer out of range can no longer be decoded (evaluation and rollouts alike)."""
    from anachron.llm.structured import has_unit_interval

    schema = output_schema({"type": "number", "minimum": 0, "maximum": 1})
    assert has_unit_interval(schema) and not has_unit_interval(output_schema({"type": "number"}))
    state = TokenGrammar(vocab, schema_to_gbnf(schema), eos=[EOS])
    text = json.dumps({"evidence": [{"id": 1, "fact": "A.", "source_date": "2019-05-02"}], "reasoning": "R."})[:-1]
    accepted = True
    for tok in _ids(tokenizer, text + ', "prediction": ' + value + "}"):
        if not state.allowed()[tok]:
            accepted = False
            break
        state.accept(tok)
    assert (accepted and state.allowed()[EOS]) == ok
    state.close()


def test_local_cache_keys_change_only_where_the_grammar_now_bounds_a_probability():
    from anachron.llm.cache import cache_key

    msgs = [{"role": "user", "content": "q"}]
    unit = output_schema({"type": "number", "minimum": 0, "maximum": 1})
    plain = output_schema({"type": "number"})
    payload_keys = {p: (cache_key(p, "m", msgs, {}, unit), cache_key(p, "m", msgs, {}, dict(unit))) for p in ("local", "openai")}
    assert payload_keys["local"][0] == payload_keys["local"][1]
    assert cache_key("local", "m", msgs, {}, unit) != cache_key("openai", "m", msgs, {}, unit)
    # a schema without a bounded probability keeps the key it had (its grammar is unchanged)
    import hashlib

    from anachron.llm.cache import canonical_json, decoding_params, schema_property_order

    old = {"v": 1, "provider": "local", "model": "m", "messages": msgs, "params": decoding_params({}),
           "response_schema": plain, "schema_property_order": schema_property_order(plain), "sample_index": 0}
    assert cache_key("local", "m", msgs, {}, plain) == hashlib.sha256(canonical_json(old).encode()).hexdigest()
    old_unit = {**old, "response_schema": unit, "schema_property_order": schema_property_order(unit)}
    assert cache_key("local", "m", msgs, {}, unit) != hashlib.sha256(canonical_json(old_unit).encode()).hexdigest()
