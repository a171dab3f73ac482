"""The TEMPO reward (anachron.training.rewards): gates, the mode gate, the format penalty, grouping
by instance id, and the anti-gaming properties (dropping or blurring dates never pays)."""

from __future__ import annotations

import math
import subprocess
import sys
from dataclasses import replace

import numpy as np
import pytest

from anachron.tables import EVIDENCE_USABLE, PREDICTION_USABLE
from anachron.tables import ParseStatus
from anachron.training.rewards import (
    CompletionScore,
    GroupResult,
    RewardConfig,
    batch_rewards,
    calibrate_targets,
    coverage_gate,
    evidence_gate,
    group_advantages,
    group_rewards,
    leakage_reward,
    performance_reward,
    reasoning_gate,
    step_stats,
)

from conftest import REPO

CFG = RewardConfig()
STATUSES = (*sorted(EVIDENCE_USABLE), ParseStatus.INVALID, ParseStatus.NOT_JSON, ParseStatus.EMPTY)


def sc(iid="a", *, status=ParseStatus.OK, c=0, n=8, cov=1.0, words=120, perf=0.8, overlong=False, rleaks=0, recovered=None) -> CompletionScore:
    if status not in PREDICTION_USABLE:
        perf = math.nan
    if recovered is None:  # a cut-off answer with complete evidence items in it, unless said otherwise
        recovered = 2 if overlong and status not in EVIDENCE_USABLE else 0
    return CompletionScore(iid, status, c, n, cov, words, perf, overlong, rleaks, recovered)


def degenerate(iid="a", **kw) -> CompletionScore:
    return sc(iid, status=ParseStatus.NOT_JSON, c=0, n=0, cov=0.0, words=0, **kw)


def near_miss(iid="a", **kw) -> CompletionScore:
    return sc(iid, status=ParseStatus.INVALID_PREDICTION, **kw)


def test_pure_module_imports_no_torch_pandas_verifier_or_llm():
    code = (
        "import sys; import anachron.training, anachron.training.rewards; "
        "bad = [m for m in ('torch', 'pandas', 'anachron.verify', 'anachron.llm') if m in sys.modules]; "
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO, env={"PYTHONPATH": str(REPO / "src")})


def test_scoring_module_imports_no_torch():
    code = "import sys; import anachron.training.scoring; assert 'torch' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO, env={"PYTHONPATH": str(REPO / "src")})


def test_completion_score_properties():
    assert sc().valid and sc().evidence_usable and not sc().near_miss
    nm = near_miss()
    assert not nm.valid and nm.evidence_usable and nm.near_miss
    d = degenerate()
    assert not d.valid and not d.evidence_usable and not d.near_miss
    assert degenerate(overlong=True).near_miss  # cut off at the token limit after complete evidence items
    assert not degenerate(overlong=True, recovered=0).near_miss  # cut off with nothing well-formed: degenerate
    assert sc(overlong=True).valid and not sc(overlong=True).near_miss
    # parsed, but every evidence item was a template echo ("...") the parser dropped: nothing to verify
    echo = sc(n=0, cov=0.0)
    assert not echo.valid and not echo.evidence_usable and not echo.near_miss


def test_an_answer_without_evidence_is_never_the_leak_free_winner():
    """Writing "..." for every fact leaves no claim to leak; it must not pay (it is a degenerate
    format failure, below every valid member, in a group of its own too)."""
    echo = sc(n=0, cov=0.0, perf=1.0)
    honest, leaky = sc(perf=0.2), sc(c=1, perf=0.2)
    for group in ([honest, echo], [leaky, echo], [honest, leaky, echo]):
        rewards, (g,) = batch_rewards(group)
        assert rewards[-1] < min(rewards[:-1])
    rewards, (g,) = batch_rewards([echo, echo])
    assert g.mode == "failed" and all(r < 0 for r in rewards)


# -- gates -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "gate, target", [(coverage_gate, CFG.coverage_target), (evidence_gate, CFG.evidence_target), (reasoning_gate, CFG.words_target)]
)
def test_gates_bounded_monotone_and_one_at_target(gate, target):
    xs = np.concatenate([[-5.0, 0.0], np.linspace(0, 3 * target, 301), [math.inf]])
    ys = [gate(x, CFG) for x in xs]
    assert all(CFG.gate_floor <= y <= 1.0 for y in ys)
    assert all(b >= a for a, b in zip(ys[2:], ys[3:]))
    assert gate(target, CFG) == 1.0 and gate(2 * target, CFG) == 1.0 and gate(math.inf, CFG) == 1.0
    assert gate(0, CFG) == gate(-1, CFG) == gate(math.nan, CFG) == gate(None, CFG) == CFG.gate_floor
    assert CFG.gate_floor < gate(target / 2, CFG) < 1.0
    low = RewardConfig(gate_floor=0.2)
    assert gate(0, low) == 0.2 and gate(target, low) == 1.0


def test_leakage_and_performance_rewards():
    raw = RewardConfig(leak_offset=0.0)
    assert leakage_reward(sc(c=0, n=8), raw) == pytest.approx(1.0 + 0.1)
    assert leakage_reward(sc(c=2, n=1), raw) == pytest.approx(math.exp(-1.0) + 0.1 * (0.5 + 0.5 / 8))
    assert CFG.offset == pytest.approx(1.6)
    assert leakage_reward(sc(c=2, n=1)) == pytest.approx(math.exp(-1.0) + 0.1 * (0.5 + 0.5 / 8) - 1.6)
    values = [leakage_reward(sc(c=c)) for c in range(8)]
    assert all(b < a for a, b in zip(values, values[1:])) and max(values) <= -CFG.format_penalty
    # reasoning leaks count in c (weight 1 by default, 0 switches them off)
    assert leakage_reward(sc(c=1, rleaks=1)) == pytest.approx(leakage_reward(sc(c=2)))
    assert leakage_reward(sc(c=1, rleaks=3), RewardConfig(reasoning_leak_weight=0)) == pytest.approx(leakage_reward(sc(c=1)))
    assert performance_reward(sc(perf=0.8, cov=1, n=8, words=120)) == pytest.approx(0.8)
    assert performance_reward(sc(perf=0.8, cov=0.5, n=4, words=60)) == pytest.approx(0.8 * 0.75**3)
    assert performance_reward(sc(perf=0.8, cov=0, n=0, words=0)) == pytest.approx(0.8 * 0.5**3)  # bounded: never 0
    assert performance_reward(near_miss()) == 0.0  # NaN perf
    assert performance_reward(sc(perf=1.7)) == 1.0


def test_config_is_validated_by_key():
    for key, bad in [("leak_decay", 0.0), ("gate_floor", 1.5), ("near_miss_factor", 1.0), ("min_spread", 0.0),
                     ("format_penalty", -1.0), ("coverage_target", 0.0), ("evidence_target", math.nan)]:
        with pytest.raises(ValueError, match=f"training.reward.{key}"):
            RewardConfig(**{key: bad})


# -- the mode gate -----------------------------------------------------------------------------


def test_one_leaked_completion_puts_the_group_in_leakage_mode_with_nonzero_advantages():
    clean = [sc(perf=p) for p in (0.9, 0.6, 0.3)]
    assert group_rewards(clean).mode == "performance"
    group = clean + [sc(perf=0.95, c=1)]
    g = group_rewards(group)
    assert g.mode == "leakage" and g.n_valid == 4
    assert g.rewards[:3] == [pytest.approx(leakage_reward(s)) for s in clean]  # perf no longer matters
    assert g.rewards[3] < min(g.rewards[:3])  # the leaker is the worst of its group
    adv = group_advantages(g.rewards, [s.instance_id for s in group])
    assert np.any(adv != 0) and adv[3] < 0 and adv[3] == adv.min()
    assert g.mean_leak == pytest.approx(0.25)


def test_a_leak_in_evidence_whose_prediction_failed_still_gates_the_group():
    g = group_rewards([sc(perf=0.9), sc(perf=0.5), near_miss(c=2)])
    assert g.mode == "leakage"
    # a degenerate completion has no verified evidence: its (meaningless) count is ignored
    g2 = group_rewards([sc(perf=0.9), sc(perf=0.5), replace(degenerate(), leak_count=5)])
    assert g2.mode == "performance" and math.isnan(group_rewards([degenerate()]).mean_leak)


# -- the format penalty ------------------------------------------------------------------------


def _check_penalty_order(scores, rewards):
    valid = [r for s, r in zip(scores, rewards) if s.valid]
    nm = [r for s, r in zip(scores, rewards) if s.near_miss]
    dg = [r for s, r in zip(scores, rewards) if not s.valid and not s.near_miss]
    if valid:
        assert all(r < min(valid) for r in nm + dg)
    if nm and dg:
        assert min(nm) > max(dg)


@pytest.mark.parametrize(
    "group",
    [
        [sc(perf=0.9), sc(perf=0.2), degenerate(), near_miss()],  # performance mode, wide spread
        [sc(perf=0.5), sc(perf=0.5), degenerate(), near_miss()],  # equal valid rewards: min_spread
        [sc(perf=0.0), degenerate(), near_miss(overlong=True)],  # worst valid reward 0
        [sc(c=3), sc(c=0), degenerate(), near_miss(c=4)],  # leakage mode, leaking near miss
        [sc(c=1), near_miss(c=0), near_miss(c=9), degenerate(overlong=False)],
        [sc(perf=0.7), degenerate(), degenerate()],
    ],
)
def test_format_penalty_strictly_below_the_worst_valid_and_near_miss_above_degenerate(group):
    g = group_rewards(group)
    assert g.n_valid == sum(s.valid for s in group) and g.n_failed == len(group) - g.n_valid
    assert g.n_near_miss == sum(s.near_miss for s in group)
    _check_penalty_order(group, g.rewards)


def test_format_penalty_ratio_cap_binds():
    # close valid rewards: the gap is alpha x spread, far less than the configured penalty
    group = [sc(perf=0.50), sc(perf=0.53), degenerate(), near_miss()]
    g = group_rewards(group)
    worst = min(g.rewards[:2])
    spread = max(g.rewards[:2]) - worst
    assert spread == pytest.approx(0.03)
    assert worst - g.rewards[2] == pytest.approx(CFG.penalty_ratio_cap * spread)  # 0.15 < 0.5
    assert worst - g.rewards[3] == pytest.approx(CFG.near_miss_factor * CFG.penalty_ratio_cap * spread)
    # equal valid rewards: min_spread keeps the gap positive
    g = group_rewards([sc(perf=0.5), sc(perf=0.5), degenerate()])
    assert g.rewards[0] - g.rewards[2] == pytest.approx(CFG.penalty_ratio_cap * CFG.min_spread)
    # a wide spread: the configured penalty is the cap
    g = group_rewards([sc(perf=1.0), sc(perf=0.0), degenerate()])
    assert g.rewards[2] == pytest.approx(0.0 - CFG.format_penalty)
    g = group_rewards([sc(perf=1.0), sc(perf=0.9), degenerate()], RewardConfig(penalty_ratio_cap=1.0))
    assert g.rewards[1] - g.rewards[2] == pytest.approx(0.1)


def test_failed_and_empty_groups_do_not_crash():
    g = group_rewards([degenerate(), near_miss(), degenerate(overlong=True), sc(status=ParseStatus.EMPTY)])
    assert g.mode == "failed" and g.n_valid == 0 and g.n_failed == 4 and g.n_near_miss == 2
    assert g.rewards == pytest.approx([-0.5, -0.25, -0.25, -0.5])
    # no valid member but a leaking near miss: leakage mode, the leaker below the clean near miss
    g = group_rewards([near_miss(c=0), near_miss(c=2), degenerate()])
    assert g.mode == "leakage" and g.rewards[2] < g.rewards[1] < g.rewards[0] == pytest.approx(-0.25)
    empty = group_rewards([])
    assert isinstance(empty, GroupResult) and empty.mode == "failed" and empty.rewards == []
    assert batch_rewards([]) == ([], [])
    stats = step_stats([empty, g])
    assert stats["n_groups"] == 2 and stats["n_failed_groups"] == 1 and stats["perf_mode_fraction"] == 0.0
    with pytest.raises(ValueError, match="one instance"):
        group_rewards([sc("a"), sc("b")])


# -- grouping by instance id ---------------------------------------------------------------------


def _random_score(rng: np.random.Generator, iid: str) -> CompletionScore:
    status = STATUSES[rng.integers(len(STATUSES))]
    return sc(
        iid,
        status=status,
        c=int(rng.integers(0, 4)) * int(rng.random() < 0.4),
        n=int(rng.integers(0, 12)),
        cov=float(rng.random()),
        words=int(rng.integers(0, 250)),
        perf=float(rng.random()),
        overlong=bool(rng.random() < 0.2),
        rleaks=int(rng.random() < 0.1),
    )


def test_grouping_is_by_instance_id_under_shuffled_order():
    rng = np.random.default_rng(3)
    scores = [_random_score(rng, f"inst{k}") for k in range(6) for _ in range(5)]
    rewards, groups = batch_rewards(scores)
    assert [g.instance_id for g in groups] == [f"inst{k}" for k in range(6)]
    for _ in range(5):
        perm = rng.permutation(len(scores))
        shuffled = [scores[i] for i in perm]
        r2, g2 = batch_rewards(shuffled)
        assert r2 == pytest.approx([rewards[i] for i in perm])
        assert [g.instance_id for g in g2] == list(dict.fromkeys(s.instance_id for s in shuffled))
    # by id, not by position: interleaved members give the same rewards as contiguous ones
    inter = [scores[k * 5 + j] for j in range(5) for k in range(6)]
    assert batch_rewards(inter)[0] == pytest.approx([rewards[k * 5 + j] for j in range(5) for k in range(6)])


def test_group_advantages_z_score_within_instance_groups():
    rewards = [1.0, 0.0, 5.0, 0.5, 5.0, 7.0]
    ids = ["a", "a", "b", "a", "b", "c"]
    adv = group_advantages(rewards, ids)
    a = np.array([1.0, 0.0, 0.5])
    np.testing.assert_allclose(adv[[0, 1, 3]], (a - a.mean()) / (a.std(ddof=1) + 1e-4))
    assert adv[2] == adv[4] == 0.0 and adv[5] == 0.0  # equal rewards; a group of one
    assert group_advantages([], []).shape == (0,)
    with pytest.raises(ValueError):
        group_advantages([1.0], ["a", "b"])


# -- dropping or blurring dates never pays ------------------------------------------------------


@pytest.mark.parametrize("perf", [0.0, 0.1, 0.5, 1.0])
@pytest.mark.parametrize("lost", [1, 3, 8])
def test_dropping_dates_never_raises_the_reward(perf, lost):
    honest = sc("x", c=0, n=8, perf=perf)
    undated = replace(honest, leak_count=lost)  # its dates removed: `lost` claims are now undated
    blurred = replace(honest, leak_count=1)  # one date blurred across the cutoff: ambiguous
    others_clean = [sc("x", perf=p) for p in (0.2, 0.6, 0.9)]
    others_leaky = [sc("x", perf=0.7, c=2), sc("x", perf=0.4)]
    for twin in (undated, blurred):
        # against a fully clean group: the honest completion keeps it in performance mode
        honest_r = group_rewards(others_clean + [honest]).rewards[-1]
        g = group_rewards(others_clean + [twin])
        assert g.mode == "leakage" and g.rewards[-1] < honest_r
        # in the group it lands in: the honest twin there earns more
        assert group_rewards(others_leaky + [twin]).rewards[-1] < group_rewards(others_leaky + [honest]).rewards[-1]
        # and in any group at all: a leaking completion earns less than any leak-free valid one
        assert g.rewards[-1] < min(group_rewards(others_clean + [honest]).rewards)


def test_more_leaks_never_raise_a_members_reward_random_groups():
    rng = np.random.default_rng(11)
    for case in range(400):
        size = int(rng.integers(1, 9))
        group = [_random_score(rng, "g") for _ in range(size)]
        j = int(rng.integers(size))
        more = list(group)
        more[j] = replace(group[j], leak_count=group[j].leak_count + int(rng.integers(1, 4)))
        before, after = group_rewards(group).rewards[j], group_rewards(more).rewards[j]
        assert after <= before + 1e-12, (case, group, j)
        if group[j].valid:
            assert after < before
        _check_penalty_order(group, group_rewards(group).rewards)


# -- statistics and calibration -------------------------------------------------------------------


def test_step_stats_on_a_hand_made_batch():
    batch = [
        sc("p", perf=1.0), sc("p", perf=0.5), degenerate("p"),  # performance
        sc("l", c=2), sc("l", c=0), near_miss("l", c=1),  # leakage
        degenerate("f"), near_miss("f"),  # failed
    ]
    rewards, groups = batch_rewards(batch)
    s = step_stats(groups)
    assert [g.mode for g in groups] == ["performance", "leakage", "failed"]
    assert s["n_groups"] == 3 and s["n_completions"] == 8 and s["n_failed_groups"] == 1
    assert s["n_leakage_groups"] == 1 and s["n_groups_without_valid"] == 1
    assert s["perf_mode_fraction"] == pytest.approx(0.5)
    # evidence-usable completions: p: 2 (c 0, 0), l: 3 (c 2, 0, 1), f: 1 (c 0) -> 3 / 6
    assert s["mean_leak"] == pytest.approx(0.5)
    assert s["mean_reward"] == pytest.approx(np.mean(rewards)) and s["reward_std"] == pytest.approx(np.std(rewards))
    assert s["parse_fail_rate"] == pytest.approx(4 / 8) and s["near_miss_rate"] == pytest.approx(2 / 8)
    assert rewards[-2:] == pytest.approx([-0.5, -0.25])
    assert s["no_evidence_rate"] == 0
    # an answer of template echoes parsed (the evaluation counts it), but it is failed for the reward
    _, echo_groups = batch_rewards([sc("e"), sc("e", n=0, cov=0.0)])
    echo = step_stats(echo_groups)
    assert echo["parse_fail_rate"] == 0 and echo["no_evidence_rate"] == pytest.approx(0.5)
    assert echo_groups[0].n_failed == 1 and echo_groups[0].n_unparsed == 0
    none = step_stats([])
    assert none["n_groups"] == 0 and math.isnan(none["perf_mode_fraction"]) and math.isnan(none["mean_reward"])


def test_calibrate_targets_on_the_base_model():
    base = [sc(n=3, words=40, cov=0.5), sc(n=5, words=60, cov=1.0), sc(n=7, words=200, cov=1.0), degenerate()]
    cal = calibrate_targets(base, CFG)
    assert (cal.evidence_target, cal.words_target, cal.coverage_target) == (5.0, 60.0, 1.0)
    assert cal.leak_decay == CFG.leak_decay and cal.format_penalty == CFG.format_penalty
    # calibration only lowers a target: a base model above it keeps the configured one
    rich = calibrate_targets([sc(n=20, words=500)], CFG)
    assert (rich.evidence_target, rich.words_target) == (8.0, 120.0)
    floor = calibrate_targets([sc(n=1, words=0, cov=0.0)], CFG)
    assert (floor.evidence_target, floor.words_target, floor.coverage_target) == (1.0, 1.0, 0.05)
    assert calibrate_targets([degenerate(), near_miss()], CFG) is CFG
    assert calibrate_targets(base, CFG, quantile=0.0).evidence_target == 3.0
    with pytest.raises(ValueError):
        calibrate_targets(base, CFG, quantile=1.5)
