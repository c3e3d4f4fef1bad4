"""Load: episodes through the local sandbox leak no process, fd or temp entry, and RSS stays flat."""

from __future__ import annotations

import pytest
from adversarial.isolation import namespaced_sandbox
from adversarial.soak import soak


@pytest.fixture(autouse=True)
def needs_namespaces() -> None:
    namespaced_sandbox(1).close()


def test_soak_small() -> None:
    report = soak(600)
    assert report.clean, report


@pytest.mark.slow
def test_soak_full_5000_episodes() -> None:
    report = soak(5000)
    assert report.clean, report
