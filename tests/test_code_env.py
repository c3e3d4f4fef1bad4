import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env

import rlvr  # noqa: F401  (registers rlvr/ envs)


@pytest.fixture(scope="module")
def env(humaneval_grader):
    environment = gym.make("rlvr/Code-v0", pack="humaneval", grader=humaneval_grader)
    yield environment
    environment.close()


def test_check_env_passes(env):
    check_env(env.unwrapped, skip_render_check=True)


def test_reset_by_task_id_and_single_turn_step(env, humaneval_problems):
    observation, info = env.reset(seed=0, options={"task_id": "HumanEval/7"})
    assert observation == humaneval_problems["HumanEval/7"]["prompt"]
    assert "hidden" not in info["task"] and "canonical_solution" not in str(info)
    _, reward, terminated, truncated, info = env.step(humaneval_problems["HumanEval/7"]["canonical_solution"])
    assert terminated and not truncated and info["verdict"]["passed"] and reward > 0.9


def test_any_unicode_is_a_valid_action(env):
    env.reset(seed=1)
    for action in ["", "\x00\ud800", "🦜" * 100, "def f(:\n"]:
        assert env.action_space.contains(action)
        _, reward, terminated, _, info = env.step(action)
        assert 0.0 <= reward <= 1.0 and terminated
        env.reset(seed=1)


def test_multi_turn_feedback_never_leaks_hidden_tests(humaneval_grader, humaneval_problems):
    environment = gym.make("rlvr/Code-v0", pack="humaneval", grader=humaneval_grader, max_turns=3)
    observation, _ = environment.reset(options={"task_id": "HumanEval/0"})
    observation, reward, terminated, _, info = environment.step(observation + "    return False\n")
    assert not terminated and "did not pass" in observation
    check_source = humaneval_problems["HumanEval/0"]["test"]
    assert "1.0, 2.0, 3.9" not in observation and check_source not in observation
    _, reward, terminated, _, info = environment.step(humaneval_problems["HumanEval/0"]["canonical_solution"])
    assert terminated and info["verdict"]["passed"]
    environment.close()
