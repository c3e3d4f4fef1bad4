"""Random-action fuzzing of rlvr/Math-v0, rlvr/Tool-v0, rlvr/SQL-v0 and rlvr/Proof-v0, plus Gymnasium's
check_env: no exception escapes step(), every reward is a finite float in [0, 1]. Seeded, so a failure
reproduces."""

from __future__ import annotations

import math
import random

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env

import rlvr  # noqa: F401  (registers the rlvr/ envs)

ENV_IDS = ["rlvr/Math-v0", "rlvr/Tool-v0", "rlvr/SQL-v0", "rlvr/Proof-v0"]
# Each env gets random Unicode plus near-miss inputs shaped like its own format.
FRAGMENTS = {
    "rlvr/Math-v0": [
        "\\boxed{",
        "}",
        "Answer:",
        "####",
        "\\frac{1}{",
        "9^{9^{9}}",
        "\\{1,2\\}",
        "(",
        "%",
        "x=",
        "\\infty",
    ],
    "rlvr/Tool-v0": [
        '{"tool_calls": [',
        '{"type": "function", "function": {"name": "',
        'read_file", "arguments": "{}"}}',
        "]}",
        '{"final_answer": "',
        '"}',
        "[",
        "null",
        '{"name": "transfer", "arguments": {"amount": -1}}',
    ],
    "rlvr/SQL-v0": [
        "SELECT ",
        "* FROM ",
        "customers",
        " WHERE ",
        "ATTACH ",
        "PRAGMA ",
        ";",
        "```sql\n",
        "\n```",
        "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM r) SELECT * FROM r",
        "'",
    ],
    "rlvr/Proof-v0": [
        "(x+1)^2",
        "\n= ",
        "\n>= ",
        "\n< ",
        "sqrt(",
        ")",
        "x^2 + 2x + 1",
        "# note",
        "\\frac{",
        "9^(9^9)",
    ],
}
# actions per env in the default suite; `--slow` runs three times as many
ACTIONS_PER_ENV = {"rlvr/Math-v0": 700, "rlvr/Tool-v0": 1000, "rlvr/SQL-v0": 1000, "rlvr/Proof-v0": 350}


def random_text(rng: random.Random, fragments: list[str]) -> str:
    pieces = []
    for _ in range(rng.randint(0, 8)):
        roll = rng.random()
        if roll < 0.35:
            pieces.append(rng.choice(fragments))
        elif roll < 0.55:
            pieces.append("".join(chr(rng.randint(0, 31)) for _ in range(rng.randint(1, 4))))  # control chars
        elif roll < 0.7:
            pieces.append(
                "".join(chr(rng.randint(0x10000, 0x10FFFF)) for _ in range(rng.randint(1, 3)))
            )  # non-BMP
        elif roll < 0.8:
            pieces.append(chr(rng.randint(0xD800, 0xDFFF)))  # lone surrogate
        else:
            pieces.append("".join(chr(rng.randint(32, 0xFFFF)) for _ in range(rng.randint(1, 12))))
    return "".join(pieces)


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_check_env(env_id: str) -> None:
    env = gym.make(env_id)
    try:
        check_env(env.unwrapped, skip_render_check=True)
    finally:
        env.close()


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_random_actions_never_crash_and_rewards_stay_in_range(
    env_id: str, pytestconfig: pytest.Config
) -> None:
    rng = random.Random(f"fuzz/{env_id}")
    env = gym.make(env_id)
    env.action_space.seed(7)
    try:
        env.reset(seed=3)
        for step in range(ACTIONS_PER_ENV[env_id] * (3 if pytestconfig.getoption("--slow") else 1)):
            action = env.action_space.sample() if step % 4 == 0 else random_text(rng, FRAGMENTS[env_id])
            assert env.action_space.contains(action)
            observation, reward, terminated, truncated, info = env.step(action)
            assert isinstance(reward, float) and math.isfinite(reward) and 0.0 <= reward <= 1.0, (
                action,
                reward,
            )
            assert isinstance(observation, str) and env.observation_space.contains(observation)
            if terminated or truncated:
                assert "verdict" in info
                env.reset(seed=step)
    finally:
        env.close()
