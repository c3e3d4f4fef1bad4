"""`reasoning-gym`: math tasks from the `reasoning-gym` package's procedural generators (optional extra:
`pip install 'rlvr[reasoning]'`). Answers are scored by each generator's own `score_answer`, run in the
math grader's sympy worker (rlvr/graders/math/worker.py), never in the grader process, and only for the
generators of rlvr/specs/reasoning_gym_scorers.py (their scorers never evaluate an answer as code). Held-out
generators form the `test` split.
"""

from __future__ import annotations

from collections.abc import Iterable

from rlvr.core.pack import MissingExtra, TaskPack
from rlvr.core.types import Task

SEED = 42
TASKS_PER_DATASET = 16
INSTRUCTION = "Give your final answer as \\boxed{...}."
# generator -> difficulty
TRAIN_DATASETS = {
    "basic_arithmetic": 1,
    "chain_sum": 1,
    "gcd": 2,
    "lcm": 2,
    "fraction_simplification": 2,
    "simple_equations": 2,
    "decimal_arithmetic": 3,
    "polynomial_equations": 4,
}
HELD_OUT_DATASETS = {
    "prime_factorization": 2,
    "base_conversion": 3,
    "complex_arithmetic": 3,
    "power_function": 4,
}


class ReasoningGymPack(TaskPack):
    name = "reasoning-gym"
    family = "math"
    version = "1"
    description = (
        "reasoning-gym math generators (arithmetic, gcd/lcm, fractions, equations, ...) scored by their own "
        "score_answer; test split = held-out generators. Needs the `reasoning` extra."
    )

    def _load(self) -> Iterable[Task]:
        try:
            import reasoning_gym
        except ImportError as exc:
            raise MissingExtra("the reasoning-gym pack", "reasoning") from exc
        for datasets, split in ((TRAIN_DATASETS, "train"), (HELD_OUT_DATASETS, "test")):
            for dataset, difficulty in datasets.items():
                generated = reasoning_gym.create_dataset(dataset, size=TASKS_PER_DATASET, seed=SEED)
                for index in range(TASKS_PER_DATASET):
                    entry = generated[index]
                    yield Task(
                        id=f"rg/{dataset}/{index}",
                        prompt=f"{entry['question']}\n{INSTRUCTION}",
                        family="math",
                        difficulty=difficulty,
                        split=split,
                        hidden={
                            "answer": str(entry["answer"]),
                            "reasoning_gym": {
                                "dataset": dataset,
                                "seed": SEED,
                                "size": TASKS_PER_DATASET,
                                "index": index,
                            },
                        },
                        meta={"template": dataset, "source": "reasoning-gym"},
                    )
