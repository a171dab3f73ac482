"""The TEMPO reward: per-completion scores in, one reward per completion out (pure, no model).

TEMPO (the paper's §3.2, App. C.4-C.7) rewards the G completions of one prompt as a *group*:

* **mode gate** (§3.2, Eq. 2): if any completion of the group leaked, every valid completion of
  the group is rewarded in *leakage mode*; only when all of them are leak-free is the group in
  *performance mode*. "Leaked" uses the strict count ``c`` of :class:`CompletionScore` (leaked +
  undated + ambiguous evidence claims, the numerator of strict OLR), so a completion cannot get out
  of leakage mode by dropping or blurring its dates: an undated or straddling claim counts as a
  leaked one. A completion whose evidence parsed but whose prediction did not is counted by the
  gate too, so breaking the prediction does not hide a leak.
* **leakage mode** (Eq. 3 and the leakage-mode bonus of App. C.4): ``exp(-leak_decay * c)`` plus
  ``leak_bonus * d(n_evidence)``, lowered by a constant (:attr:`RewardConfig.offset`, see there).
* **performance mode** (Eq. 4, App. C.4): ``perf * g(cov) * d(n_evidence) * w(reasoning words)``,
  each gate bounded in ``[gate_floor, 1]``: a gate scales a correct prediction down, never to 0.
* **format penalty** (App. C.5-C.7): a completion without a usable prediction is rewarded
  relative to the group's worst valid completion, by a gap that is capped at ``alpha`` times the
  spread of the group's valid rewards (the paper's v2 failure: an unbounded penalty dwarfed the
  signal among valid completions); a *near miss* (cut off at the token limit, missing a required
  key, or a prediction that failed with usable evidence: App. C.6's "long, mostly correct
  outputs") gets a smaller gap than degenerate output.

The paper's equations are not in the text this module was written from; the bounded forms below
are this module's own and each is stated where it is defined. Everything here is a function of
:class:`CompletionScore` values (stdlib and numpy only): :mod:`anachron.training.scoring` builds
them with the real parser and verifier.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from anachron.tables import EVIDENCE_USABLE, PREDICTION_USABLE, ParseStatus

MODE_LEAKAGE = "leakage"
MODE_PERFORMANCE = "performance"
#: A group none of whose members has a usable prediction and none of whose evidence leaked.
MODE_FAILED = "failed"


@dataclass(frozen=True)
class CompletionScore:
    """What the reward needs to know about one completion (built by
    :func:`anachron.training.scoring.score_completions`).

    Attributes:
        instance_id: the instance (prompt) the completion answers: the GRPO group key.
        parse_status: a :class:`~anachron.tables.ParseStatus` value.
        leak_count: strict leak count ``c``: evidence claims the verifier found ``leaked``,
            ``undated`` or ``ambiguous`` (0 when the evidence is unusable).
        n_evidence: distinct evidence items (facts compared lower-cased, whitespace collapsed).
        coverage: share of the evidence items cited as ``[k]`` in the reasoning, in [0, 1]
            (0 without evidence).
        reasoning_words: whitespace-separated words of the reasoning.
        perf: the task's Perf of the prediction, in [0, 1]; NaN when the prediction is unusable.
        overlong: generation stopped at the token limit (``finish_reason == "length"``).
        reasoning_leaks: claims of the reasoning (not the evidence) the verifier found
            ``leaked``; added to ``c`` with weight :attr:`RewardConfig.reasoning_leak_weight`, so
            that moving a leaked fact from the evidence list into the prose does not pay.
        n_recovered: complete evidence objects found in a text that does not parse as a whole
            (:func:`anachron.llm.decode.complete_objects`); 0 for a parsed one.
    """

    instance_id: str
    parse_status: str
    leak_count: int
    n_evidence: int
    coverage: float
    reasoning_words: int
    perf: float
    overlong: bool = False
    reasoning_leaks: int = 0
    n_recovered: int = 0

    @property
    def valid(self) -> bool:
        """The prediction is usable (parse status in ``PREDICTION_USABLE``) and so is the evidence
        (:attr:`evidence_usable`)."""
        return self.parse_status in PREDICTION_USABLE and self.n_evidence > 0

    @property
    def evidence_usable(self) -> bool:
        """The evidence and reasoning are usable (parse status in ``EVIDENCE_USABLE``) and at least
        one evidence item is left once the parser drops items without content (template echoes
        such as ``"..."``). An answer left with none has nothing to verify: rewarded as leak-free, it
        would be the cheapest way to ``c = 0``, so the reward treats it as a degenerate format failure."""
        return self.parse_status in EVIDENCE_USABLE and self.n_evidence > 0

    @property
    def near_miss(self) -> bool:
        """Not valid, but close (App. C.6): its evidence parsed (only the prediction failed); or it
        holds at least one complete evidence item and was cut off at the token limit
        (``overlong``) or lacks a required key (status ``invalid``, e.g. the prediction left out):
        a long, mostly well-formed answer. Without a complete item it is degenerate (``{}``, an
        answer rambling until the limit), as is an answer with duplicate keys (ambiguous):
        otherwise rambling would earn more than stopping. Cut off means ``overlong`` here, not the
        status ``truncated``: the trainer counts a rollout's tokens itself, so an answer that
        ends inside a JSON value without reaching the limit stopped on its own, broken."""
        if self.valid:
            return False
        close = self.overlong or self.parse_status == ParseStatus.INVALID
        return self.evidence_usable or (close and self.n_recovered > 0)


@dataclass(frozen=True)
class RewardConfig:
    """Reward settings (config keys ``training.reward.*``); defaults are the paper's where it gives one.

    Attributes:
        leak_decay: ``lambda`` of the leakage reward ``exp(-lambda * c)`` (TEMPO Eq. 3: 0.5).
        leak_bonus: weight of the evidence-diversity gate ``d`` added in leakage mode (App. C.4,
            "leakage-mode bonuses": ``d`` but not ``w``, since shorter reasoning is a valid way to
            avoid leaked claims).
        evidence_target: evidence items at which ``d`` reaches 1 (App. C.7: 8, the base model's median).
        words_target: reasoning words at which ``w`` reaches 1 (App. C.7: 120).
        coverage_target: coverage at which ``g`` reaches 1.
        gate_floor: every gate maps into ``[gate_floor, 1]``.
        format_penalty: the largest gap below the group's worst valid reward for a degenerate
            completion (and the penalty itself in a group without a valid completion).
        penalty_ratio_cap: ``alpha`` of App. C.5/C.7 (5.0): the gap is at most ``alpha`` times the
            spread of the group's valid rewards.
        min_spread: the spread used when the group's valid rewards (nearly) coincide, so that
            the gap stays positive.
        near_miss_factor: a near miss's gap as a share of a degenerate completion's gap, in (0, 1).
        reasoning_leak_weight: weight of :attr:`CompletionScore.reasoning_leaks` in ``c``
            (0: count evidence claims only, as OLR does).
        leak_offset: the constant subtracted from every leakage-mode reward; None means
            :attr:`offset`'s default. GRPO normalises rewards within a group and a group has one
            mode, so the offset changes no advantage; it only orders the two modes' rewards.

    Raises:
        ValueError: a value out of its range (the message names the key).
    """

    leak_decay: float = 0.5
    leak_bonus: float = 0.1
    evidence_target: float = 8.0
    words_target: float = 120.0
    coverage_target: float = 1.0
    gate_floor: float = 0.5
    format_penalty: float = 0.5
    penalty_ratio_cap: float = 5.0
    min_spread: float = 0.02
    near_miss_factor: float = 0.5
    reasoning_leak_weight: float = 1.0
    leak_offset: float | None = None

    def __post_init__(self) -> None:
        checks = {
            "leak_decay": self.leak_decay > 0,
            "leak_bonus": self.leak_bonus >= 0,
            "evidence_target": self.evidence_target > 0,
            "words_target": self.words_target > 0,
            "coverage_target": 0 < self.coverage_target <= 1,
            "gate_floor": 0 <= self.gate_floor <= 1,
            "format_penalty": self.format_penalty > 0,
            "penalty_ratio_cap": self.penalty_ratio_cap > 0,
            "min_spread": self.min_spread > 0,
            "near_miss_factor": 0 < self.near_miss_factor < 1,
            "reasoning_leak_weight": self.reasoning_leak_weight >= 0,
            "leak_offset": self.leak_offset is None or math.isfinite(self.leak_offset),
        }
        for key, ok in checks.items():
            value = getattr(self, key)
            if not ok or (isinstance(value, float) and math.isnan(value)):
                raise ValueError(f"training.reward.{key}: {value!r} is out of range")

    @property
    def offset(self) -> float:
        """What leakage-mode rewards are lowered by: ``leak_offset``, by default
        ``1 + leak_bonus + format_penalty``.

        With the default every leakage-mode reward is at most ``-format_penalty`` and every
        performance-mode reward (format penalties included) at least ``-format_penalty``: a
        completion that leaks earns less than any leak-free valid completion of any group, so
        turning an honest date into an undated or straddling claim never raises a reward, and
        a batch's mean reward rises as its groups move into performance mode. 0 gives the
        paper's raw ``exp(-lambda c) + bonus``.
        """
        return (1.0 + self.leak_bonus + self.format_penalty) if self.leak_offset is None else float(self.leak_offset)


DEFAULT_CONFIG = RewardConfig()


def _gate(x: float, target: float, floor: float) -> float:
    """``floor + (1 - floor) * min(1, x / target)``; ``floor`` for NaN, None or ``x <= 0``."""
    try:
        x = float(x)
    except (TypeError, ValueError):
        return floor
    if math.isnan(x) or x <= 0:
        return floor
    return floor + (1.0 - floor) * min(1.0, x / target)


def coverage_gate(cov: float, cfg: RewardConfig = DEFAULT_CONFIG) -> float:
    """Coverage gate ``g(cov)`` (App. C.4), in ``[gate_floor, 1]``.

    Linear from ``gate_floor`` at coverage 0 to 1 at ``coverage_target``, flat above; NaN or
    negative coverage gives ``gate_floor``. Monotone non-decreasing.
    """
    return _gate(cov, cfg.coverage_target, cfg.gate_floor)


def evidence_gate(n: float, cfg: RewardConfig = DEFAULT_CONFIG) -> float:
    """Evidence-diversity gate ``d(n)`` (App. C.4), in ``[gate_floor, 1]``.

    Linear in the number of distinct evidence items from ``gate_floor`` at 0 to 1 at
    ``evidence_target``, flat above (more items than the base model's typical count earn nothing
    more, so the gate fights evidence collapse without rewarding padding). NaN or negative gives
    ``gate_floor``. Monotone non-decreasing.
    """
    return _gate(n, cfg.evidence_target, cfg.gate_floor)


def reasoning_gate(words: float, cfg: RewardConfig = DEFAULT_CONFIG) -> float:
    """Reasoning-quality gate ``w(words)`` (App. C.4), in ``[gate_floor, 1]``.

    Linear in the reasoning's word count from ``gate_floor`` at 0 to 1 at ``words_target``,
    flat above (length past the target earns nothing). NaN or negative gives ``gate_floor``.
    Monotone non-decreasing.
    """
    return _gate(words, cfg.words_target, cfg.gate_floor)


def leak_total(s: CompletionScore, cfg: RewardConfig = DEFAULT_CONFIG) -> float:
    """The ``c`` the reward uses: ``leak_count + reasoning_leak_weight * reasoning_leaks`` (>= 0);
    0 when the completion's evidence is unusable (nothing was verified)."""
    if not s.evidence_usable:
        return 0.0
    return max(0.0, float(s.leak_count)) + cfg.reasoning_leak_weight * max(0.0, float(s.reasoning_leaks))


def leakage_reward(s: CompletionScore, cfg: RewardConfig = DEFAULT_CONFIG) -> float:
    """Leakage-mode reward (TEMPO Eq. 3 plus the App. C.4 bonus):
    ``exp(-leak_decay * c) + leak_bonus * d(n_evidence) - offset``.

    Strictly decreasing in ``c`` (:func:`leak_total`). Range: ``(-offset, 1 + leak_bonus - offset]``;
    with the default offset ``(-1.6, -0.5]``.
    """
    c = leak_total(s, cfg)
    return math.exp(-cfg.leak_decay * c) + cfg.leak_bonus * evidence_gate(s.n_evidence, cfg) - cfg.offset


def performance_reward(s: CompletionScore, cfg: RewardConfig = DEFAULT_CONFIG) -> float:
    """Performance-mode reward (TEMPO Eq. 4, App. C.4): ``perf * g(cov) * d(n) * w(words)``, in [0, 1].

    A NaN (or missing) Perf gives 0; Perf is clipped to [0, 1].
    """
    try:
        perf = float(s.perf)
    except (TypeError, ValueError):
        return 0.0
    if math.isnan(perf):
        return 0.0
    perf = min(1.0, max(0.0, perf))
    return (
        perf
        * coverage_gate(s.coverage, cfg)
        * evidence_gate(s.n_evidence, cfg)
        * reasoning_gate(s.reasoning_words, cfg)
    )


@dataclass
class GroupResult:
    """The rewards of one instance's group of completions (:func:`group_rewards`).

    Attributes:
        instance_id: the group's instance ("" for an empty group).
        mode: ``"leakage"``, ``"performance"`` or ``"failed"`` (no valid member and no leak).
        rewards: one reward per member, in the order the members were given.
        n_valid: members with a usable prediction.
        n_failed: members without one (near misses included).
        n_near_miss: the near misses among them.
        n_unparsed: members whose parse status is not prediction-usable (the evaluation's parse
            failures; a parsed answer without evidence is failed but not unparsed).
        n_no_evidence: parsed members whose every evidence item was dropped as contentless.
        mean_leak: mean strict leak count ``c`` over the members with usable evidence (NaN if none).
        n_evidence_usable: members with usable evidence (the ``mean_leak`` denominator).
    """

    instance_id: str
    mode: str
    rewards: list[float] = field(default_factory=list)
    n_valid: int = 0
    n_failed: int = 0
    n_near_miss: int = 0
    n_unparsed: int = 0
    n_no_evidence: int = 0
    mean_leak: float = math.nan
    n_evidence_usable: int = 0


def _near_miss_share(s: CompletionScore, cfg: RewardConfig) -> float:
    """A near miss's gap as a share of the degenerate gap: ``near_miss_factor`` when its own
    evidence is leak-free, rising with its ``c`` towards (never reaching) the midpoint between
    ``near_miss_factor`` and 1. A leaking near miss earns less than a clean one and more than
    degenerate output (which could otherwise hide its leaks by failing to parse)."""
    f = cfg.near_miss_factor
    c = leak_total(s, cfg)
    return f + 0.5 * (1.0 - f) * (1.0 - math.exp(-cfg.leak_decay * c))


def group_rewards(scores: Sequence[CompletionScore], cfg: RewardConfig = DEFAULT_CONFIG) -> GroupResult:
    """The rewards of the completions of ONE instance (a GRPO group), in input order.

    Mode (TEMPO §3.2, Eq. 2): ``leakage`` when any member with usable evidence has ``c > 0``
    (:func:`leak_total`; a member whose prediction failed counts), else ``performance`` when
    any member is valid, else ``failed``. Valid members get :func:`leakage_reward` or
    :func:`performance_reward` by the mode.

    Format penalty (App. C.5-C.7), by the number of valid members:

    * ``n_valid >= 1``: ``spread = max(min_spread, max(valid) - min(valid))``,
      ``gap = min(format_penalty, penalty_ratio_cap * spread)``; a degenerate member gets
      ``min(valid) - gap``, a near miss ``min(valid) - share * gap`` with ``share`` =
      ``near_miss_factor`` for a leak-free near miss, more for a leaking one but below
      ``(1 + near_miss_factor) / 2``. Both are strictly below the worst valid reward, and a near
      miss strictly above a degenerate member.
    * ``n_valid == 0``: a degenerate member gets ``-format_penalty``, a near miss
      ``-share * format_penalty``.

    The group's valid rewards keep their order; the penalty's gap never exceeds ``alpha`` times
    their spread, so a parse failure cannot dominate the group's normalised advantages.

    Args:
        scores: the group's completions (may be empty: mode ``failed``, no rewards).
        cfg: reward settings.

    Raises:
        ValueError: the members belong to different instances.
    """
    if not scores:
        return GroupResult(instance_id="", mode=MODE_FAILED)
    ids = {s.instance_id for s in scores}
    if len(ids) > 1:
        raise ValueError(f"group_rewards takes the completions of one instance; got {sorted(ids)[:5]}")
    usable = [s for s in scores if s.evidence_usable]
    leaks = [leak_total(s, cfg) for s in usable]
    valid = [s for s in scores if s.valid]
    if any(c > 0 for c in leaks):
        mode, reward_fn = MODE_LEAKAGE, leakage_reward
    else:
        mode, reward_fn = (MODE_PERFORMANCE if valid else MODE_FAILED), performance_reward
    valid_rewards = [reward_fn(s, cfg) for s in valid]
    if valid_rewards:
        worst = min(valid_rewards)
        spread = max(cfg.min_spread, max(valid_rewards) - worst)
        gap = min(cfg.format_penalty, cfg.penalty_ratio_cap * spread)
    else:
        worst, gap = 0.0, cfg.format_penalty
    rewards: list[float] = []
    it = iter(valid_rewards)
    for s in scores:
        if s.valid:
            rewards.append(next(it))
        elif s.near_miss:
            rewards.append(worst - _near_miss_share(s, cfg) * gap)
        else:
            rewards.append(worst - gap)
    return GroupResult(
        instance_id=next(iter(ids)),
        mode=mode,
        rewards=rewards,
        n_valid=len(valid),
        n_failed=len(scores) - len(valid),
        n_unparsed=sum(s.parse_status not in PREDICTION_USABLE for s in scores),
        n_no_evidence=sum(s.parse_status in EVIDENCE_USABLE and s.n_evidence == 0 for s in scores),
        n_near_miss=sum(s.near_miss for s in scores),
        mean_leak=float(np.mean(leaks)) if leaks else math.nan,
        n_evidence_usable=len(usable),
    )


def batch_rewards(
    scores: Sequence[CompletionScore], cfg: RewardConfig = DEFAULT_CONFIG
) -> tuple[list[float], list[GroupResult]]:
    """Rewards of a batch of completions, grouped by ``instance_id`` (never by position).

    Returns:
        ``(rewards, groups)``: one reward per completion aligned with ``scores``, and one
        :class:`GroupResult` per instance in order of first appearance. Reordering ``scores``
        reorders the rewards the same way.
    """
    members: dict[str, list[int]] = {}
    for i, s in enumerate(scores):
        members.setdefault(s.instance_id, []).append(i)
    rewards = [math.nan] * len(scores)
    groups = []
    for idx in members.values():
        g = group_rewards([scores[i] for i in idx], cfg)
        for i, r in zip(idx, g.rewards):
            rewards[i] = r
        groups.append(g)
    return rewards, groups


def group_advantages(rewards: Sequence[float], instance_ids: Sequence[str], eps: float = 1e-4) -> np.ndarray:
    """GRPO advantages: each reward z-scored within its instance-id group.

    ``(r - mean) / (std + eps)`` with the group's sample standard deviation (ddof 1, as TRL's
    ``GRPOTrainer`` computes it); a group of one member or of equal rewards gets zeros.

    Returns:
        float array aligned with ``rewards``.

    Raises:
        ValueError: ``rewards`` and ``instance_ids`` differ in length.
    """
    r = np.asarray(rewards, dtype=float)
    if r.shape != (len(instance_ids),):
        raise ValueError(f"{r.size} rewards for {len(instance_ids)} instance ids")
    out = np.zeros_like(r)
    members: dict[str, list[int]] = {}
    for i, iid in enumerate(instance_ids):
        members.setdefault(iid, []).append(i)
    for idx in members.values():
        v = r[idx]
        if v.size < 2 or np.ptp(v) == 0:
            continue
        out[idx] = (v - v.mean()) / (v.std(ddof=1) + eps)
    return out


def step_stats(groups: Iterable[GroupResult]) -> dict[str, float]:
    """Per-step training statistics of a batch's groups (the training log, docs/methods.md#tempo).

    Returns:
        ``n_groups``; ``n_failed_groups`` (mode ``failed``); ``perf_mode_fraction``
        (performance-mode groups over groups not failed; NaN if none); ``mean_leak`` (mean
        ``c`` over every completion with usable evidence; NaN if none); ``mean_reward`` and
        ``reward_std`` (population std) over every completion (NaN if none);
        ``parse_fail_rate`` (completions whose parse status gives no usable prediction, as the
        evaluation's parse rate counts; NaN if none); ``no_evidence_rate`` (parsed completions left
        without an evidence item, rewarded as degenerate);
        also ``n_completions``, ``n_leakage_groups``, ``n_groups_without_valid`` (groups in
        which no completion is valid, whatever their mode) and ``near_miss_rate``.
    """
    groups = list(groups)
    n_failed_groups = sum(g.mode == MODE_FAILED for g in groups)
    n_perf = sum(g.mode == MODE_PERFORMANCE for g in groups)
    rewards = np.array([r for g in groups for r in g.rewards], dtype=float)
    n = int(rewards.size)
    n_usable = sum(g.n_evidence_usable for g in groups)
    leak_sum = sum(g.mean_leak * g.n_evidence_usable for g in groups if g.n_evidence_usable)
    live = len(groups) - n_failed_groups
    return {
        "n_groups": len(groups),
        "n_completions": n,
        "n_failed_groups": n_failed_groups,
        "n_leakage_groups": sum(g.mode == MODE_LEAKAGE for g in groups),
        "n_groups_without_valid": sum(g.n_valid == 0 for g in groups),
        "perf_mode_fraction": n_perf / live if live else math.nan,
        "mean_leak": leak_sum / n_usable if n_usable else math.nan,
        "mean_reward": float(rewards.mean()) if n else math.nan,
        "reward_std": float(rewards.std()) if n else math.nan,
        "parse_fail_rate": sum(g.n_unparsed for g in groups) / n if n else math.nan,
        "no_evidence_rate": sum(g.n_no_evidence for g in groups) / n if n else math.nan,
        "near_miss_rate": sum(g.n_near_miss for g in groups) / n if n else math.nan,
    }


def calibrate_targets(
    base_scores: Iterable[CompletionScore], cfg: RewardConfig = DEFAULT_CONFIG, quantile: float = 0.5
) -> RewardConfig:
    """Gate targets calibrated on the base model's completions (App. C.7).

    A gate whose target the base model does not reach on its typical output sits near its floor
    for almost every completion and so gives almost no gradient; the paper sets the evidence
    target at the base model's median for that reason (the gate then penalises deterioration
    below the base model, not failure to reach an aspirational level). Each of
    ``evidence_target``, ``words_target`` and ``coverage_target`` becomes
    ``min(configured target, the quantile of the base model's valid completions)``, never below
    1 (evidence, words) or 0.05 (coverage). The configured targets are upper bounds: calibration
    only lowers them.

    Args:
        base_scores: scores of the base model's completions (e.g. on training prompts).
        cfg: the configured reward settings.
        quantile: which quantile of the base model's values, in [0, 1].

    Returns:
        A copy of ``cfg`` with the calibrated targets; ``cfg`` itself when no base completion
        is valid.

    Raises:
        ValueError: ``quantile`` outside [0, 1].
    """
    if not 0.0 <= quantile <= 1.0:
        raise ValueError(f"quantile must be in [0, 1], got {quantile!r}")
    valid = [s for s in base_scores if s.valid]
    if not valid:
        return cfg

    def q(values: list[float]) -> float:
        v = np.asarray(values, dtype=float)
        v = v[~np.isnan(v)]
        return float(np.quantile(v, quantile)) if v.size else math.inf

    return replace(
        cfg,
        evidence_target=max(1.0, min(cfg.evidence_target, q([s.n_evidence for s in valid]))),
        words_target=max(1.0, min(cfg.words_target, q([s.reasoning_words for s in valid]))),
        coverage_target=max(0.05, min(cfg.coverage_target, q([s.coverage for s in valid]))),
    )
