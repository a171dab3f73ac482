"""TEMPO trainer wiring (anachron.training.trainer): settings from the config, the train /
validation split, the reward function TRL calls, one real GRPO step on a tiny random model with
rewards from the real verifier, and the training figure."""

from __future__ import annotations

import copy
import json
import math

import pandas as pd
import pytest

from anachron.config import validate_config
from anachron.errors import ConfigError
from anachron.tables import INSTANCE_COLUMNS, TRAINING_LOG_COLUMNS
from anachron.tasks.registry import get_task
from anachron.training.rewards import RewardConfig
from anachron.training.scoring import score_completions
from anachron.training.trainer import (
    TempoReward,
    TrainSettings,
    split_train_validation,
    validation_steps,
)

LEGAL = get_task("legal")


def _legal(iid: str, cutoff: str, decided: str, wins: int = 1) -> dict:
    inputs = {"kind": "scotus", "court": "Supreme Court of the United States", "case_name": f"Doe {iid[-4:]} v. Roe",
              "term": int(decided[:4]) - 1, "docket": iid[-7:], "petitioner": f"Doe {iid[-4:]}", "respondent": "Roe",
              "lower_court": "United States Court of Appeals for the Ninth Circuit",
              "facts": "A landlord withheld a deposit.", "question": "Is the deposit statute preempted?"}
    label = {"petitioner_wins": wins, "outcome": "petitioner" if wins else "respondent", "decision_date": decided,
             "label_source": "scdb", "party_winning": wins}
    return {"instance_id": iid, "task": "legal", "split": "train", "cutoff_date": cutoff, "inputs": json.dumps(inputs),
            "label": json.dumps(label), "provenance": "{}"}


@pytest.fixture(scope="module")
def legal_train() -> pd.DataFrame:
    rows = [_legal(f"legal-train-scotus-2018-18-{k:04d}", "2019-06-09", "2019-06-10", k % 2) for k in range(6)]
    return pd.DataFrame(rows, columns=INSTANCE_COLUMNS)


def _answer(date: str, fact: str, p: float = 0.6) -> str:
    return json.dumps({"evidence": [{"id": 1, "fact": fact, "source_date": date}],
                       "reasoning": "The record [1] points to the petitioner.", "prediction": p})


# -- settings ----------------------------------------------------------------------------------

def test_schema_defaults_are_the_paper_hyperparameters():
    cfg = validate_config({"run": {"tasks": ["legal"], "models": ["m"]}, "models": {"m": {"model": "mock/x", "knowledge_cutoff": "2024-01-01"}}})
    s = TrainSettings.from_config(cfg["training"])
    assert (s.lora_r, s.learning_rate, s.adam_beta1, s.adam_beta2) == (32, 2e-5, 0.9, 0.95)
    assert (s.num_generations, s.temperature, s.beta_kl, s.epsilon_low, s.epsilon_high, s.prompts_per_step) == (12, 0.6, 0.05, 0.1, 1.0, 8)
    assert (s.validation_points, s.checkpoint) == (15, "best")
    assert s.reward == RewardConfig()  # schema defaults and dataclass defaults agree
    # nested blocks are flattened
    block = copy.deepcopy(cfg["training"])
    block["lora"]["r"], block["validation"]["instances"], block["reward"]["leak_decay"] = 4, 3, 0.7
    s2 = TrainSettings.from_config(block)
    assert (s2.lora_r, s2.validation_instances, s2.reward.leak_decay) == (4, 3, 0.7)


def test_unknown_training_key_is_a_config_error_naming_it():
    with pytest.raises(ConfigError, match="stepz"):
        validate_config({"training": {"stepz": 3}, "run": {"models": ["m"]}, "models": {"m": {"model": "mock/x", "knowledge_cutoff": "2024-01-01"}}})


def test_validation_steps_are_evenly_spaced_and_end_at_the_last_step():
    assert validation_steps(200, 4) == [50, 100, 150, 200]
    assert validation_steps(3, 15) == [1, 2, 3]
    assert validation_steps(10, 3) == [3, 7, 10]
    assert validation_steps(0, 3) == []


def test_split_is_disjoint_seeded_and_uses_only_the_train_split(legal_train):
    extra = pd.DataFrame([_legal("legal-eval-scotus-2018-18-9999", "2019-06-09", "2019-06-10") | {"split": "eval"}], columns=INSTANCE_COLUMNS)
    inst = pd.concat([legal_train, extra], ignore_index=True)
    tr, va = split_train_validation(inst, 2, seed=1)
    assert len(va) == 2 and len(tr) == 4 and not set(tr["instance_id"]) & set(va["instance_id"])
    assert "legal-eval-scotus-2018-18-9999" not in set(tr["instance_id"]) | set(va["instance_id"])
    tr2, va2 = split_train_validation(inst.sample(frac=1, random_state=3), 2, seed=1)
    assert list(va2["instance_id"]) == list(va["instance_id"])  # order of the input does not matter
    assert len(split_train_validation(inst, 2, seed=1, train_sample=1)[0]) == 1
    with pytest.raises(ValueError, match="too few"):
        split_train_validation(inst, 6, seed=1)
    with pytest.raises(ValueError, match="no 'train'"):
        split_train_validation(extra, 1, seed=1)


# -- the reward function TRL calls --------------------------------------------------------------

def test_reward_function_groups_by_instance_id_and_scores_with_the_verifier(legal_train):
    inst = legal_train.set_index("instance_id", drop=False)
    a, b = inst.index[0], inst.index[1]

    def score_fn(ids, texts, finish):
        return score_completions(LEGAL, inst, ids, texts, finish)

    fn = TempoReward(score_fn, reward=RewardConfig(), answer_prefix="", max_completion_length=50, eos_token_ids=[0])
    clean = _answer("2018-10-01", "The Court granted certiorari in October 2018.")
    leaked = _answer("2019-07-01", "The Court issued its opinion in July 2019.")
    completions = [clean, leaked, clean, clean, "not json at all"]
    ids = [a, b, b, a, a]  # interleaved, not in groups of G
    r = fn(prompts=[""] * 5, completions=completions, completion_ids=[[5, 0]] * 5, instance_id=ids)
    assert len(r) == 5
    # instance b's group holds the leaked completion: leakage mode, the clean one ranks above it
    assert r[2] > r[1]
    # instance a: all valid completions clean (performance mode); the garbage one is below both
    assert r[4] < min(r[0], r[3])
    stats = fn.take_stats()
    assert stats["n_groups"] == 2 and stats["perf_mode_fraction"] == 0.5 and stats["parse_fail_rate"] == pytest.approx(0.2)
    assert fn.take_stats() == {}
    # shuffled order: the same reward per completion
    perm = [3, 0, 4, 2, 1]
    r2 = fn(prompts=[""] * 5, completions=[completions[i] for i in perm], completion_ids=[[5, 0]] * 5, instance_id=[ids[i] for i in perm])
    assert r2 == pytest.approx([r[i] for i in perm])


def test_reward_function_marks_token_limit_completions_overlong_and_needs_instance_ids():
    fn = TempoReward(lambda *a: ([], None), reward=RewardConfig(), answer_prefix="", max_completion_length=3, eos_token_ids=[7])
    assert fn.overlong([1, 2, 3]) and not fn.overlong([1, 7, 0]) and not fn.overlong([1, 2]) and not fn.overlong(None)
    with pytest.raises(ValueError, match="instance_id"):
        fn(prompts=[""], completions=["x"])


def test_answer_prefix_is_put_back_before_parsing(legal_train):
    inst = legal_train.set_index("instance_id", drop=False)
    seen = {}

    def score_fn(ids, texts, finish):
        seen["texts"] = texts
        return score_completions(LEGAL, inst, ids, texts, finish)

    prefix = '{"evidence": [{"id": 1, "fact": "'
    body = _answer("2018-10-01", "The Court granted certiorari in October 2018.")[len(prefix):]
    fn = TempoReward(score_fn, reward=RewardConfig(), answer_prefix=prefix, max_completion_length=500, eos_token_ids=[0])
    fn(prompts=[""], completions=[body], instance_id=[inst.index[0]])
    assert seen["texts"][0].startswith(prefix) and json.loads(seen["texts"][0])["prediction"] == 0.6


# -- one real GRPO step -------------------------------------------------------------------------

def test_one_grpo_step_on_a_tiny_model_writes_adapters_and_log_rows(legal_train, tiny_base_dir, tmp_path):
    pytest.importorskip("trl")
    from anachron.training.trainer import train_tempo

    inst = legal_train.set_index("instance_id", drop=False)
    calls, seen = [], []

    def score_fn(ids, texts, finish):
        calls.append(list(ids))
        seen.extend(texts)
        return score_completions(LEGAL, inst, ids, texts, finish)

    settings = TrainSettings(steps=1, prompts_per_step=2, num_generations=2, max_completion_length=12,
                             validation_instances=2, validation_points=1, device="cpu", lora_r=4, lora_alpha=8)
    res = train_tempo(task=LEGAL, instances=legal_train, base_dir=tiny_base_dir, out_dir=tmp_path / "out",
                      settings=settings, score_fn=score_fn, model_name="tiny")
    log = res.log
    assert list(log.columns) == TRAINING_LOG_COLUMNS
    assert log["step"].tolist() == [0, 1]
    base, step1 = log.iloc[0], log.iloc[1]
    assert base["checkpoint"] == "base" and base["val_n"] == 2 and math.isnan(base["n_groups"])
    # the step's 2 prompts x 2 completions went through the reward, grouped in 2 groups
    assert step1["n_groups"] == 2 and 0 <= step1["parse_fail_rate"] <= 1 and step1["val_n"] == 2
    assert any(len(c) == 4 and len(set(c)) == 2 for c in calls)
    # rollouts and validation decoded under the output grammar: every text (whitespace aside) is the
    # opening of an answer object, which a random model unconstrained does not write
    opening = '{"evidence":[{"id":'
    norm = ["".join(t.split()) for t in seen]
    assert seen and all(len(n) >= 2 and (opening.startswith(n) or n.startswith(opening)) for n in norm), seen
    for d in ("adapter", "best", "final"):
        assert (tmp_path / "out" / d / "adapter_config.json").is_file()
    cfg = json.loads((tmp_path / "out" / "adapter" / "adapter_config.json").read_text())
    assert cfg["r"] == 4 and sorted(cfg["target_modules"]) == ["k_proj", "o_proj", "q_proj", "v_proj"]
    assert res.summary["steps"] == 1 and res.summary["n_validation_instances"] == 2 and res.summary["best_step"] == 1


def test_training_figure_is_written(tmp_path):
    from anachron.report.figures import save_figure, training_figure
    from anachron.report.training import training_curves

    log = pd.DataFrame([
        {"model": "m", "task": "legal", "step": 0, "val_n": 4, "val_olr": 0.5, "val_olr_strict": 0.75},
        {"model": "m", "task": "legal", "step": 1, "n_groups": 2, "perf_mode_fraction": 0.0, "parse_fail_rate": 0.5, "near_miss_rate": 0.25},
        {"model": "m", "task": "legal", "step": 2, "n_groups": 2, "perf_mode_fraction": 0.5, "parse_fail_rate": 0.25,
         "near_miss_rate": 0.0, "val_n": 4, "val_olr": 0.25, "val_olr_strict": 0.5, "val_parse_rate": 0.75},
    ]).reindex(columns=TRAINING_LOG_COLUMNS)
    curves = training_curves(log)
    assert curves[("m", "legal")]["mode"]["step"].tolist() == [1, 2]
    assert curves[("m", "legal")]["validation"]["val_olr"].tolist() == [0.5, 0.25]
    assert curves[("m", "legal")]["rollouts"]["parse_fail_rate"].tolist() == [0.5, 0.25]
    save_figure(training_figure(log), [tmp_path / "t.png", tmp_path / "t.pdf"])
    assert (tmp_path / "t.png").read_bytes()[:4] == b"\x89PNG" and (tmp_path / "t.pdf").read_bytes()[:4] == b"%PDF"
    save_figure(training_figure(log.iloc[0:0]), [tmp_path / "empty.png"])
    assert (tmp_path / "empty.png").stat().st_size > 0


def test_training_problems_are_reported_before_any_job(monkeypatch):
    from anachron.config import check_ready
    from anachron.training import extra

    base = {"run": {"tasks": ["legal"], "methods": ["temporal_hint", "tempo"], "models": ["m"]},
            "models": {"m": {"model": "mock/x", "knowledge_cutoff": "2024-01-01"},
                       "q": {"model": "openai/Qwen/Q", "knowledge_cutoff": "2024-01-01"}}}
    monkeypatch.setattr(extra, "training_extra_problems", lambda: ["missing module(s): trl. Install it with: make setup-train"])
    cfg = validate_config(copy.deepcopy(base) | {"training": {"prompts_per_step": 3, "num_generations": 2, "gradient_accumulation_steps": 4}})
    with pytest.raises(ConfigError) as err:
        check_ready(cfg)
    msg = str(err.value)
    assert "trl" in msg and "make setup-train" in msg                       # the missing extra and its fix
    assert "training.gradient_accumulation_steps" in msg                     # settings that do not fit
    assert "cannot train the mock model 'm'" in msg                          # no weights to train
    monkeypatch.setenv("ANACHRON_API_KEY", "k")
    monkeypatch.setenv("ANACHRON_BASE_URL", "http://localhost:1/v1")
    cfg = validate_config(copy.deepcopy(base) | {"run": {"tasks": ["legal"], "methods": ["tempo"], "models": ["q"]}})
    with pytest.raises(ConfigError) as err:
        check_ready(cfg)
    assert "models.q.hf_path" in str(err.value) and "methods.tempo.served_names.q" in str(err.value)


def test_workflow_settings_decode_as_evaluation_does():
    from anachron.training.trainer import settings_for

    block = validate_config({})["training"]
    s = settings_for(block, {"params": {"repeat_penalty": 1.1}}, {"max_evidence": 6}, grammar_vocab="v.gguf")
    assert s.grammar and s.repetition_penalty == 1.1 and s.repetition_last_n == 64
    assert s.max_evidence == 6 and s.grammar_vocab == "v.gguf"
    own = settings_for({**block, "repetition_penalty": 1.3, "grammar_vocab": "mine.gguf"}, {"params": {"repeat_penalty": 1.1}}, {})
    assert own.repetition_penalty == 1.3 and own.grammar_vocab == "mine.gguf" and own.max_evidence == 10
    off = settings_for({**block, "grammar": False}, {"params": {"repeat_penalty": 1.1}}, {})
    assert not off.grammar and off.repetition_penalty == 1.0  # the loss could not apply it without the grammar trainer
    with pytest.raises(ValueError, match="training.repetition_penalty needs training.grammar"):
        TrainSettings(grammar=False, repetition_penalty=1.1)
