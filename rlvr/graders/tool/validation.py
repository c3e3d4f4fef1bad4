"""Proof that a tool task is solvable: its reference transcript, replayed, reaches the goal.

A check of the grader's own (it runs the episode), so it lives here and not with the pack format
(rlvr/task_packs/schemas.py); `rlvr packs validate` runs it on every line whose format is sound."""

from __future__ import annotations

from typing import Any

from rlvr.core.pack import PUBLIC_FIELDS
from rlvr.core.types import Task
from rlvr.graders.tool.episode import ToolEpisode
from rlvr.graders.tool.grader import split_transcript
from rlvr.graders.tool.prove import reference_transcript


def reference_problems(line: dict[str, Any]) -> list[tuple[str, str]]:
    """A (field, message) problem unless the line's `reference` (when it has one) solves its task."""
    reference = reference_transcript(line.get("reference"))  # a list of turns or a transcript string
    if reference is None:
        return []
    hidden = {k: v for k, v in line.items() if k not in PUBLIC_FIELDS}
    episode = ToolEpisode(Task(id=str(line.get("id")), prompt="", family="tool", hidden=hidden))
    for turn in split_transcript(reference):
        if episode.done:
            break
        episode.act(turn)
    verdict = episode.verdict()
    return [] if verdict.passed else [("reference", f"does not solve the task: {verdict.feedback}")]
