"""The evaluation's output grammar during TEMPO training: constrained rollouts and their log-probabilities.

Evaluation decodes a local model under the llama.cpp grammar of the request's JSON schema
(:func:`anachron.llm.providers.llama_cpp.schema_to_gbnf` of
:func:`anachron.llm.structured.output_schema`). Training samples its GRPO rollouts, and decodes
its greedy validation answers, under the *same* grammar, run by the same llama.cpp build over the
model's own GGUF vocabulary (loaded vocabulary-only; the transformers weights are exported from
that GGUF, so token ids agree). docs/methods.md#tempo-grammar describes the design.

* :class:`GrammarVocab`: the llama.cpp vocabulary of a GGUF file.
* :class:`TokenGrammar`: one sequence's grammar state: the set of tokens it allows next, and
  accepting a token.
* :class:`GrammarLogitsProcessor`: a transformers logits processor that masks every token the
  grammar rejects, one grammar per batch row, and records each step's allowed set.
* :func:`replay_allowed`: the same allowed sets recomputed from finished token ids (rollouts
  sampled elsewhere, e.g. by vLLM under the same grammar).
* :func:`masked_token_logps`: per-token log-probabilities (and entropies) of the *constrained*
  policy, softmax over the allowed tokens only: the probabilities that produced the tokens, which
  the GRPO importance ratio and the KL term need.

Allowed sets are kept packed, one bit per vocabulary entry (6 KiB per token for a 49,152-token
vocabulary). ``llama_cpp`` is imported when a vocabulary is loaded; torch inside the functions
that take tensors.
"""

from __future__ import annotations

import ctypes
import logging
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from anachron.errors import ConfigError

log = logging.getLogger(__name__)


class GrammarVocab:
    """The llama.cpp vocabulary of a GGUF model, loaded without its weights.

    Attributes:
        path: the GGUF file.
        n_tokens: vocabulary size (token ids are ``0 .. n_tokens - 1``).
        eog: token ids llama.cpp treats as end of generation (the grammar allows them only when
            the answer is complete).

    Raises:
        ConfigError: the file is missing or llama.cpp cannot read its vocabulary, or
            llama-cpp-python is not installed.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path).expanduser()
        if not self.path.is_file():
            raise ConfigError(f"grammar vocabulary: GGUF file not found at {self.path} (config key training.grammar_vocab)")
        try:
            import llama_cpp
            from llama_cpp import _internals
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ConfigError(f"grammar-constrained rollouts need llama-cpp-python (pip install llama-cpp-python==0.3.36): {exc}") from exc
        self._llama_cpp = llama_cpp
        params = llama_cpp.llama_model_default_params()
        params.vocab_only = True
        try:
            self._model = _internals.LlamaModel(path_model=str(self.path), params=params, verbose=False)
        except Exception as exc:  # llama.cpp raises ValueError on a file it cannot load
            raise ConfigError(f"grammar vocabulary: llama.cpp cannot read {self.path}: {exc}") from exc
        self.vocab = self._model.vocab
        self.n_tokens = int(llama_cpp.llama_vocab_n_tokens(self.vocab))
        self.eog = frozenset(t for t in range(self.n_tokens) if llama_cpp.llama_vocab_is_eog(self.vocab, t))
        # one candidate array, reused by every allowed() call (calls are sequential)
        self._data = (llama_cpp.llama_token_data * self.n_tokens)()
        base = ctypes.cast(self._data, ctypes.POINTER(ctypes.c_float))
        flat = np.ctypeslib.as_array(base, shape=(self.n_tokens * 3,))  # (id int32, logit f32, p f32) per token
        self._ids = flat.view(np.int32)[0::3]
        self._logits = flat[1::3]
        self._array = llama_cpp.llama_token_data_array(data=self._data, size=self.n_tokens, selected=-1, sorted=False)
        self._all_ids = np.arange(self.n_tokens, dtype=np.int32)

    def _candidates(self) -> Any:
        self._ids[:] = self._all_ids
        self._logits[:] = 0.0
        self._array.size, self._array.selected, self._array.sorted = self.n_tokens, -1, False
        return ctypes.byref(self._array)

    def close(self) -> None:
        """Free the vocabulary (the grammars made from it must be closed first)."""
        if getattr(self, "_model", None) is not None:
            self._model.close()
            self._model = None


class TokenGrammar:
    """One sequence's state in a GBNF grammar over a :class:`GrammarVocab`.

    ``allowed()`` is the boolean mask (``n_tokens``,) of the tokens the grammar accepts next
    (end-of-generation tokens only once the text is complete); ``accept(token)`` advances it.
    Accepting a token the last mask rejected raises ``ValueError`` (llama.cpp would abort the
    process). ``eos`` limits the end-of-generation tokens the mask allows to those the generator
    stops on (an unknown one would let a finished answer run to the token limit).

    Raises:
        ConfigError: llama.cpp cannot parse ``gbnf``.
    """

    def __init__(self, vocab: GrammarVocab, gbnf: str, *, root: str = "root", eos: Iterable[int] | None = None) -> None:
        self.vocab = vocab
        lib = vocab._llama_cpp
        self._lib = lib
        self._sampler = lib.llama_sampler_init_grammar(vocab.vocab, gbnf.encode("utf-8"), root.encode("utf-8"))
        if not self._sampler:
            raise ConfigError("llama.cpp cannot parse the output grammar")
        stop = set(vocab.eog if eos is None else (int(t) for t in eos))
        self._blocked_eog = np.array(sorted(vocab.eog - stop), dtype=np.int64)
        self._last: np.ndarray | None = None

    def allowed(self) -> np.ndarray:
        """Boolean mask (``n_tokens``,) of the tokens the grammar accepts next."""
        cur = self.vocab._candidates()
        self._lib.llama_sampler_apply(self._sampler, cur)
        mask = self.vocab._logits != -np.inf
        if self._blocked_eog.size:
            mask[self._blocked_eog] = False
        self._last = mask
        return mask

    def accept(self, token: int) -> None:
        """Advance the grammar by ``token``.

        Raises:
            ValueError: the grammar rejects ``token`` (checked against a fresh mask when none is current).
        """
        token = int(token)
        mask = self._last if self._last is not None else self.allowed()
        if not (0 <= token < mask.size and mask[token]):
            raise ValueError(f"token {token} is not allowed by the grammar here")
        self._lib.llama_sampler_accept(self._sampler, token)
        self._last = None

    def close(self) -> None:
        """Free the llama.cpp grammar."""
        if self._sampler:
            self._lib.llama_sampler_free(self._sampler)
            self._sampler = None

    def __del__(self) -> None:  # pragma: no cover - interpreter teardown
        try:
            self.close()
        except Exception:
            pass


def pack(mask: np.ndarray) -> np.ndarray:
    """Pack boolean masks along the last axis, one bit per token (little-endian bit order)."""
    return np.packbits(mask, axis=-1, bitorder="little")


def unpack_tensor(packed: Any, n: int) -> Any:
    """Boolean tensor (``..., n``) from packed uint8 masks (``..., ceil(n / 8)``) (torch)."""
    import torch

    bits = torch.arange(8, device=packed.device, dtype=torch.uint8)
    out = (packed.unsqueeze(-1) >> bits) & 1
    return out.reshape(*packed.shape[:-1], -1)[..., :n].bool()


class GrammarLogitsProcessor:
    """A transformers logits processor: every batch row decodes under its own grammar.

    At each step, for every row still generating, the token chosen at the previous step is
    accepted into that row's grammar, and every token the grammar rejects gets ``-inf`` (after
    the temperature: the sampling distribution is the model's softmax renormalised over the
    allowed tokens). A row that emitted an ``eos`` token is finished: its later (padding) steps
    allow everything and are never scored. ``prefix`` (token ids) is accepted into every grammar
    first, for a prompt that prefills the answer's opening.

    ``penalty`` (> 0; 1: none) is llama.cpp's repetition penalty as evaluation decodes with it
    (``repeat_penalty``): a token among the row's last ``last_n`` generated tokens has its logit
    divided by ``penalty`` when positive and multiplied when negative, before the mask. The loss
    applies the same (:func:`masked_token_logps`), so the policy it scores is the one that sampled.

    After generation, :meth:`allowed_packed` gives the recorded masks, ``(rows, steps, ceil(V / 8))``
    uint8, V the logits' width (ids past the grammar's vocabulary are never allowed).

    Raises:
        ConfigError: a grammar does not parse, or ``prefix`` does not fit it.
    """

    def __init__(self, vocab: GrammarVocab, grammars: Sequence[str], eos: Iterable[int], prefix: Sequence[int] = (),
                 penalty: float = 1.0, last_n: int = 64) -> None:
        if penalty <= 0 or last_n < 0:
            raise ValueError(f"repetition penalty {penalty} must be > 0 and its window {last_n} >= 0")
        self.vocab = vocab
        self.penalty, self.last_n = float(penalty), int(last_n)
        self.generated: list[list[int]] = [[] for _ in grammars]
        self.eos = frozenset(int(t) for t in eos)
        self.states = [TokenGrammar(vocab, g, eos=self.eos) for g in grammars]
        for state in self.states:
            try:
                for tok in prefix:
                    state.accept(tok)
            except ValueError as exc:
                raise ConfigError(f"the answer prefix does not fit the output grammar (training.answer_prefix): {exc}") from exc
        self.done = np.zeros(len(self.states), dtype=bool)
        self.steps: list[np.ndarray] = []
        self.width: int | None = None

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        import torch

        rows, width = scores.shape
        if rows != len(self.states):
            raise ValueError(f"{rows} rows to decode but {len(self.states)} grammars")
        self.width = width
        if self.steps:
            for r, tok in enumerate(input_ids[:, -1].tolist()):
                if self.done[r]:
                    continue
                if tok in self.eos:
                    self.done[r] = True
                    self.states[r].close()
                else:
                    self.states[r].accept(tok)
                    self.generated[r].append(tok)
        if self.penalty != 1.0 and self.last_n:
            scores = scores.clone()
            for r in range(rows):
                recent = sorted(set(self.generated[r][-self.last_n:]))
                if recent and not self.done[r]:
                    idx = torch.tensor(recent, device=scores.device)
                    v = scores[r, idx]
                    scores[r, idx] = torch.where(v > 0, v / self.penalty, v * self.penalty)
        allowed = np.ones((rows, width), dtype=bool)
        n = min(width, self.vocab.n_tokens)
        for r, state in enumerate(self.states):
            if not self.done[r]:
                allowed[r, n:] = False
                allowed[r, :n] = state.allowed()[:n]
        self.steps.append(pack(allowed))
        return scores.masked_fill(~torch.from_numpy(allowed).to(scores.device), float("-inf"))

    def allowed_packed(self) -> np.ndarray:
        """The recorded allowed sets, ``(rows, steps, ceil(V / 8))`` uint8 (steps may be 0)."""
        if not self.steps:
            return np.zeros((len(self.states), 0, 0), dtype=np.uint8)
        return np.stack(self.steps, axis=1)

    def close(self) -> None:
        """Free every row's grammar."""
        for state in self.states:
            state.close()


def replay_allowed(vocab: GrammarVocab, gbnf: str, tokens: Sequence[int], eos: Iterable[int], width: int,
                   prefix: Sequence[int] = ()) -> tuple[np.ndarray, int | None]:
    """The grammar's allowed set before each of ``tokens``, recomputed from the tokens alone.

    Returns ``(packed, first_rejected)``: ``packed`` (``len(tokens)``, ``ceil(width / 8)``) uint8;
    ``first_rejected`` the position of the first token the grammar rejects (a generator whose
    grammar engine differs, e.g. in whitespace), from which every set is "all tokens"
    (unconstrained), or None. A token in ``eos`` ends the answer; positions after it allow all.
    """
    state = TokenGrammar(vocab, gbnf, eos=eos)
    stop = frozenset(int(t) for t in eos)
    out = np.ones((len(tokens), width), dtype=bool)
    n = min(width, vocab.n_tokens)
    rejected: int | None = None
    try:
        for tok in prefix:
            state.accept(tok)
        for i, tok in enumerate(tokens):
            mask = state.allowed()
            tok = int(tok)
            if tok >= mask.size or not mask[tok]:
                rejected = i
                break
            out[i, n:] = False
            out[i, :n] = mask[:n]
            if tok in stop:
                break
            state.accept(tok)
    finally:
        state.close()
    return pack(out), rejected


class RolloutGrammar:
    """The output grammar of every training instance, over one vocabulary: what the trainer asks for.

    Args:
        vocab: the model's :class:`GrammarVocab`.
        grammars: instance id -> GBNF (the llama.cpp grammar of the instance's output schema).
        eos: the token ids generation stops on.
        prefix: token ids prefilled after the prompt (``training.answer_prefix``), accepted into
            every grammar before the first generated token.
        penalty, last_n: the repetition penalty of the decoding (:class:`GrammarLogitsProcessor`).
    """

    def __init__(self, vocab: GrammarVocab, grammars: Mapping[str, str], eos: Iterable[int], prefix: Sequence[int] = (),
                 penalty: float = 1.0, last_n: int = 64) -> None:
        self.vocab = vocab
        self.penalty, self.last_n = float(penalty), int(last_n)
        self.grammars = {str(k): v for k, v in grammars.items()}
        self.eos = tuple(int(t) for t in eos)
        self.prefix = tuple(int(t) for t in prefix)

    def _gbnf(self, instance_id: Any) -> str:
        try:
            return self.grammars[str(instance_id)]
        except KeyError:
            raise ValueError(f"no output grammar for instance {instance_id!r}") from None

    def processor(self, instance_ids: Sequence[Any]) -> GrammarLogitsProcessor:
        """A :class:`GrammarLogitsProcessor` for one generation batch, row i answering ``instance_ids[i]``
        (with this grammar's repetition penalty)."""
        return GrammarLogitsProcessor(self.vocab, [self._gbnf(i) for i in instance_ids], self.eos, self.prefix,
                                      penalty=self.penalty, last_n=self.last_n)

    def replay(self, instance_ids: Sequence[Any], completions: Sequence[Sequence[int]], width: int) -> tuple[np.ndarray, int]:
        """Allowed sets of finished completions, ``(rows, max length, ceil(width / 8))`` uint8 (padding
        positions allow all), and how many completions left the grammar somewhere (:func:`replay_allowed`)."""
        length = max((len(c) for c in completions), default=0)
        out = np.full((len(completions), length, (width + 7) // 8), 255, dtype=np.uint8)
        left = 0
        for r, (iid, toks) in enumerate(zip(instance_ids, completions)):
            packed, rejected = replay_allowed(self.vocab, self._gbnf(iid), list(toks), self.eos, width, self.prefix)
            out[r, :len(toks)] = packed
            left += rejected is not None
        return out, left

    @property
    def distinct(self) -> list[str]:
        """The distinct grammars, in first-seen order."""
        return list(dict.fromkeys(self.grammars.values()))


def recent_tokens(tokens: Any, last_n: int, width: int) -> Any:
    """(B, T, width) bool: at position t, the tokens among ``tokens[:, t - last_n : t]`` (the window a
    repetition penalty looks back over; nothing at t = 0)."""
    import torch

    b, t = tokens.shape
    seen = torch.zeros(b, t, width, dtype=torch.bool, device=tokens.device)
    for k in range(1, min(last_n, t - 1) + 1):
        seen[:, k:].scatter_(2, tokens[:, :-k].unsqueeze(-1), True)
    return seen


def masked_token_logps(logits: Any, tokens: Any, allowed: Any | None, temperature: float = 1.0,
                       compute_entropy: bool = False, penalty: float = 1.0, last_n: int = 64) -> tuple[Any, Any | None]:
    """Per-token log-probabilities of ``tokens`` under the constrained policy.

    Args:
        logits: (B, T, V) next-token logits at the completion positions.
        tokens: (B, T) the completion's token ids.
        allowed: (B, T, V) bool, the grammar's allowed set at each position, or None (unconstrained).
            A sampled token is always allowed (a position whose set misses it is scored
            unconstrained, so a grammar mismatch can never give ``-inf``).
        temperature: the sampling temperature the logits are divided by.
        compute_entropy: also return the entropy of each position's constrained distribution.
        penalty, last_n: the decoding's repetition penalty over the last ``last_n`` completion
            tokens (:class:`GrammarLogitsProcessor`), applied to the logits first; 1: none.

    Returns:
        ``(logps (B, T), entropy (B, T) or None)``: ``log softmax(penalised logits / T)`` over the
        allowed tokens, at the sampled token (the log-probability the sampler drew it with).
    """
    import torch

    scaled = logits.float()
    if penalty != 1.0 and last_n > 0:
        seen = recent_tokens(tokens, last_n, scaled.size(-1))
        scaled = torch.where(seen, torch.where(scaled > 0, scaled / penalty, scaled * penalty), scaled)
    scaled = scaled / temperature
    if allowed is not None:
        hit = allowed.gather(-1, tokens.unsqueeze(-1)).squeeze(-1)
        allowed = allowed | ~hit.unsqueeze(-1)  # a set without its token: unconstrained
        scaled = scaled.masked_fill(~allowed, float("-inf"))
    logz = torch.logsumexp(scaled, dim=-1)
    logps = scaled.gather(-1, tokens.unsqueeze(-1)).squeeze(-1) - logz
    entropy = None
    if compute_entropy:
        p = torch.softmax(scaled, dim=-1)
        entropy = -(p * torch.where(p > 0, torch.log(p), torch.zeros_like(p))).sum(-1)
    return logps, entropy


__all__ = [
    "GrammarLogitsProcessor",
    "GrammarVocab",
    "RolloutGrammar",
    "TokenGrammar",
    "masked_token_logps",
    "pack",
    "recent_tokens",
    "replay_allowed",
    "unpack_tensor",
]
