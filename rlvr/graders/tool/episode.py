"""One tool-use episode: a simulated world, a permission policy, the agent's turns, and the final verdict.

Task hidden spec: `world` (files | ledger | calendar | inventory), `state` (its initial state), `goal`
(`state`: a subset the final world state must contain; `absent`: key paths that must not exist; `answer`:
the expected final answer, optional), `policy` (`forbidden_tools`, `read_only`: glob patterns of resources no
write may touch, `budget`: most tool calls allowed), `optimal_calls` (length of a shortest solution),
`max_turns`.

Reward (gated): the goal reached AND no policy violation (attempted violations count; the world refuses
them) AND the right answer → `goal` weight + `efficiency` weight x min(1, optimal calls / calls used);
otherwise 0, so no efficient failure outranks any success.
"""

from __future__ import annotations

import fnmatch
import json
import math
from typing import Any

from jsonschema import Draft202012Validator

from rlvr.core.types import Component, Task, Verdict
from rlvr.graders.compose import normalized_weights
from rlvr.graders.tool.calls import ToolCall, parse_turn
from rlvr.specs.tool_worlds import DEFAULT_MAX_TURNS, WORLDS, ToolError, World

DEFAULT_WEIGHTS = {"goal": 0.8, "efficiency": 0.2}
MAX_RESULT_CHARS = 4000


def subset_matches(expected: Any, actual: Any) -> bool:
    """Dicts: every expected key matches; lists: every expected item matches some actual item."""
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(
            k in actual and subset_matches(v, actual[k]) for k, v in expected.items()
        )
    if isinstance(expected, list):
        return isinstance(actual, list) and all(any(subset_matches(e, a) for a in actual) for e in expected)
    if isinstance(expected, bool) or isinstance(actual, bool):
        return expected is actual
    if isinstance(expected, int | float) and isinstance(actual, int | float):
        return math.isclose(expected, actual, rel_tol=1e-9, abs_tol=1e-9)
    return expected == actual


def _exists(state: Any, path: list[Any]) -> bool:
    for key in path:
        if isinstance(state, dict) and key in state:
            state = state[key]
        elif isinstance(state, list) and isinstance(key, int) and -len(state) <= key < len(state):
            state = state[key]
        else:
            return False
    return True


def answers_match(expected: Any, given: str | None) -> bool:
    if given is None:
        return False
    left, right = str(expected).strip().casefold(), given.strip().casefold()
    try:
        return math.isclose(float(left), float(right), rel_tol=1e-9, abs_tol=1e-9)
    except ValueError:
        return " ".join(left.split()) == " ".join(right.split())


class ToolEpisode:
    def __init__(self, task: Task, weights: dict[str, float] | None = None) -> None:
        hidden = task.hidden
        self.task = task
        world_class = WORLDS[hidden["world"]]
        self.world: World = world_class(hidden.get("state"))
        self.tools = world_class.tools()
        self.validators = {
            name: Draft202012Validator(spec.schema["function"]["parameters"])
            for name, spec in self.tools.items()
        }
        policy = hidden.get("policy") or {}
        self.forbidden = set(policy.get("forbidden_tools") or [])
        self.read_only = list(policy.get("read_only") or [])
        self.budget: int | None = policy.get("budget")
        self.goal = hidden.get("goal") or {}
        self.optimal_calls = max(1, int(hidden.get("optimal_calls", 1)))
        self.max_turns = int(hidden.get("max_turns", DEFAULT_MAX_TURNS))
        self.weights = normalized_weights(weights, DEFAULT_WEIGHTS, ("goal",))
        self.turns = 0
        self.calls_made = 0
        self.malformed_turns = 0
        self.violations: list[str] = []
        self.final_answer: str | None = None
        self.done = False

    # ------------------------------------------------------------ turns

    def act(self, text: str) -> str:
        """Apply one agent turn; returns the observation (tool results or an error message) as text."""
        if self.done:
            return json.dumps({"error": "the episode is over"})
        self.turns += 1
        turn = parse_turn(text)
        if turn.error is not None:
            self.malformed_turns += 1
            observation = json.dumps({"error": f"malformed turn: {turn.error}"})
        elif turn.final_answer is not None:
            self.final_answer = turn.final_answer
            self.done = True
            return ""
        else:
            observation = json.dumps([self._run(call) for call in turn.calls], ensure_ascii=False)
        if self.turns >= self.max_turns:
            self.done = True
        return observation

    def _run(self, call: ToolCall) -> dict[str, Any]:
        reply: dict[str, Any] = {"role": "tool", "tool_call_id": call.id, "name": call.name}
        spec = self.tools.get(call.name)
        if spec is None:
            return reply | {"content": json.dumps({"error": f"unknown tool {call.name!r}"})}
        problems = sorted(self.validators[call.name].iter_errors(call.arguments), key=str)
        if problems:
            return reply | {"content": json.dumps({"error": f"bad arguments: {problems[0].message[:200]}"})}
        refusal = self._policy_refusal(call, spec.kind, spec.resources)
        if refusal:
            self.violations.append(refusal)
            return reply | {"content": json.dumps({"error": f"permission denied: {refusal}"})}
        self.calls_made += 1
        try:
            result: Any = {"result": self.world.call(call.name, call.arguments)}
        except ToolError as exc:
            result = {"error": str(exc)}
        return reply | {"content": json.dumps(result, ensure_ascii=False)[:MAX_RESULT_CHARS]}

    def _policy_refusal(self, call: ToolCall, kind: str, resources: tuple[str, ...]) -> str | None:
        if call.name in self.forbidden:
            return f"tool {call.name} is forbidden in this task"
        if self.budget is not None and self.calls_made >= self.budget:
            return f"tool-call budget of {self.budget} exhausted"
        if kind == "write":
            for argument in resources:
                value = str(call.arguments.get(argument, ""))
                if any(fnmatch.fnmatchcase(value, pattern) for pattern in self.read_only):
                    return f"{value} is read-only"
        return None

    # ------------------------------------------------------------ verdict

    def goal_reached(self) -> bool:
        state = self.world.state
        if not subset_matches(self.goal.get("state") or {}, state):
            return False
        return not any(_exists(state, list(path)) for path in self.goal.get("absent") or [])

    def verdict(self) -> Verdict:
        goal = self.goal_reached()
        answer_needed = "answer" in self.goal
        answer_ok = not answer_needed or answers_match(self.goal["answer"], self.final_answer)
        clean = not self.violations
        passed = goal and answer_ok and clean
        efficiency = min(1.0, self.optimal_calls / max(1, self.calls_made)) if passed else 0.0
        gates = [name for name, ok in (("goal", goal), ("answer", answer_ok), ("policy", clean)) if not ok]
        feedback = []
        if not goal:
            feedback.append("the goal state was not reached")
        if not answer_ok:
            feedback.append("no final answer" if self.final_answer is None else "the final answer is wrong")
        if self.violations:
            feedback.append("policy violated: " + "; ".join(self.violations[:3]))
        w_goal, w_efficiency = self.weights["goal"], self.weights["efficiency"]
        return Verdict(
            task_id=self.task.id,
            reward=(w_goal + w_efficiency * efficiency) if passed else 0.0,
            passed=passed,
            components={
                "goal": Component(w_goal if goal and answer_ok else 0.0, w_goal),
                "efficiency": Component(
                    w_efficiency * efficiency,
                    w_efficiency,
                    f"{self.calls_made} call(s), optimal {self.optimal_calls}",
                ),
            },
            gates=gates,
            feedback="Goal reached." if passed else "; ".join(feedback).capitalize() + ".",
            flags=["malformed_turns"] * bool(self.malformed_turns)
            + ["policy_violation"] * bool(self.violations),
        )
