"""Episodes of rlvr's agent envs for trainers that speak function calling: the layer under every
multi-turn adapter (TRL, verl, SkyRL, OpenEnv, verifiers, OpenRLHF).

    sessions = Sessions("tool-worlds", split="train")      # one shared grader for every session
    session = sessions.open()
    start = session.start(task_id)                          # prompt + OpenAI function schemas
    session.call_tool("list_items", {})                     # -> ToolOutput(text=..., done=False)
    session.call_tool("final_answer", {"answer": "done"})
    result = session.finish()                               # the trusted verdict: reward, components, flags, timings
    session.close()

A session drives the registered Gymnasium env itself (`gymnasium.make(env_id, ...)`, the same
wrappers, sandbox, budgets, fault rules and flags as any Gymnasium user gets): each tool call is one
`env.step` of a one-call turn built by the env (`tool_call_action`), and the tools, the prompt and the
early end come from the env's agent protocol (rlvr/envs/agent.py). A family whose env implements
that protocol needs no code here. `act(text)` takes one whole assistant turn in the env's own text
protocol instead (several tool calls, or a final answer).

`finish()` on an episode the agent never ended (no `final_answer`/`submit`, the trainer stopped
generating) grades the state as it is, flagged `unfinished`, and reports it truncated.
"""

from __future__ import annotations

import inspect
import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym

import rlvr.envs  # noqa: F401  (registers the rlvr/ env ids)
from rlvr.core.pack import TaskPack
from rlvr.core.types import Task, Verdict
from rlvr.envs import ENVS
from rlvr.envs.agent import AgentEnv
from rlvr.graders.base import Grader, make_grader
from rlvr.task_packs.registry import resolve_pack


class SessionError(RuntimeError):
    """A session used out of order (a tool call before `start`, after the episode ended, ...)."""


class EpisodeOver(SessionError):
    """The episode has ended; `finish()` gives its verdict and `start()` begins the next one."""


@dataclass(frozen=True)
class EpisodeStart:
    task_id: str
    prompt: str  # the task for a caller that passes `tools` natively
    observation: str  # the env's own first observation (text protocol: it describes the JSON turn format)
    tools: list[dict[str, Any]]  # OpenAI function schemas (JSON Schema parameters)
    toolset: str  # tasks with the same toolset name offer the same tools
    info: dict[str, Any]


@dataclass(frozen=True)
class ToolOutput:
    text: str  # the tool's result (or the env's error message) as the model should see it
    done: bool  # the episode ended with this call (final answer, submit, or a budget ran out)
    reward: float | None = None  # the verdict's reward, when done


@dataclass(frozen=True)
class EpisodeResult:
    """The trusted verdict of one episode."""

    task_id: str
    reward: float
    passed: bool
    components: dict[str, float]
    flags: list[str]
    timings: dict[str, float]
    error: str | None
    fault: str | None
    terminated: bool  # ended by the agent (final answer, submit)
    truncated: bool  # ended by a budget or by `finish()` on an unfinished episode
    turns: int
    verdict: dict[str, Any] = field(repr=False)

    @property
    def disrupted(self) -> bool:
        """Grading itself failed (a fault of the machinery): trainers should drop the episode."""
        return self.error is not None and self.fault not in (None, "input")


def env_id_for(pack: TaskPack) -> str:
    """The registered rlvr env that runs `pack`'s family."""
    for env_id, entry_point in ENVS.items():
        module, _, name = entry_point.partition(":")
        env_class = getattr(__import__(module, fromlist=[name]), name)
        if getattr(env_class, "family", None) == pack.family:
            return env_id
    raise ValueError(f"no rlvr env runs the {pack.family!r} family of pack {pack.name!r}")


def _env_parameters(env_id: str) -> set[str]:
    """The keyword arguments the env's constructors name (the rest are grader options)."""
    entry_point = str(gym.spec(env_id).entry_point)
    module, _, name = entry_point.partition(":")
    env_class = getattr(__import__(module, fromlist=[name]), name)
    names: set[str] = set()
    for klass in env_class.__mro__:
        init = klass.__dict__.get("__init__")
        if init is None:
            continue
        for parameter in inspect.signature(init).parameters.values():
            if parameter.kind not in (parameter.VAR_KEYWORD, parameter.VAR_POSITIONAL):
                names.add(parameter.name)
    return names - {"self", "pack", "grader", "split", "task_id"}


class Sessions:
    """Episodes of one pack's tasks, all graded by one shared grader (built on first use).

    `options` are the env's own keyword arguments (`max_turns`, Repo-v0's `mode`, `max_tokens`, ...)
    and the grader's options (`weights`, `jobs`, ...); a name that is neither is an error here.
    """

    def __init__(
        self,
        pack: str | TaskPack,
        *,
        split: str | None = None,
        env_id: str | None = None,
        grader: Grader | None = None,
        **options: Any,
    ) -> None:
        self.pack = resolve_pack(pack)
        self.split = split
        self.env_id = env_id or env_id_for(self.pack)
        env_names = _env_parameters(self.env_id)
        self.env_options = {k: v for k, v in options.items() if k in env_names}
        grader_options = {k: v for k, v in options.items() if k not in env_names}
        self._owns_grader = grader is None
        self._grader = grader if grader is not None else make_grader(self.pack, **grader_options)
        self._probe: gym.Env[Any, Any] | None = None
        self._lock = threading.Lock()
        self.tasks: list[Task] = self.pack.tasks(split)
        if not self.tasks:
            raise ValueError(f"pack {self.pack.name!r} has no tasks in split {split!r}")

    @property
    def grader(self) -> Grader:
        return self._grader

    def make_env(self) -> gym.Env[Any, Any]:
        return gym.make(
            self.env_id, pack=self.pack, split=self.split, grader=self._grader, **self.env_options
        )

    def _agent_probe(self) -> AgentEnv:
        with self._lock:
            if self._probe is None:
                self._probe = self.make_env()
            return _agent(self._probe)

    def toolset(self, task: Task | str) -> tuple[str, list[dict[str, Any]]]:
        """The toolset name and tool schemas of a task's episodes (no episode is started)."""
        resolved = self.pack.get(task) if isinstance(task, str) else task
        return self._agent_probe().toolset(resolved)

    def toolsets(self) -> dict[str, list[dict[str, Any]]]:
        """Every toolset of this split's tasks, by name."""
        found: dict[str, list[dict[str, Any]]] = {}
        for task in self.tasks:
            name, schemas = self.toolset(task)
            found.setdefault(name, schemas)
        return found

    def open(self) -> Session:
        return Session(self.make_env())

    def close(self) -> None:
        with self._lock:
            if self._probe is not None:
                self._probe.close()
                self._probe = None
        if self._owns_grader:
            self._grader.close()

    def __enter__(self) -> Sessions:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _agent(env: gym.Env[Any, Any]) -> AgentEnv:
    unwrapped = env.unwrapped
    if not isinstance(unwrapped, AgentEnv):
        raise TypeError(
            f"{type(unwrapped).__name__} is not an agent env (it has no tools); use its Gymnasium "
            "step(text) API, or a multi-turn pack (tool, repo)"
        )
    return unwrapped


def _tool_text(observation: str) -> str:
    """The content of the one tool message an observation of a one-call turn holds (or the text as is)."""
    try:
        messages = json.loads(observation)
    except ValueError:
        return observation
    if isinstance(messages, list) and len(messages) == 1 and isinstance(messages[0], dict):
        content = messages[0].get("content")
        if isinstance(content, str):
            return content
    return observation


class Session:
    """One env and its episodes, one after another (not shared between threads)."""

    def __init__(self, env: gym.Env[Any, Any]) -> None:
        self.env = env
        self.agent = _agent(env)
        self.task_id: str | None = None
        self.done = True
        self.last_active = time.monotonic()
        self._result: EpisodeResult | None = None
        self._terminated = False
        self._truncated = False
        self._lock = threading.Lock()

    def start(self, task_id: str | None = None, *, seed: int | None = None) -> EpisodeStart:
        with self._lock:
            self.last_active = time.monotonic()
            options = {"task_id": task_id} if task_id is not None else None
            observation, info = self.env.reset(seed=seed, options=options)
            task = self.env.unwrapped.task  # type: ignore[attr-defined]
            assert isinstance(task, Task)
            toolset, tools = self.agent.toolset(task)
            self.task_id = task.id
            self.done = False
            self._result = None
            self._terminated = self._truncated = False
            return EpisodeStart(
                task_id=task.id,
                prompt=self.agent.function_calling_prompt(),
                observation=str(observation),
                tools=tools,
                toolset=toolset,
                info=info,
            )

    def call_tool(self, name: str, arguments: dict[str, Any] | None = None) -> ToolOutput:
        """One tool call as one turn of the episode."""
        if not isinstance(arguments, dict | None):
            return ToolOutput(f"error: arguments of {name!r} must be an object", done=False)
        try:
            action = self.agent.tool_call_action(str(name), dict(arguments or {}))
        except (TypeError, ValueError) as exc:  # arguments that JSON cannot carry
            return ToolOutput(f"error: arguments of {name!r} are not JSON data: {exc}", done=False)
        except RecursionError:  # the policy's own nesting: its error to see, never an exception out of here
            return ToolOutput(
                f"error: arguments of {name!r} are nested too deeply; send flat JSON values", done=False
            )
        text, done, reward = self._step(action)
        return ToolOutput(_tool_text(text), done, reward)

    def act(self, action: str) -> ToolOutput:
        """One whole assistant turn in the env's text protocol; `text` is the env's observation."""
        return ToolOutput(*self._step(action))

    def _step(self, action: str) -> tuple[str, bool, float | None]:
        with self._lock:
            if self.task_id is None:
                raise SessionError("call start() before a tool call")
            if self.done:
                raise EpisodeOver(f"the episode of {self.task_id} is over; call finish() for its verdict")
            self.last_active = time.monotonic()
            observation, reward, terminated, truncated, _info = self.env.step(action)
            if terminated or truncated:
                self.done = True
                self._terminated, self._truncated = bool(terminated), bool(truncated)
                return str(observation) or "the episode is over", True, float(reward)
            return str(observation), False, None

    def finish(self) -> EpisodeResult:
        """The verdict; ends an unfinished episode first (grading the state as it is)."""
        with self._lock:
            if self.task_id is None:
                raise SessionError("call start() before finish()")
            if self._result is not None:
                return self._result
            if not self.done:
                self.agent.end_episode()
                self.done = True
                self._truncated = True
            verdict = self.env.unwrapped.last_verdict  # type: ignore[attr-defined]
            assert isinstance(verdict, Verdict)
            self._result = _result(verdict, self._terminated, self._truncated, self._turns())
            return self._result

    def _turns(self) -> int:
        return int(getattr(self.env.unwrapped, "turn", 0))

    def close(self) -> None:
        with self._lock:
            self.env.close()
            self.done = True


def _result(verdict: Verdict, terminated: bool, truncated: bool, turns: int) -> EpisodeResult:
    return EpisodeResult(
        task_id=verdict.task_id,
        reward=float(verdict.reward),
        passed=bool(verdict.passed),
        components={name: float(c.score) for name, c in verdict.components.items()},
        flags=list(verdict.flags),
        timings=dict(verdict.timings),
        error=verdict.error,
        fault=verdict.fault,
        terminated=terminated,
        truncated=truncated,
        turns=turns,
        verdict=verdict.to_json(),
    )


def task_ids(pack: str | TaskPack, split: str | None = None) -> Iterator[str]:
    for task in resolve_pack(pack).tasks(split):
        yield task.id
