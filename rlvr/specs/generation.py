"""Deterministic hypothesis generation shared by packs (when they build hidden inputs) and graders.

Generation runs with hypothesis's pool of source constants emptied, so the same seed gives the same
inputs in every process whatever else it has imported.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from hypothesis import HealthCheck
from hypothesis.internal.conjecture import providers as _providers

# Hypothesis mixes in constants found in the source of "local" modules currently imported, which
# would make generated inputs depend on what else the process has loaded. Generation runs with
# that pool emptied (under a lock), so the same task gives the same inputs in every process.
_GENERATION_LOCK = threading.RLock()


@contextmanager
def isolated_generation() -> Iterator[None]:
    with _GENERATION_LOCK:
        original = getattr(_providers, "_get_local_constants", None)
        cache = getattr(_providers, "CONSTANTS_CACHE", None)
        if original is None or cache is None or not hasattr(_providers, "Constants"):
            yield
            return
        empty = _providers.Constants()  # pyright: ignore[reportPrivateImportUsage]
        _providers._get_local_constants = lambda: empty  # type: ignore[attr-defined]
        cache.cache.clear()
        try:
            yield
        finally:
            _providers._get_local_constants = original  # type: ignore[attr-defined]
            cache.cache.clear()


# generation is not a test of the reference: no health check applies
_DEPRECATED_CHECKS = {"return_value", "not_a_test_method"}
ALL_HEALTH_CHECKS: list[HealthCheck] = [
    check for name, check in HealthCheck.__members__.items() if name not in _DEPRECATED_CHECKS
]
