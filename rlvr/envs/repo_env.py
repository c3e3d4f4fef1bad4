"""`rlvr/Repo-v0`: a coding agent on a repository.

mode="agent" (default, multi-turn): reset() shows the issue, the file list and the tools; each action
is one assistant turn of OpenAI-style tool calls (JSON), each observation the tool results (a JSON list
of `{"role": "tool", ...}` messages) or an error message. The episode ends at `submit` (terminated) or
when a budget runs out (truncated, the state is graded as it is); only that step carries the reward,
with the verdict in `info["verdict"]`. mode="patch" (single-shot): reset() shows the issue and every
file; the one action is a unified diff or whole-file blocks, graded the same way.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import gymnasium as gym

from rlvr.core.pack import TaskPack
from rlvr.core.types import Task, grader_fault
from rlvr.envs.agent import UNFINISHED_FLAG, function_schema, tool_calls_action
from rlvr.envs.families import FamilyTextEnv
from rlvr.graders.repo.episode import TOOL_SCHEMAS, Budgets, RepoEpisode
from rlvr.graders.repo.grader import RepoGrader

MODES = ("agent", "patch")
TOOL_DESCRIPTIONS = {
    "list_files": "List the repository's files (optionally under a directory).",
    "read_file": "Read a file, with line numbers (optionally a range of lines).",
    "search": "Search the repository's files for a text (or a regex) and list the matching lines.",
    "write_file": "Create or overwrite a file with the given full text.",
    "edit": "Replace an exact text in a file with a new text.",
    "apply_patch": "Apply a unified diff to the repository.",
    "delete_file": "Delete a file.",
    "run_tests": "Run the repository's visible tests in a sandbox and report the failures.",
    "run_python": "Run a Python snippet in a sandbox with the repository importable; returns its stdout.",
    "submit": "Submit the repository as it is now; hidden checks then grade it. This ends the episode.",
}


def _parameter_schema(description: str) -> tuple[dict[str, Any], bool]:
    """A JSON Schema for one argument of the episode's informal tool table (`"int (optional): ..."`: the
    leading word names a non-string type), and whether it is required."""
    kind = description.split(" ", 1)[0].rstrip(":,")
    types = {"int": "integer", "bool": "boolean", "list": "array"}
    schema: dict[str, Any] = {"type": types.get(kind, "string"), "description": description}
    if schema["type"] == "array":
        schema["items"] = {"type": "string"}
    return schema, "(optional)" not in description and schema["type"] != "boolean"


def repo_tool_schemas() -> list[dict[str, Any]]:
    """Repo-v0's tools as OpenAI function schemas, read from the episode's own tool table."""
    schemas = []
    for tool in TOOL_SCHEMAS:
        name, parameters = tool["name"], tool.get("parameters") or {}
        if parameters.get("type") != "object":  # the informal table: {argument: description}
            properties, required = {}, []
            for argument, description in parameters.items():
                properties[argument], needed = _parameter_schema(str(description))
                if needed:
                    required.append(argument)
            parameters = {"type": "object", "properties": properties, "required": required}
        schemas.append(
            function_schema(
                name, str(tool.get("description") or TOOL_DESCRIPTIONS.get(name, name)), parameters
            )
        )
    return schemas


def agent_prompt(task: Task) -> str:
    files = "\n".join(sorted(task.hidden["base"]))
    tools = "\n".join(json.dumps(tool) for tool in TOOL_SCHEMAS)
    return (
        f"{task.prompt}\n\nRepository files:\n{files}\n\n"
        "Work with tool calls, one JSON object per turn, e.g. "
        '{"tool_calls": [{"id": "c1", "type": "function", "function": {"name": "read_file", '
        '"arguments": {"path": "pkg/module.py"}}}]}\n'
        f"Tools:\n{tools}\n"
        "Files under tests/ are read-only. Call submit when done; hidden checks then grade the repository."
    )


def patch_prompt(task: Task) -> str:
    blocks = "\n\n".join(f"```{path}\n{text}```" for path, text in sorted(task.hidden["base"].items()))
    return (
        f"{task.prompt}\n\nThe repository:\n\n{blocks}\n\n"
        "Answer with a unified diff (--- a/path, +++ b/path, @@ hunks) or with the complete new text of "
        "each file you change as a block opening with ```path/to/file.py. Files under tests/ are read-only."
    )


class RepoEnv(FamilyTextEnv):
    """In agent mode also an agent env (rlvr/envs/agent.py); `submit()` ends the episode."""

    family = "repo"

    def __init__(
        self,
        pack: str | TaskPack = "repo-tasks",
        *,
        mode: str = "agent",
        max_turns: int | None = None,
        max_tokens: int | None = None,
        tool_seconds: float | None = None,
        max_test_runs: int | None = None,
        **kwargs: Any,
    ) -> None:
        if mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
        super().__init__(pack, max_turns=1, **kwargs)
        self.mode = mode
        defaults = Budgets()
        self.budgets = Budgets(
            max_turns=int(max_turns or defaults.max_turns),
            max_tokens=int(max_tokens or defaults.max_tokens),
            tool_seconds=float(tool_seconds or defaults.tool_seconds),
            max_test_runs=int(max_test_runs or defaults.max_test_runs),
        )
        self.max_turns = self.budgets.max_turns if mode == "agent" else 1
        self.episode: RepoEpisode | None = None

    def _repo_grader(self) -> RepoGrader:
        grader = self.grader
        if not isinstance(grader, RepoGrader):
            raise TypeError(f"Repo-v0 needs a RepoGrader, got {type(grader).__name__}")
        return grader

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        _, info = super().reset(seed=seed, options=options)
        assert self.task is not None
        self.episode = None
        if self.mode == "patch":
            return patch_prompt(self.task), info
        grader = self._repo_grader()
        self.episode = RepoEpisode(self.task, grader.run, grader.grade_state, self.budgets)
        return agent_prompt(self.task), info

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        if self.task is None:
            raise gym.error.ResetNeeded("call reset() before step()")
        if self.mode == "patch":
            return super().step(action)
        if self.episode is None:
            raise gym.error.ResetNeeded("call reset() before step()")
        text: Any = action  # text, or a turn as JSON data: the episode checks its depth before reading it
        if self.episode.done:
            info = {"task": self.task.public(), "turn": self.turn, "error": "episode is over; call reset()"}
            return "", 0.0, True, False, copy.deepcopy(info)
        try:
            observation = self.episode.act(text)
            verdict = self.episode.verdict if self.episode.done else None
        except Exception as exc:  # the episode promises not to raise; if it does, end with a flagged verdict
            self.episode.done = True
            observation = ""
            verdict = grader_fault(self.task.id, exc, where="episode")
        self.turn = self.episode.turns
        info: dict[str, Any] = {"task": self.task.public(), "turn": self.turn}
        if verdict is None:
            return observation, 0.0, False, False, copy.deepcopy(info)
        self.last_verdict = verdict
        info["verdict"] = {k: v for k, v in verdict.to_json().items() if k != "timings"}
        truncated = self.episode.exhausted is not None
        return observation, float(verdict.reward), not truncated, truncated, copy.deepcopy(info)

    # ------------------------------------------------------------ agent-env protocol (rlvr/envs/agent.py)

    def toolset(self, task: Task) -> tuple[str, list[dict[str, Any]]]:
        if self.mode != "agent":
            raise ValueError("Repo-v0 has tools in mode='agent' only")
        return "repo", repo_tool_schemas()

    def tool_call_action(self, name: str, arguments: dict[str, Any]) -> str:
        return tool_calls_action(name, arguments)

    def function_calling_prompt(self) -> str:
        if self.task is None or self.episode is None:
            raise gym.error.ResetNeeded("call reset() in mode='agent' before function_calling_prompt()")
        files = "\n".join(sorted(self.task.hidden["base"]))
        return (
            f"{self.task.prompt}\n\nRepository files:\n{files}\n\n"
            "Files under tests/ are read-only. Use the tools; call submit when done; hidden checks then "
            "grade the repository."
        )

    def end_episode(self) -> tuple[float, dict[str, Any]]:
        if self.task is None or self.episode is None:
            raise gym.error.ResetNeeded("call reset() in mode='agent' before end_episode()")
        if self.last_verdict is None:
            try:
                verdict = self.episode.grade(self.task, dict(self.episode.workspace.files))
            except Exception as exc:  # the grader promises not to raise; if it does, flag it
                verdict = grader_fault(self.task.id, exc, where="episode")
            self.episode.done = True
            self.episode.verdict = verdict
            verdict.flags = sorted({*verdict.flags, UNFINISHED_FLAG})
            self.last_verdict = verdict
        verdict_json = {k: v for k, v in self.last_verdict.to_json().items() if k != "timings"}
        info = {"task": self.task.public(), "turn": self.turn, "verdict": verdict_json}
        return float(self.last_verdict.reward), copy.deepcopy(info)
