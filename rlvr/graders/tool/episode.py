"""One tool-use episode: a simulated world, a permission policy, the agent's turns, and the final verdict.

Task hidden spec: `world` (files | ledger | calendar | inventory, or a world of the pack's own with
`world_module`, the path of its module: rlvr/specs/tool_worlds.py), `state` (its initial state), `goal`
(`state`: a subset the final world state must contain; `absent`: key paths that must not exist; `answer`:
the expected final answer, optional; it passes only after at least one tool call ran, unless the task sets
`answer_needs_world: false`, flag `answer_without_tool_use` otherwise), `policy` (`forbidden_tools`, `read_only`: glob patterns of resources no
write may touch, `budget`: most tool calls allowed), `optimal_calls` (length of a shortest solution),
`max_turns`, `reference` (a solution: a list of turns, each a list of `{"name", "arguments"}` calls or the
final answer, or a transcript string), `expected_state` (the whole world state the reference leaves;
derived from `reference` when absent), `allowed_changes` (key-path patterns, e.g. `[["events", "*", "id"]]`,
where the final state may differ from the expected one).

The whole final state is compared with the expected state (rlvr/graders/tool/state_diff.py): a change the
reference also makes but the agent got wrong means the goal is not reached; a change the reference does not
make is an unauthorized side effect (gate `side_effects`, flag `unauthorized_side_effect`). A task with
neither `expected_state` nor `reference` falls back to the frame rule: nothing outside the paths its goal
names may change (a world's journal, such as the ledger's transfer log, excepted), and a list the goal names
may lose items but gain only as many as the goal has items the initial list lacks, each matching one of them.

Reward (gated): the goal reached AND no side effect AND no policy violation (attempted violations count; the
world refuses them) AND the right answer → `goal` weight + `efficiency` weight x min(1, optimal calls /
calls used); otherwise 0, so no efficient failure outranks any success. A turn refused for its size (JSON
nested too deeply, too long) is an error observation and adds an `oversized:<name>` flag. A numeric argument
beyond `MAX_NUMBER` in magnitude, or not finite, is a bad argument (the world never sees it): the world's
arithmetic and the state checks stay exact and finite.
"""

from __future__ import annotations

import copy
import fnmatch
import json
import math
from typing import Any

from jsonschema import Draft202012Validator

from rlvr.core.types import Component, Task, Verdict
from rlvr.graders.compose import normalized_weights
from rlvr.graders.tool.calls import ToolCall, parse_turn, split_transcript
from rlvr.graders.tool.state_diff import Path, StateDiff, classify, frame_violations, leaves, strip_allowed
from rlvr.specs.tool_worlds import DEFAULT_MAX_TURNS, ToolError, World, replay_calls, task_world

DEFAULT_WEIGHTS = {"goal": 0.8, "efficiency": 0.2}
MAX_RESULT_CHARS = 4000
MAX_NUMBER = 2**53  # the largest numeric argument a tool accepts (floats are exact up to here)


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


def _holds_unsafe_number(value: Any) -> bool:
    """A number beyond MAX_NUMBER or not finite anywhere in an argument (lists and objects of a pack
    world's tools included; their nesting is bounded by the turn parser)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, int | float) and not isinstance(item, bool) and not abs(item) <= MAX_NUMBER:
            return True
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def _exists(state: Any, path: list[Any]) -> bool:
    for key in path:
        if isinstance(state, dict) and key in state:
            state = state[key]
        elif isinstance(state, list) and isinstance(key, int) and -len(state) <= key < len(state):
            state = state[key]
        else:
            return False
    return True


def reference_calls(reference: Any) -> list[tuple[str, dict[str, Any]]] | None:
    """The tool calls of a reference solution (a list of turns or a transcript string); None if unreadable."""
    if isinstance(reference, str):
        turns = [parse_turn(text) for text in split_transcript(reference)]
        if any(turn.error is not None for turn in turns):
            return None
        return [(c.name, c.arguments) for turn in turns for c in turn.calls]
    if isinstance(reference, list):
        calls = []
        for turn in reference:
            if isinstance(turn, list):
                calls += [(c["name"], dict(c.get("arguments") or {})) for c in turn]
        return calls
    return None


def expected_final_state(hidden: dict[str, Any], initial: dict[str, Any]) -> dict[str, Any] | None:
    """The state the task expects at the end: given, or left by replaying its reference; None if neither."""
    if isinstance(hidden.get("expected_state"), dict):
        return hidden["expected_state"]
    calls = reference_calls(hidden.get("reference"))
    return None if calls is None else replay_calls(task_world(hidden), initial, calls)


def goal_paths(goal: dict[str, Any]) -> list[list[str]]:
    """The key paths a goal names (`state` down to its non-object values, and `absent`)."""
    paths: list[list[str]] = [[str(step) for step in path] for path in goal.get("absent") or []]
    stack: list[tuple[Any, list[str]]] = [(goal.get("state") or {}, [])]
    while stack:
        value, prefix = stack.pop()
        if isinstance(value, dict) and value:
            stack.extend((v, [*prefix, str(k)]) for k, v in value.items())
        elif prefix:
            paths.append(prefix)
    return paths


def goal_lists(goal: dict[str, Any]) -> list[tuple[Path, list[Any]]]:
    """The lists a goal's `state` names, with their key paths."""
    found: list[tuple[Path, list[Any]]] = []
    stack: list[tuple[Any, Path]] = [(goal.get("state") or {}, ())]
    while stack:
        value, prefix = stack.pop()
        if isinstance(value, dict):
            stack.extend((v, (*prefix, str(k))) for k, v in value.items())
        elif isinstance(value, list):
            found.append((prefix, value))
    return found


def _at(state: Any, path: Path) -> Any:
    for key in path:
        state = state.get(key) if isinstance(state, dict) else None
    return state


def unrequested_items(
    initial: Any, actual: Any, goal: dict[str, Any], allowed: list[list[str]]
) -> list[Path]:
    """Without an expected state: the items a list the goal names gained beyond what the goal asks for. The
    goal's items the initial list lacks may each be added once; an added item matching none of them, or more
    added items than there are of them, is a side effect (the leaf paths of `state_diff.leaves`)."""
    before, after = strip_allowed(initial, allowed), strip_allowed(actual, allowed)
    found: list[Path] = []
    for path, items in goal_lists(goal):
        old_list, new_list = _at(before, path), _at(after, path)
        if not isinstance(new_list, list):
            continue
        old_list = old_list if isinstance(old_list, list) else []
        unmet = [item for item in items if not any(subset_matches(item, have) for have in old_list)]
        old, new = leaves(old_list, path), leaves(new_list, path)
        added = {
            leaf: int(count[1:]) - int(old.get(leaf, "x0")[1:])
            for leaf, count in new.items()
            if len(leaf) == len(path) + 1 and count.startswith("x")
        }
        added = {leaf: n for leaf, n in added.items() if n > 0}
        stray = [
            leaf for leaf in added if not any(subset_matches(i, json.loads(leaf[-1][1:-1])) for i in unmet)
        ]
        found += stray or (sorted(added) if sum(added.values()) > len(unmet) else [])
    return found


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
        world_class = task_world(hidden)
        self.world: World = world_class(hidden.get("state"))
        self.initial_state = copy.deepcopy(self.world.state)
        self.expected_state = expected_final_state(hidden, self.initial_state)
        self.allowed_changes = [list(path) for path in hidden.get("allowed_changes") or []] + [
            list(path) for path in world_class.allowed_changes
        ]
        self.tools = world_class.tools()
        self.validators = {
            name: Draft202012Validator(spec.schema["function"]["parameters"])
            for name, spec in self.tools.items()
        }
        policy = {**world_class.default_policy, **(hidden.get("policy") or {})}
        self.forbidden = set(policy.get("forbidden_tools") or [])
        self.read_only = list(policy.get("read_only") or [])
        self.budget: int | None = policy.get("budget")
        self.goal = hidden.get("goal") or {}
        # an answer read from the world must come from a tool call, unless the task says it needs none
        self.answer_needs_world = bool(hidden.get("answer_needs_world", True))
        self.tool_exceptions = 0
        self.optimal_calls = max(1, int(hidden.get("optimal_calls", 1)))
        self.max_turns = int(hidden.get("max_turns", DEFAULT_MAX_TURNS))
        self.weights = normalized_weights(weights, DEFAULT_WEIGHTS, ("goal",))
        self.turns = 0
        self.calls_made = 0
        self.malformed_turns = 0
        self.violations: list[str] = []
        self.limits_hit: set[str] = set()
        self.final_answer: str | None = None
        self.done = False

    # ------------------------------------------------------------ turns

    def act(self, text: Any) -> str:
        """Apply one agent turn (text, or the same turn as JSON data); returns the observation (tool
        results or an error message) as text."""
        if self.done:
            return json.dumps({"error": "the episode is over"})
        self.turns += 1
        turn = parse_turn(text)
        if turn.error is not None:
            self.malformed_turns += 1
            if turn.limit is not None:
                self.limits_hit.add(turn.limit)
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
        unsafe = [key for key, value in call.arguments.items() if _holds_unsafe_number(value)]
        if unsafe:
            problem = f"{unsafe[0]} must be a finite number of magnitude at most {MAX_NUMBER}"
            return reply | {"content": json.dumps({"error": f"bad arguments: {problem}"})}
        refusal = self._policy_refusal(call, spec.kind, spec.resources)
        if refusal:
            self.violations.append(refusal)
            return reply | {"content": json.dumps({"error": f"permission denied: {refusal}"})}
        self.calls_made += 1
        before = copy.deepcopy(self.world.state)
        try:
            result: Any = {"result": self.world.call(call.name, call.arguments)}
            content = json.dumps(result, ensure_ascii=False)
        except ToolError as exc:  # a refused request changes nothing
            self.world.state = before
            content = json.dumps({"error": str(exc)}, ensure_ascii=False)
        except Exception as exc:  # a pack's own world failing on these arguments: refused, flagged
            self.world.state = before
            self.tool_exceptions += 1
            content = json.dumps({"error": f"the tool failed ({type(exc).__name__}); nothing changed"})
        return reply | {"content": content[:MAX_RESULT_CHARS]}

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

    def state_diff(self) -> StateDiff:
        """How the final state differs from the expected one (or, without one, from the frame rule)."""
        if self.expected_state is not None:
            return classify(self.initial_state, self.expected_state, self.world.state, self.allowed_changes)
        journals = [[key] for key in type(self.world).journal_keys]
        allowed = self.allowed_changes + journals
        outside: list[Path] = frame_violations(
            self.initial_state, self.world.state, goal_paths(self.goal), allowed
        )
        extra = unrequested_items(self.initial_state, self.world.state, self.goal, allowed)
        return StateDiff(side_effects=sorted(set(outside + extra)))

    def verdict(self) -> Verdict:
        diff = self.state_diff()
        goal = self.goal_reached() and not diff.missing
        no_side_effects = not diff.side_effects
        answer_needed = "answer" in self.goal
        answer_ok = not answer_needed or answers_match(self.goal["answer"], self.final_answer)
        unasked = answer_needed and answer_ok and self.answer_needs_world and self.calls_made == 0
        answer_ok = answer_ok and not unasked
        clean = not self.violations
        passed = goal and no_side_effects and answer_ok and clean
        efficiency = min(1.0, self.optimal_calls / max(1, self.calls_made)) if passed else 0.0
        gates = [
            name
            for name, ok in (
                ("goal", goal),
                ("side_effects", no_side_effects),
                ("answer", answer_ok),
                ("policy", clean),
            )
            if not ok
        ]
        feedback = []
        if not goal:
            feedback.append("the goal state was not reached")
        if not no_side_effects:
            feedback.append("changes the task did not ask for: " + StateDiff.describe(diff.side_effects))
        if unasked:
            feedback.append("the final answer was given without asking the world (no tool call ran)")
        elif not answer_ok:
            feedback.append("no final answer" if self.final_answer is None else "the final answer is wrong")
        if self.violations:
            feedback.append("policy violated: " + "; ".join(self.violations[:3]))
        w_goal, w_efficiency = self.weights["goal"], self.weights["efficiency"]
        return Verdict(
            task_id=self.task.id,
            reward=(w_goal + w_efficiency * efficiency) if passed else 0.0,
            passed=passed,
            components={
                "goal": Component(w_goal if goal and no_side_effects and answer_ok else 0.0, w_goal),
                "efficiency": Component(
                    w_efficiency * efficiency,
                    w_efficiency,
                    f"{self.calls_made} call(s), optimal {self.optimal_calls}",
                ),
            },
            gates=gates,
            feedback="Goal reached." if passed else "; ".join(feedback).capitalize() + ".",
            flags=["malformed_turns"] * bool(self.malformed_turns)
            + ["policy_violation"] * bool(self.violations)
            + ["unauthorized_side_effect"] * (not no_side_effects)
            + [f"oversized:{name}" for name in sorted(self.limits_hit)]
            + ["answer_without_tool_use"] * unasked
            + ["tool_exception"] * bool(self.tool_exceptions),
        )
