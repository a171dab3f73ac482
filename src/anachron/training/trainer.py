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
            put back in front of the completion before parsing (e.g. ``{"evidence": [`` for a
            small model that otherwise rarely starts a JSON answer; the grammar-constrained
            inference starts the same way). Empty: none.
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
    calibrate_gates: bool = True
    checkpoint: str = "best"
    seed: int = 42
    device: str = "auto"
    bf16: bool = False
    use_vllm: bool = False
    gradient_checkpointing: bool = False
    validation_batch_size: int = 8
    validation_max_tokens: int | None = None
    reward: RewardConfig = field(default_factory=RewardConfig)

    def __post_init__(self) -> None:
        if self.completions_per_step % self.gradient_accumulation_steps:
            raise ValueError(
                f"training.prompts_per_step x training.num_generations ({self.completions_per_step}) must divide by "
                f"training.gradient_accumulation_steps ({self.gradient_accumulation_steps})"
            )
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
        names = {f.name for f in dataclasses.fields(cls)}
        kwargs = {k: v for k, v in flat.items() if k in names}
        reward_names = {f.name for f in dataclasses.fields(RewardConfig)}
        kwargs["reward"] = RewardConfig(**{k: v for k, v in (block.get("reward") or {}).items() if k in reward_names})
        return cls(**kwargs)

    @property
    def completions_per_step(self) -> int:
        """B x G: completions generated and trained on per optimizer step."""
        return self.prompts_per_step * self.num_generations


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


def generate_greedy(model: Any, tokenizer: Any, prompts: Sequence[str], max_new_tokens: int, batch_size: int = 8) -> tuple[list[str], list[str]]:
    """Greedy completions of pre-templated ``prompts``: (texts, finish reasons ``stop``/``length``).

    Left-padded batches of ``batch_size``; special tokens are dropped from the text.
    """
    import torch

    texts: list[str] = []
    finish: list[str] = []
    pad_side = tokenizer.padding_side
    tokenizer.padding_side = "left"
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    device = next(model.parameters()).device
    was_training = model.training
    model.eval()
    try:
        for i in range(0, len(prompts), batch_size):
            batch = tokenizer(list(prompts[i:i + batch_size]), return_tensors="pt", padding=True, add_special_tokens=False).to(device)
            with torch.no_grad():
                out = model.generate(**batch, max_new_tokens=max_new_tokens, do_sample=False,
                                     pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id)
            new = out[:, batch["input_ids"].shape[1]:]
            for row in new:
                ids = row.tolist()
                ended = tokenizer.eos_token_id in ids
                texts.append(tokenizer.decode(row, skip_special_tokens=True))
                finish.append("stop" if ended or len(ids) < max_new_tokens else "length")
    finally:
        tokenizer.padding_side = pad_side
        if was_training:
            model.train()
    return texts, finish


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

    def validate(m: Any, step: int) -> tuple[dict[str, float], list[CompletionScore]]:
        t0 = time.perf_counter()
        texts, finish = generate_greedy(m, tokenizer, val_prompts, settings.validation_max_tokens or settings.max_completion_length,
                                        settings.validation_batch_size)
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
        use_vllm=settings.use_vllm,
        gradient_checkpointing=settings.gradient_checkpointing,
        remove_unused_columns=False,
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
            log.info("step %d/%d: performance mode %.2f, mean leak %.2f, mean reward %.3f (sd %.3f), parse failures %.2f",
                     step, settings.steps, row.get("perf_mode_fraction", float("nan")), row.get("mean_leak", float("nan")),
                     row.get("mean_reward", float("nan")), row.get("reward_std", float("nan")), row.get("parse_fail_rate", float("nan")))

    trainer = GRPOTrainer(model=model, reward_funcs=[reward], args=args, train_dataset=dataset,
                          processing_class=tokenizer, peft_config=peft_config, callbacks=[_Tempo()])
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
    "generate_greedy",
    "prompt_text",
    "split_train_validation",
    "train_tempo",
    "validation_metrics",
    "validation_steps",
    "write_summary",
]
