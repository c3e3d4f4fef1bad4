"""Load: episodes through the local sandbox leak no process, fd or temp entry, and RSS stays flat."""

from __future__ import annotations

import pytest
from adversarial.soak import soak


def test_soak_small() -> None:
    report = soak(600)
    assert report.clean, report


@pytest.mark.slow
def test_soak_full_5000_episodes() -> None:
    report = soak(5000)
    assert report.clean, report
