"""The unbiased pass@k estimator of Chen et al. (2021), "Evaluating Large Language Models Trained on Code".

For one task with `n` samples of which `c` are correct, pass@k = 1 - C(n-c, k) / C(n, k): the chance that
at least one of k samples drawn without replacement from the n is correct. The binomials overflow
floats for large n, so the ratio is taken as the product prod_{i=n-c+1}^{n} (1 - k/i).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def pass_at_k(n: int, c: int, k: int) -> float | None:
    """pass@k for one task, or None when k > n (the estimator is undefined: never guess a number)."""
    if n < 0 or c < 0 or k < 1:
        raise ValueError(f"pass@k needs n >= 0, c >= 0 and k >= 1 (got n={n}, c={c}, k={k})")
    if c > n:
        raise ValueError(f"more correct samples than samples (c={c} > n={n})")
    if k > n:
        return None
    if n - c < k:
        return 1.0
    return float(1.0 - np.prod(1.0 - k / np.arange(n - c + 1, n + 1)))


def mean_pass_at_k(counts: Sequence[tuple[int, int]], k: int) -> tuple[float | None, list[int]]:
    """The mean of pass@k over tasks given (n, c) per task.

    Returns (value, positions of tasks with fewer than k samples). When any task has n < k the mean
    is None: averaging over the remaining tasks would silently report a number for a different set.
    """
    short = [i for i, (n, _) in enumerate(counts) if n < k]
    if short or not counts:
        return None, short
    values = [pass_at_k(n, c, k) for n, c in counts]
    return float(np.mean([v for v in values if v is not None])), short
