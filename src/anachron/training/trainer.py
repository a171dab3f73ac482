"""TEMPO training: GRPO with a LoRA adapter (TRL ``GRPOTrainer`` + PEFT) around the pure rewards.

The wiring is thin on purpose. What TEMPO adds to plain GRPO lives elsewhere:

* every completion is scored by the same pipeline as every evaluated method
  (:func:`anachron.training.scoring.score_completions`: parse, extract claims, verify them
  against the instance's cutoff date, task Perf and Cov);
* the two-mode reward, the format penalty and the gates are pure functions
  (:mod:`anachron.training.rewards`, TEMPO paper §3.2 and App. C.4-C.6), grouped by instance id.

This module turns the ``training`` config block into a :class:`TrainSettings`, builds the prompt
dataset from a task's train split, runs a validation pass with greedy decoding on held-out train
instances at evenly spaced steps (step 0 is the base model), keeps the adapter with the lowest
validation OLR and the final one, and writes one log row per step
(:data:`~anachron.tables.TRAINING_LOG_COLUMNS`). Paper hyperparameters (App. E, Table 4) are the defaults of
:class:`TrainSettings`; ``config/paper.yaml`` states them explicitly.

torch, transformers, trl and peft (the ``train`` extra) are imported only inside the functions
that need them, after :func:`anachron.training.extra.require_training_extra` has checked them.
"""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
import logging
import math
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np
import pandas as pd

from anachron.frames import is_nan
from anachron.io import replace_dir
from anachron.progress import Progress
from anachron.tables import TRAINING_LOG_COLUMNS
from anachron.training.rewards import CompletionScore, GroupResult, RewardConfig, batch_rewards, calibrate_targets, step_stats

log = logging.getLogger(__name__)



@dataclass(frozen=True)
class TrainSettings:
    """GRPO + LoRA settings (config block ``training``; defaults: TEMPO paper App. E, Table 4).

    Fields:
        steps: optimizer steps.
        prompts_per_step: B, distinct training prompts (instances) per step (paper: 8).
        num_generations: G, completions per prompt, one GRPO group (paper: 12).
        gradient_accumulation_steps: micro-batches per step (B x G completions split evenly).
        temperature: sampling temperature of the rollouts (paper: 0.6).
        max_completion_length: tokens per completion; a completion cut here is ``overlong``.
        learning_rate, adam_beta1, adam_beta2, adam_epsilon: constant-rate Adam (2e-5, 0.9, 0.95, 1e-8).
        beta_kl: KL coefficient against the frozen base model (0.05).
        epsilon_low, epsilon_high: asymmetric clipping of the importance ratio, [1 - low, 1 + high]
            (0.1 and 1.0; DAPO-style, App. E.3).
        loss_type: TRL's GRPO loss aggregation (``dapo``: token-level, TRL's default).
        lora_r, lora_alpha, lora_dropout, target_modules: the LoRA adapter (rank 32 on the attention
            projections).
        validation_instances: held-out train instances for validation (never trained on).
        validation_points: validations spread evenly over training (paper: 15), besides step 0.
        train_sample: cap on training instances (None: every train instance not held out).
        answer_prefix: text every completion starts with, prefilled after the chat template and
            put back in front of the completion before parsing (and accepted into the grammar
            first when ``grammar`` is on). Empty: none.
        grammar: sample rollouts and decode validation under the evaluation's output grammar
            (the llama.cpp grammar of the request's JSON schema; :mod:`anachron.training.grammar`),
            with the loss's log-probabilities those of the constrained policy.
        grammar_vocab: the GGUF whose vocabulary the grammar runs over; None: the GGUF the base
            weights were exported from (``anachron_base.json``).
        max_evidence: ``maxItems`` of the evidence list in the output schema (as the evaluated
            method's ``max_evidence``).
        calibrate_gates: set the gate targets from the base model's validation outputs
            (:func:`anachron.training.rewards.calibrate_targets`).
        checkpoint: the adapter the ``tempo`` method uses, ``best`` (lowest validation OLR, ties to
            the earlier step) or ``final``.
        seed: seed of the split, the data order and the sampling.
        device: ``auto`` (CUDA when available), ``cpu`` or ``cuda``.
        bf16: train in bfloat16 (GPU).
        use_vllm: generate rollouts with vLLM (``colocate`` mode) when installed.
        gradient_checkpointing: trade compute for memory (TRL's default is on).
        validation_batch_size: prompts per greedy-generation batch in validation.
        validation_max_tokens: token budget of a validation completion (None: ``max_completion_length``);
            evaluation's budget is the model's ``max_tokens``, often more than a rollout's.
        repetition_penalty, repetition_last_n: llama.cpp's repetition penalty over the last
            ``repetition_last_n`` generated tokens, in rollouts and validation under the grammar (the
            workflow sets the model's ``repeat_penalty``, as evaluation decodes; the loss applies it
            too, :func:`anachron.training.grammar.masked_token_logps`). 1: none; needs ``grammar``.
    """

    steps: int = 200
    prompts_per_step: int = 8
    num_generations: int = 12
    gradient_accumulation_steps: int = 1
    temperature: float = 0.6
    max_completion_length: int = 1024
    learning_rate: float = 2e-5
    adam_beta1: float = 0.9
    adam_beta2: float = 0.95
    adam_epsilon: float = 1e-8
    beta_kl: float = 0.05
    epsilon_low: float = 0.1
    epsilon_high: float = 1.0
    loss_type: str = "dapo"
    lora_r: int = 32
    lora_alpha: int = 64
    lora_dropout: float = 0.05
    target_modules: tuple[str, ...] = ("q_proj", "k_proj", "v_proj", "o_proj")
    validation_instances: int = 16
    validation_points: int = 15
    train_sample: int | None = None
    answer_prefix: str = ""
    grammar: bool = True
    grammar_vocab: str | None = None
    max_evidence: int = 10
    calibrate_gates: bool = True
    checkpoint: str = "best"
    seed: int = 42
    device: str = "auto"
    bf16: bool = False
    use_vllm: bool = False
    gradient_checkpointing: bool = False
    validation_batch_size: int = 8
    validation_max_tokens: int | None = None
    repetition_penalty: float = 1.0
    repetition_last_n: int = 64
    reward: RewardConfig = field(default_factory=RewardConfig)

    def __post_init__(self) -> None:
        if self.completions_per_step % self.gradient_accumulation_steps:
            raise ValueError(
                f"training.prompts_per_step x training.num_generations ({self.completions_per_step}) must divide by "
                f"training.gradient_accumulation_steps ({self.gradient_accumulation_steps})"
            )
        if self.repetition_penalty != 1.0 and not self.grammar:
            raise ValueError("training.repetition_penalty needs training.grammar (the grammar trainer applies it in the loss)")
        if self.checkpoint not in ("best", "final"):
            raise ValueError(f"training.checkpoint must be 'best' or 'final', not {self.checkpoint!r}")

    @classmethod
    def from_config(cls, block: dict[str, Any]) -> "TrainSettings":
        """Settings from a validated ``training`` config block (``lora``, ``validation`` and
        ``reward`` sub-blocks flattened; unknown keys ignored: the schema already rejected them).

        Raises:
            ValueError: settings that do not fit together, naming the config keys (B x G not
                divisible by the accumulation steps; a reward setting out of range).
        """
        flat: dict[str, Any] = {k: v for k, v in block.items() if k not in ("lora", "validation", "reward", "tasks")}
        lora = block.get("lora") or {}
        flat.update({f"lora_{k}": v for k, v in lora.items() if k != "target_modules"})
        if "target_modules" in lora:
            flat["target_modules"] = tuple(lora["target_modules"])
        val = block.get("validation") or {}
        if "instances" in val:
            flat["validation_instances"] = val["instances"]
        if "points" in val:
            flat["validation_points"] = val["points"]
        if "batch_size" in val:
            flat["validation_batch_size"] = val["batch_size"]
        if "max_tokens" in val:
            flat["validation_max_tokens"] = val["max_tokens"]
        if flat.get("repetition_penalty") is None:
            flat.pop("repetition_penalty", None)  # null: the workflow fills in the model's (settings_for)
        names = {f.name for f in dataclasses.fields(cls)}
        kwargs = {k: v for k, v in flat.items() if k in names}
        reward_names = {f.name for f in dataclasses.fields(RewardConfig)}
        kwargs["reward"] = RewardConfig(**{k: v for k, v in (block.get("reward") or {}).items() if k in reward_names})
        return cls(**kwargs)

    @property
    def completions_per_step(self) -> int:
        """B x G: completions generated and trained on per optimizer step."""
        return self.prompts_per_step * self.num_generations


def settings_for(block: dict[str, Any], model_config: dict[str, Any], method_settings: dict[str, Any],
                 grammar_vocab: str | None = None) -> TrainSettings:
    """:class:`TrainSettings` of a workflow run: the ``training`` block, with what evaluation does
    where the block leaves it open: under the grammar, rollouts and validation decode with the
    model's ``params.repeat_penalty`` (unless ``training.repetition_penalty`` is set), and the output
    schema has the tempo method's ``max_evidence`` (``methods.tempo``, default 10); ``grammar_vocab``
    (rule grammar_vocab's GGUF for a model without one) is used unless ``training.grammar_vocab`` is set.

    Raises:
        ValueError: as :meth:`TrainSettings.from_config`.
    """
    settings = TrainSettings.from_config(block)
    changes: dict[str, Any] = {"max_evidence": int(method_settings.get("max_evidence", 10))}
    if grammar_vocab and not settings.grammar_vocab:
        changes["grammar_vocab"] = str(grammar_vocab)
    if block.get("repetition_penalty") is None and settings.grammar:
        changes["repetition_penalty"] = float((model_config.get("params") or {}).get("repeat_penalty") or 1.0)
    return dataclasses.replace(settings, **changes)


def validation_steps(total_steps: int, n_points: int) -> list[int]:
    """The steps after which validation runs: ``n_points`` evenly spaced over ``1..total_steps``,
    the last step always included (step 0, the base model, is validated separately).

    Example: ``validation_steps(200, 4) == [50, 100, 150, 200]``; fewer steps than points gives
    every step.
    """
    if total_steps <= 0 or n_points <= 0:
        return []
    pts = np.linspace(0, total_steps, min(n_points, total_steps) + 1)[1:]
    return sorted({int(round(p)) for p in pts} | {total_steps})


def split_train_validation(instances: pd.DataFrame, n_validation: int, seed: int, train_sample: int | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(training rows, validation rows) of the ``train`` split, disjoint, seeded.

    The train split is sorted by instance id and permuted with ``seed``; the first
    ``n_validation`` rows validate, the rest (capped at ``train_sample``) train.

    Raises:
        ValueError: when the task has no train instances, or too few to hold out a validation
            set and still train on at least one.
    """
    train = instances[instances["split"] == "train"].sort_values("instance_id").reset_index(drop=True)
    if train.empty:
        raise ValueError("the task has no 'train' split instances to train TEMPO on")
    if len(train) <= n_validation:
        raise ValueError(f"{len(train)} train instances: too few to hold out {n_validation} for validation (training.validation.instances)")
    order = np.random.default_rng(seed).permutation(len(train))
    val = train.iloc[np.sort(order[:n_validation])]
    rest = order[n_validation:]
    if train_sample is not None:
        rest = rest[:train_sample]
    return train.iloc[np.sort(rest)].reset_index(drop=True), val.reset_index(drop=True)


def prompt_text(tokenizer: Any, messages: list[dict[str, str]], answer_prefix: str = "") -> str:
    """The chat-templated prompt of ``messages`` with the generation prompt and ``answer_prefix``."""
    return tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True) + answer_prefix


def validation_metrics(per_completion: pd.DataFrame, scores: Sequence[CompletionScore]) -> dict[str, float]:
    """Validation OLR / strict OLR / Perf / Cov / parse rate / mean strict leak count.

    ``per_completion`` is the instance-scores frame of :func:`anachron.training.scoring.score_completions`
    (one row per greedy completion); the aggregates are those of an evaluated run
    (:func:`anachron.metrics.core.aggregate`: OLR over instances with claims, Perf over usable predictions).
    """
    def mean(col: str) -> float:
        v = per_completion[col].to_numpy(dtype=float) if col in per_completion else np.array([])
        v = v[~np.isnan(v)]
        return float(v.mean()) if v.size else float("nan")

    leaks = [s.leak_count for s in scores if s.evidence_usable]
    return {
        "val_n": len(per_completion),
        "val_olr": mean("olr"),
        "val_olr_strict": mean("olr_strict"),
        "val_perf": mean("perf"),
        "val_cov": mean("cov"),
        "val_parse_rate": float(per_completion["parsed"].mean()) if len(per_completion) else float("nan"),
        "val_mean_leak": float(np.mean(leaks)) if leaks else float("nan"),
    }


class TempoReward:
    """The reward function handed to ``GRPOTrainer``: score, gate, penalise, record.

    Called by TRL once per generation batch with ``prompts``, ``completions`` (strings: the
    prompts are pre-templated) and every extra dataset column as a list aligned with the
    completions, ``instance_id`` among them; ``completion_ids`` tells which completions hit the
    token limit. Rewards are grouped by ``instance_id``, never by position
    (:func:`anachron.training.rewards.batch_rewards`). Each call's :func:`step_stats` is kept in
    :attr:`pending` until the callback writes the step's log row.
    """

    __name__ = "tempo_reward"  # TRL names reward functions by __name__

    def __init__(self, score_fn: Callable[..., tuple[list[CompletionScore], pd.DataFrame]], *, reward: RewardConfig,
                 answer_prefix: str, max_completion_length: int, eos_token_ids: Sequence[int]) -> None:
        self.score_fn = score_fn
        self.reward = reward
        self.answer_prefix = answer_prefix
        self.max_completion_length = max_completion_length
        self.eos = set(int(i) for i in eos_token_ids)
        self.pending: list[tuple[list[GroupResult], list[float]]] = []

    def overlong(self, ids: Sequence[int] | None) -> bool:
        """True when a completion's token ids fill the budget without an end-of-sequence token."""
        if ids is None:
            return False
        ids = list(ids)
        return len(ids) >= self.max_completion_length and not (self.eos & set(ids))

    def __call__(self, prompts: Sequence[Any], completions: Sequence[Any], completion_ids: Sequence[Sequence[int]] | None = None,
                 instance_id: Sequence[str] | None = None, **_: Any) -> list[float]:
        """One reward per completion, aligned with ``completions`` (never raises on bad text)."""
        if instance_id is None:
            raise ValueError("the training dataset needs an instance_id column (rewards are grouped by it)")
        texts = [self.answer_prefix + (c if isinstance(c, str) else c[-1]["content"]) for c in completions]
        ids = list(completion_ids) if completion_ids is not None else [None] * len(texts)
        finish = ["length" if self.overlong(i) else "stop" for i in ids]
        scores, _ = self.score_fn(list(instance_id), texts, finish)
        rewards, groups = batch_rewards(scores, self.reward)
        self.pending.append((groups, rewards))
        return [float(r) for r in rewards]

    def take_stats(self) -> dict[str, float]:
        """:func:`step_stats` over every call since the last take (empty dict if none)."""
        if not self.pending:
            return {}
        groups = [g for gs, _ in self.pending for g in gs]
        self.pending = []
        return step_stats(groups)


def _device(settings: TrainSettings) -> str:
    import torch

    if settings.device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    return settings.device


def generate_greedy(model: Any, tokenizer: Any, prompts: Sequence[str], max_new_tokens: int, batch_size: int = 8,
                    processor: Callable[[range], Any] | None = None) -> tuple[list[str], list[str]]:
    """Greedy completions of pre-templated ``prompts``: (texts, finish reasons ``stop``/``length``).

    Left-padded batches of ``batch_size``; special tokens are dropped from the text.
    ``processor(indices)``, when given, makes the logits processor of the batch of those prompt
    indices (e.g. :meth:`anachron.training.grammar.RolloutGrammar.processor`: greedy under the
    output grammar, with its repetition penalty).
    """
    import torch

    texts: list[str] = []
    finish: list[str] = []
    pad_side = tokenizer.padding_side
    tokenizer.padding_side = "left"
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    device = next(model.parameters()).device
    stop = set(eos_ids(model, tokenizer))
    was_training = model.training
    model.eval()
    try:
        for i in range(0, len(prompts), batch_size):
            batch = tokenizer(list(prompts[i:i + batch_size]), return_tensors="pt", padding=True, add_special_tokens=False).to(device)
            extra: dict[str, Any] = {}
            if processor is not None:
                from transformers import LogitsProcessorList

                extra["logits_processor"] = LogitsProcessorList([processor(range(i, min(i + batch_size, len(prompts))))])
            with torch.no_grad():
                out = model.generate(**batch, max_new_tokens=max_new_tokens, do_sample=False,
                                     pad_token_id=tokenizer.pad_token_id, eos_token_id=sorted(stop), **extra)
            new = out[:, batch["input_ids"].shape[1]:]
            for row in new:
                ids = row.tolist()
                ended = bool(stop & set(ids))
                texts.append(tokenizer.decode(row, skip_special_tokens=True))
                finish.append("stop" if ended or len(ids) < max_new_tokens else "length")
    finally:
        tokenizer.padding_side = pad_side
        if was_training:
            model.train()
    return texts, finish


def eos_ids(model: Any, tokenizer: Any) -> list[int]:
    """Every token id generation stops on: the tokenizer's eos and the model's declared ones (as TRL)."""
    declared = getattr(getattr(model, "generation_config", None), "eos_token_id", None)
    ids = [] if declared is None else [declared] if isinstance(declared, int) else list(declared)
    if tokenizer.eos_token_id is not None and tokenizer.eos_token_id not in ids:
        ids = [tokenizer.eos_token_id, *ids]
    return [int(i) for i in ids]


def rollout_grammar(task: Any, rows: pd.DataFrame, tokenizer: Any, settings: TrainSettings, base_dir: Path,
                    eos: Sequence[int]) -> Any:
    """The :class:`~anachron.training.grammar.RolloutGrammar` of ``rows``: each instance's output
    schema (:func:`anachron.llm.structured.output_schema` of the task's prediction schema, the
    request evaluation sends) as the llama.cpp grammar evaluation decodes under, over the
    vocabulary of ``settings.grammar_vocab`` or of the GGUF ``base_dir`` was exported from.

    Raises:
        ConfigError: no GGUF to take the vocabulary from (an ``hf_path`` model without
            ``training.grammar_vocab``), a GGUF whose vocabulary does not match the tokenizer,
            or an answer prefix the grammar rejects.
    """
    from anachron.errors import ConfigError
    from anachron.llm.providers.llama_cpp import schema_to_gbnf
    from anachron.llm.structured import output_schema
    from anachron.training.grammar import GrammarVocab, RolloutGrammar
    from anachron.training.weights import MANIFEST_NAME

    vocab_path = settings.grammar_vocab
    if vocab_path is None:
        try:
            vocab_path = json.loads((Path(base_dir) / MANIFEST_NAME).read_text(encoding="utf-8"))["source_gguf"]
        except (OSError, ValueError, KeyError):
            raise ConfigError(
                f"training.grammar: the base weights in {base_dir} were not exported from a GGUF, so the output grammar "
                f"has no vocabulary; set training.grammar_vocab to the model's GGUF (or training.grammar: false)"
            ) from None
    vocab = GrammarVocab(vocab_path)
    if vocab.n_tokens != len(tokenizer):
        raise ConfigError(f"training.grammar_vocab: {vocab.path} has {vocab.n_tokens} tokens, the model's tokenizer {len(tokenizer)}")
    gbnf: dict[str, str] = {}
    by_schema: dict[str, str] = {}
    for _, row in rows.iterrows():
        schema = output_schema(task.prediction_schema(row), max_evidence=settings.max_evidence)
        key = json.dumps(schema, sort_keys=True)
        if key not in by_schema:
            by_schema[key] = schema_to_gbnf(schema)
        gbnf[str(row["instance_id"])] = by_schema[key]
    prefix = tokenizer(settings.answer_prefix, add_special_tokens=False)["input_ids"] if settings.answer_prefix else []
    return RolloutGrammar(vocab, gbnf, eos, prefix, penalty=settings.repetition_penalty, last_n=settings.repetition_last_n)


def _grammar_trainer(base: type) -> type:
    """``base`` (TRL's ``GRPOTrainer``) with rollouts sampled under the output grammar and the loss's
    log-probabilities those of the constrained policy (docs/methods.md#tempo-grammar).

    * Rollouts: transformers ``generate`` gets a :class:`~anachron.training.grammar.GrammarLogitsProcessor`
      (row i of the generation batch under the grammar of the instance it answers), which records
      every step's allowed set; under vLLM (guided by the same GBNF) the sets are replayed from the
      tokens afterwards.
    * Every log-probability the trainer takes of those tokens (the policy's in the loss, the old
      policy's for the importance ratio, the reference's for the KL term) is
      ``log softmax(logits / T)`` over the allowed set of its position
      (:func:`~anachron.training.grammar.masked_token_logps`): the probability the token was
      sampled with. The sets travel with the batch (``grammar_allowed``) through TRL's shuffling and
      splitting into micro-batches.
    """
    import torch

    from anachron.training.grammar import masked_token_logps, unpack_tensor

    class GrammarGRPOTrainer(base):  # type: ignore[misc, valid-type]
        def __init__(self, *args: Any, rollout_grammar: Any, **kwargs: Any) -> None:
            self.rollout_grammar = rollout_grammar
            self._batch_ids: list[str] | None = None
            self._allowed: Any = None  # packed allowed sets of the rows being scored, or None
            self.grammar_left = 0  # vLLM rollouts that left the grammar (replayed unconstrained from there)
            super().__init__(*args, **kwargs)

        def _generate_and_score_completions(self, inputs: Any) -> Any:
            self._batch_ids = [str(x["instance_id"]) for x in inputs]
            try:
                out = super()._generate_and_score_completions(inputs)
                out["grammar_allowed"] = _fit(self._allowed, out["completion_ids"].size(1))
            finally:
                self._allowed, self._batch_ids = None, None
            return out

        def _generate_single_turn(self, prompt_ids: Any, *args: Any, **kwargs: Any) -> Any:
            ids = self._batch_ids
            if ids is None or len(ids) != len(prompt_ids):
                raise RuntimeError(f"grammar rollouts: {len(prompt_ids)} prompts to generate, {0 if ids is None else len(ids)} instance ids")
            width = self.model.config.get_text_config().vocab_size
            if self.use_vllm:  # vLLM decoded under the same GBNF (generation_kwargs), no penalty: replay the allowed sets
                completion_ids, logprobs = super()._generate_single_turn(prompt_ids, *args, **kwargs)
                packed, left = self.rollout_grammar.replay(ids, completion_ids, width)
                if left:
                    log.warning("%d of %d vLLM rollouts left llama.cpp's grammar; scored unconstrained from there", left, len(ids))
                self.grammar_left += left
                self._allowed = torch.from_numpy(packed)
                return completion_ids, logprobs
            from transformers import LogitsProcessorList

            target = self.accelerator.unwrap_model(self.model_wrapped)
            processor = self.rollout_grammar.processor(ids)
            library_generate = target.generate
            target.generate = lambda *a, **k: library_generate(*a, logits_processor=LogitsProcessorList([processor]), **k)
            try:
                completion_ids, logprobs = super()._generate_single_turn(prompt_ids, *args, **kwargs)
            finally:
                del target.generate
                processor.close()
            if not processor.steps:
                raise RuntimeError("grammar rollouts: the logits processor was never called")
            self._allowed = torch.from_numpy(processor.allowed_packed())
            return completion_ids, logprobs

        def _compute_loss(self, model: Any, inputs: Any) -> Any:
            self._allowed = inputs.get("grammar_allowed")
            try:
                return super()._compute_loss(model, inputs)
            finally:
                self._allowed = None

        def _get_per_token_logps_and_entropies(self, model: Any, input_ids: Any, attention_mask: Any, logits_to_keep: int,
                                               batch_size: int | None = None, compute_entropy: bool = False,
                                               compute_aux_loss: bool = False, **kwargs: Any) -> Any:
            if self._allowed is None:
                return super()._get_per_token_logps_and_entropies(
                    model, input_ids, attention_mask, logits_to_keep, batch_size=batch_size,
                    compute_entropy=compute_entropy, compute_aux_loss=compute_aux_loss, **kwargs)
            allowed = _fit(self._allowed, logits_to_keep)
            if allowed.size(0) != input_ids.size(0):
                raise RuntimeError(f"grammar: {allowed.size(0)} allowed sets for {input_ids.size(0)} sequences")
            batch_size = batch_size or input_ids.size(0)
            logps, entropies = [], []
            for start in range(0, input_ids.size(0), batch_size):
                end = min(start + batch_size, input_ids.size(0))
                ids = input_ids[start:end]
                with self.accelerator.autocast():
                    logits = model(input_ids=ids, attention_mask=attention_mask[start:end],
                                   logits_to_keep=logits_to_keep + 1).logits[:, :-1, :]
                mask = unpack_tensor(allowed[start:end].to(logits.device), logits.size(-1))
                lp, ent = masked_token_logps(logits, ids[:, -logits_to_keep:], mask, self.temperature, compute_entropy,
                                             penalty=1.0 if self.use_vllm else self.rollout_grammar.penalty,
                                             last_n=self.rollout_grammar.last_n)
                logps.append(lp)
                entropies.append(ent)
            return torch.cat(logps), (torch.cat(entropies) if compute_entropy else None), None

    return GrammarGRPOTrainer


def vllm_rollouts(grammar: Any, settings: TrainSettings) -> tuple[bool, dict[str, Any] | None]:
    """``(use_vllm, generation_kwargs)`` for GRPOConfig: under the grammar, vLLM decodes with the same
    GBNF (its structured outputs); TRL gives vLLM one grammar per batch, so a task whose instances
    have different output grammars (stock rankings) has its rollouts generated by transformers with
    the per-row grammar instead (logged)."""
    if not settings.use_vllm:
        return False, None
    if grammar is None:
        return True, None
    distinct = grammar.distinct
    if len(distinct) != 1:
        log.warning("training.use_vllm: the instances have %d different output grammars and vLLM takes one per batch; "
                    "rollouts are generated by transformers under each instance's grammar", len(distinct))
        return False, None
    return True, {"structured_outputs": {"grammar": distinct[0]}}


def _fit(packed: Any, length: int) -> Any:
    """Packed allowed sets (rows, steps, bytes) cut or padded ("all allowed") to ``length`` steps."""
    import torch

    if packed is None:
        raise RuntimeError("grammar: no allowed sets were recorded for this batch")
    steps = packed.size(1)
    if steps >= length:
        return packed[:, :length]
    pad = torch.full((packed.size(0), length - steps, packed.size(2)), 255, dtype=torch.uint8)
    return torch.cat([packed, pad], dim=1)


@dataclass
class TrainingResult:
    """What :func:`train_tempo` produced: the per-step log and the summary written beside the adapter."""

    log: pd.DataFrame
    summary: dict[str, Any]


def train_tempo(
    *,
    task: Any,
    instances: pd.DataFrame,
    base_dir: str | Path,
    out_dir: str | Path,
    settings: TrainSettings,
    score_fn: Callable[[list[str], list[str], list[str]], tuple[list[CompletionScore], pd.DataFrame]],
    model_name: str,
    model_loader: Callable[[Path], tuple[Any, Any]] | None = None,
) -> TrainingResult:
    """Train a TEMPO LoRA adapter for one (model, task) and write it under ``out_dir``.

    Args:
        task: the task (its ``messages(row)`` are the prompts; the temporal_hint prompt).
        instances: the task's instance table (its ``train`` split is used).
        base_dir: the base model's transformers weights (safetensors + tokenizer).
        out_dir: gets ``adapter/`` (the checkpoint ``settings.checkpoint`` picks), ``best/``,
            ``final/`` (PEFT adapters) and ``trainer/`` (TRL scratch).
        settings: :class:`TrainSettings`.
        score_fn: ``(instance_ids, texts, finish_reasons) -> (scores, per-completion frame)``,
            :func:`anachron.training.scoring.score_completions` bound to the task, its instances,
            its grounding and the verifier layers of the run.
        model_name: the model's config key (log column ``model``).
        model_loader: ``base_dir -> (model, tokenizer)``; default
            :func:`anachron.training.weights.load_base_model` (tests pass a tiny model).

    Returns:
        :class:`TrainingResult` with the :data:`~anachron.tables.TRAINING_LOG_COLUMNS` log.

    Raises:
        ConfigError: the ``train`` extra is missing (before anything is loaded).
        ValueError: too few train instances (:func:`split_train_validation`).
    """
    from anachron.training.extra import require_training_extra

    require_training_extra()
    import torch
    from datasets import Dataset
    from peft import LoraConfig
    from transformers import TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    t_start = time.perf_counter()
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(settings.seed)
    if model_loader is None:
        from anachron.training.weights import load_base_model

        model_loader = load_base_model
    model, tokenizer = model_loader(Path(base_dir))
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    device = _device(settings)
    train_rows, val_rows = split_train_validation(instances, settings.validation_instances, settings.seed, settings.train_sample)
    log.info("%s/%s: %d training and %d validation instances; %d steps of %d prompts x %d completions on %s",
             model_name, task.name, len(train_rows), len(val_rows), settings.steps, settings.prompts_per_step,
             settings.num_generations, device)
    val_prompts = [prompt_text(tokenizer, task.messages(r), settings.answer_prefix) for _, r in val_rows.iterrows()]
    val_ids = list(val_rows["instance_id"])
    rows: list[dict[str, Any]] = []
    grammar = None
    if settings.grammar:
        grammar = rollout_grammar(task, pd.concat([train_rows, val_rows]), tokenizer, settings, Path(base_dir),
                                  eos_ids(model, tokenizer))
        log.info("rollouts and validation under the output grammar (%d distinct, vocabulary of %s), repetition penalty %g",
                 len(grammar.distinct), grammar.vocab.path, grammar.penalty)
    use_vllm, generation_kwargs = vllm_rollouts(grammar, settings)
    val_processor = None if grammar is None else (lambda idx: grammar.processor([val_ids[i] for i in idx]))

    def validate(m: Any, step: int) -> tuple[dict[str, float], list[CompletionScore]]:
        t0 = time.perf_counter()
        texts, finish = generate_greedy(m, tokenizer, val_prompts, settings.validation_max_tokens or settings.max_completion_length,
                                        settings.validation_batch_size, processor=val_processor)
        scores, frame = score_fn(val_ids, [settings.answer_prefix + t for t in texts], finish)
        metrics = validation_metrics(frame, scores)
        log.info("validation at step %d (%.0fs): OLR %.3f, strict OLR %.3f, Perf %.3f, Cov %.3f, parse rate %.2f "
                 "(parse statuses %s)", step, time.perf_counter() - t0, metrics["val_olr"], metrics["val_olr_strict"],
                 metrics["val_perf"], metrics["val_cov"], metrics["val_parse_rate"], dict(Counter(s.parse_status for s in scores)))
        log.debug("validation at step %d, first completion: %r", step, texts[0][:2000] if texts else "")
        return metrics, scores

    model.to(device)
    base_metrics, base_scores = validate(model, 0)
    reward_cfg = settings.reward
    if settings.calibrate_gates:
        reward_cfg = calibrate_targets(base_scores, reward_cfg)
        log.info("gate targets calibrated on the base model: evidence %.1f, words %.0f, coverage %.2f",
                 reward_cfg.evidence_target, reward_cfg.words_target, reward_cfg.coverage_target)
    rows.append({"step": 0, **base_metrics, "checkpoint": "base", "wall_s": time.perf_counter() - t_start})

    reward = TempoReward(score_fn, reward=reward_cfg, answer_prefix=settings.answer_prefix,
                         max_completion_length=settings.max_completion_length,
                         eos_token_ids=[tokenizer.eos_token_id] if tokenizer.eos_token_id is not None else [])
    n_needed = settings.steps * settings.prompts_per_step
    reps = max(1, math.ceil(n_needed / max(1, len(train_rows))))
    records = [{"prompt": prompt_text(tokenizer, task.messages(r), settings.answer_prefix), "instance_id": r["instance_id"]}
               for _, r in train_rows.iterrows()]
    dataset = Dataset.from_list(records * reps)
    per_device = settings.completions_per_step // settings.gradient_accumulation_steps
    args = GRPOConfig(
        output_dir=str(out_dir / "trainer"),
        max_steps=settings.steps,
        per_device_train_batch_size=per_device,
        gradient_accumulation_steps=settings.gradient_accumulation_steps,
        num_generations=settings.num_generations,
        temperature=settings.temperature,
        max_completion_length=settings.max_completion_length,
        learning_rate=settings.learning_rate,
        lr_scheduler_type="constant",
        warmup_steps=0,
        adam_beta1=settings.adam_beta1,
        adam_beta2=settings.adam_beta2,
        adam_epsilon=settings.adam_epsilon,
        beta=settings.beta_kl,
        epsilon=settings.epsilon_low,
        epsilon_high=settings.epsilon_high,
        loss_type=settings.loss_type,
        scale_rewards="group",  # z-score within each prompt's group (the leakage offset then changes no advantage)
        logging_steps=1,
        save_strategy="no",
        report_to=[],
        seed=settings.seed,
        data_seed=settings.seed,
        use_cpu=device == "cpu",
        bf16=settings.bf16,
        use_vllm=use_vllm,
        gradient_checkpointing=settings.gradient_checkpointing,
        remove_unused_columns=False,
        generation_kwargs=generation_kwargs,
        disable_tqdm=True,  # progress: the steps bar below (a tqdm bar would fill the rule's log with redraws)
    )
    peft_config = LoraConfig(r=settings.lora_r, lora_alpha=settings.lora_alpha, lora_dropout=settings.lora_dropout,
                             target_modules=list(settings.target_modules), task_type="CAUSAL_LM")
    val_at = set(validation_steps(settings.steps, settings.validation_points))
    best = {"olr": math.inf, "step": None}

    class _Tempo(TrainerCallback):
        def on_step_end(self, args, state, control, model=None, **kw):  # noqa: ANN001
            step = int(state.global_step)
            row: dict[str, Any] = {"step": step, **reward.take_stats()}
            if step in val_at:
                metrics, _ = validate(model, step)
                row.update(metrics)
                olr = metrics["val_olr"]
                if not math.isnan(olr) and olr < best["olr"]:
                    best.update(olr=olr, step=step)
                    _save_adapter(model, out_dir / "best")
                    row["checkpoint"] = "best"
            row["wall_s"] = time.perf_counter() - t_start
            rows.append(row)
            steps_bar.update(1)
            log.info("step %d/%d: performance mode %.2f, mean leak %.2f, mean reward %.3f (sd %.3f), parse failures %.2f, "
                     "answers without evidence %.2f", step, settings.steps, row.get("perf_mode_fraction", float("nan")),
                     row.get("mean_leak", float("nan")), row.get("mean_reward", float("nan")), row.get("reward_std", float("nan")),
                     row.get("parse_fail_rate", float("nan")), row.get("no_evidence_rate", float("nan")))

    kwargs: dict[str, Any] = {}
    trainer_cls: type = GRPOTrainer
    if grammar is not None:
        trainer_cls, kwargs = _grammar_trainer(GRPOTrainer), {"rollout_grammar": grammar}
    trainer = trainer_cls(model=model, reward_funcs=[reward], args=args, train_dataset=dataset,
                          processing_class=tokenizer, peft_config=peft_config, callbacks=[_Tempo()], **kwargs)
    with Progress(settings.steps, "train", unit="step", calls=False) as steps_bar:
        trainer.train()
    _save_adapter(trainer.model, out_dir / "final")
    if best["step"] is None:  # no validation gave an OLR (no claims): the final adapter is also "best"
        _save_adapter(trainer.model, out_dir / "best")
        best["step"] = settings.steps
    chosen = out_dir / ("best" if settings.checkpoint == "best" else "final")
    _copy_adapter(chosen, out_dir / "adapter")
    # merge the trainer's own log (loss, kl, lr) into the step rows
    for hist in trainer.state.log_history:
        step = int(hist.get("step", -1))
        for r in rows:
            if r["step"] == step:
                r.setdefault("loss", hist.get("loss"))
                r.setdefault("kl", hist.get("kl"))
                r.setdefault("learning_rate", hist.get("learning_rate"))
    frame = pd.DataFrame(rows)
    frame["model"], frame["task"] = model_name, task.name
    frame = frame.reindex(columns=TRAINING_LOG_COLUMNS)
    summary = {
        "model": model_name,
        "task": task.name,
        "steps": settings.steps,
        "best_step": best["step"],
        "best_val_olr": None if math.isinf(best["olr"]) else best["olr"],
        "checkpoint": settings.checkpoint,
        "base_val": base_metrics,
        "final_val": {k: rows[-1].get(k) for k in base_metrics},
        "reward": dataclasses.asdict(reward_cfg),
        "settings": {k: v for k, v in dataclasses.asdict(settings).items() if k != "reward"},
        "n_train_instances": len(train_rows),
        "n_validation_instances": len(val_rows),
        "device": device,
        "wall_s": time.perf_counter() - t_start,
    }
    return TrainingResult(log=frame, summary=summary)


def _save_adapter(model: Any, path: Path) -> None:
    """Save the PEFT adapter of ``model`` to ``path`` atomically (a temp dir beside it, then renamed)."""
    tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", dir=path.parent))
    model.save_pretrained(str(tmp))
    replace_dir(tmp, path)


def _copy_adapter(src: Path, dst: Path) -> None:
    """Copy the adapter directory ``src`` to ``dst`` atomically."""
    tmp = Path(tempfile.mkdtemp(prefix=f".{dst.name}.", dir=dst.parent))
    shutil.copytree(src, tmp, dirs_exist_ok=True)
    replace_dir(tmp, dst)


def write_summary(path: str | Path, summary: dict[str, Any]) -> None:
    """Write the training summary JSON atomically (NaN written as null)."""
    from anachron.io import write_json

    def clean(v: Any) -> Any:
        if is_nan(v):
            return None
        if isinstance(v, dict):
            return {k: clean(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [clean(x) for x in v]
        return v

    write_json(path, clean(summary))


__all__ = [
    "TempoReward",
    "TrainSettings",
    "TrainingResult",
    "eos_ids",
    "generate_greedy",
    "rollout_grammar",
    "settings_for",
    "vllm_rollouts",
    "prompt_text",
    "split_train_validation",
    "train_tempo",
    "validation_metrics",
    "validation_steps",
    "write_summary",
]
