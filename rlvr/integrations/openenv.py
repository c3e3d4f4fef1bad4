"""rlvr agent envs as an OpenEnv environment server (`rlvr serve --protocol openenv --pack tool-worlds`).

Any OpenEnv client drives it over the WebSocket session protocol (`/ws`: reset, step, state, close), e.g.
openenv-core's own `GenericEnvClient` or `RlvrEnvClient` below:

    with RlvrEnvClient(base_url="http://127.0.0.1:8000") as env:
        first = env.reset(task_id="tool/reprice/0")        # observation: prompt, tools (OpenAI schemas)
        step = env.step(RlvrAction(tool="set_price", arguments={"sku": "SKU-102", "price": 13.58}))
        step = env.step(RlvrAction(tool="final_answer", arguments={"answer": "done"}))
        step.reward, step.observation.verdict                # the trusted verdict when done

An action is one tool call (`tool` + `arguments`), one whole assistant turn in the env's text protocol
(`text`), or `end=True` (stop now: the state is graded as it is, flagged `unfinished`). Each WebSocket
connection is one rlvr session (rlvr/integrations/session.py) on one shared grader; when the client
disconnects the session and its workspace are dropped. A session idle longer than `idle_timeout`
seconds is closed by the server and its next request answers an error saying so (reset starts anew).
"""

from __future__ import annotations

import contextlib
import threading
import time
import weakref
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any

from openenv.core.client_types import StepResult
from openenv.core.env_client import EnvClient
from openenv.core.env_server.http_server import create_app as openenv_create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, EnvironmentMetadata, Observation, State
from pydantic import Field
from starlette.requests import Request
from starlette.responses import JSONResponse

from rlvr.core.pack import TaskPack, UnknownTaskError
from rlvr.integrations.session import EpisodeResult, Session, SessionError, Sessions


class RlvrAction(Action):
    tool: str | None = Field(default=None, description="a tool to call (see the reset observation's `tools`)")
    arguments: dict[str, Any] = Field(default_factory=dict, description="the tool's arguments")
    text: str | None = Field(
        default=None, description="or: one whole assistant turn in the env's JSON protocol"
    )
    end: bool = Field(default=False, description="or: stop now and grade the state as it is")


class RlvrObservation(Observation):
    text: str = Field(default="", description="the tool result, the env's observation, or the task prompt")
    task_id: str = ""
    prompt: str | None = Field(
        default=None, description="on reset: the task, for clients that pass tools natively"
    )
    tools: list[dict[str, Any]] | None = Field(default=None, description="on reset: OpenAI function schemas")
    verdict: dict[str, Any] | None = Field(default=None, description="when done: the full verdict")


class RlvrState(State):
    task_id: str | None = None
    done: bool = True
    turns: int = 0
    pack: str = ""
    env_id: str = ""


class SessionExpired(SessionError):
    pass


class BadRequest(ValueError):
    """A request the client got wrong (answered 400 over HTTP, an error message over the WebSocket)."""


@dataclass(frozen=True)
class ServerOptions:
    max_sessions: int = 2048
    idle_timeout: float = 600.0  # seconds without a request before a session is closed


class SessionRegistry:
    """The live environments of one server; a reaper thread closes the idle ones."""

    def __init__(self, idle_timeout: float) -> None:
        self.idle_timeout = idle_timeout
        self._live: weakref.WeakSet[RlvrOpenEnvEnvironment] = weakref.WeakSet()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._reaper = threading.Thread(target=self._reap_forever, name="rlvr-openenv-reaper", daemon=True)
        self._reaper.start()

    def add(self, environment: RlvrOpenEnvEnvironment) -> None:
        with self._lock:
            self._live.add(environment)

    def discard(self, environment: RlvrOpenEnvEnvironment) -> None:
        with self._lock:
            self._live.discard(environment)

    def open_sessions(self) -> int:
        with self._lock:
            return sum(1 for environment in self._live if environment.session is not None)

    def reap(self) -> int:
        now = time.monotonic()
        with self._lock:
            idle = [
                e
                for e in self._live
                if e.session is not None and not e.busy and now - e.last_active > self.idle_timeout
            ]
        for environment in idle:
            environment.expire()
        return len(idle)

    def _reap_forever(self) -> None:
        while not self._stop.wait(min(5.0, max(0.05, self.idle_timeout / 4))):
            self.reap()

    def stop(self) -> None:
        self._stop.set()


class RlvrOpenEnvEnvironment(Environment[RlvrAction, RlvrObservation, RlvrState]):
    """One OpenEnv session: one rlvr session, opened at the first reset."""

    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self, sessions: Sessions, registry: SessionRegistry) -> None:
        super().__init__()
        self.sessions = sessions
        self.registry = registry
        self.session: Session | None = None
        self.last_active = time.monotonic()
        self.expired = False
        self.episode_id: str | None = None
        self.steps = 0
        self._busy = 0  # requests running now (a busy session is never idle)
        self._close_pending = False  # closed by the server mid-request: the request's end closes it
        self._lock = threading.Lock()
        registry.add(self)

    @property
    def busy(self) -> bool:
        return self._busy > 0

    @contextlib.contextmanager
    def _request(self) -> Iterator[None]:
        with self._lock:
            self._busy += 1
        try:
            yield
        finally:
            with self._lock:
                self._busy -= 1
                closing = self._busy == 0 and self._close_pending
            if closing:
                self._close_now()

    def _open(self) -> Session:
        with self._lock:
            if self.session is None:
                self.session = self.sessions.open()
            self.expired = False
            self.last_active = time.monotonic()
            return self.session

    def _current(self) -> Session:
        with self._lock:
            if self.expired:
                raise SessionExpired(
                    f"this session was idle for more than {self.registry.idle_timeout:g}s and was closed; "
                    "its episode is lost: reset() to start a new one"
                )
            if self.session is None:
                raise SessionError(
                    "call reset() before step() (each HTTP request gets a fresh env: run an episode over "
                    "the /ws WebSocket session)"
                )
            self.last_active = time.monotonic()
            return self.session

    def reset(
        self,
        seed: int | None = None,
        episode_id: str | None = None,
        task_id: str | None = None,
        **kwargs: Any,
    ) -> RlvrObservation:
        if kwargs:
            raise BadRequest(
                f"unknown reset arguments {sorted(kwargs)}; reset takes seed, episode_id, task_id"
            )
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
            raise BadRequest(f"seed must be a non-negative integer, not {seed!r}")
        if task_id is not None and not isinstance(task_id, str):
            raise BadRequest(f"task_id must be a string, not {type(task_id).__name__}")
        with self._request():
            session = self._open()
            try:
                start = session.start(task_id, seed=seed)
            except UnknownTaskError as exc:
                raise BadRequest(f"{exc}; the pack's tasks are listed by `rlvr tasks`") from exc
            self.episode_id, self.steps = episode_id, 0
        return RlvrObservation(
            text=start.observation, task_id=start.task_id, prompt=start.prompt, tools=start.tools
        )

    def step(self, action: RlvrAction, timeout_s: float | None = None, **kwargs: Any) -> RlvrObservation:
        chosen = [action.tool is not None, action.text is not None, action.end]
        if sum(chosen) != 1:
            raise BadRequest("an action is exactly one of: tool (+ arguments), text, end=true")
        with self._request():
            return self._step(self._current(), action)

    def _step(self, session: Session, action: RlvrAction) -> RlvrObservation:
        self.steps += 1
        if action.end:
            return self._finished(session, session.finish(), "the episode was ended")
        if action.tool is not None:
            output = session.call_tool(action.tool, action.arguments)
        else:
            output = session.act(str(action.text))
        if output.done:
            return self._finished(session, session.finish(), output.text)
        return RlvrObservation(text=output.text, task_id=session.task_id or "")

    def _finished(self, session: Session, result: EpisodeResult, text: str) -> RlvrObservation:
        return RlvrObservation(
            text=text, task_id=result.task_id, done=True, reward=result.reward, verdict=result.verdict
        )

    @property
    def state(self) -> RlvrState:
        session = self.session
        return RlvrState(
            episode_id=self.episode_id,
            step_count=self.steps,
            task_id=None if session is None else session.task_id,
            done=True if session is None else session.done,
            turns=0 if session is None else session._turns(),
            pack=self.sessions.pack.name,
            env_id=self.sessions.env_id,
        )

    def get_metadata(self) -> EnvironmentMetadata:
        return EnvironmentMetadata(
            name=f"rlvr:{self.sessions.pack.name}",
            description=f"rlvr {self.sessions.env_id} on pack {self.sessions.pack.name} (trusted verifiers)",
            version="1",
        )

    def expire(self) -> None:
        with self._lock:
            if self._busy:  # a request started after the reaper looked: not idle after all
                return
            session, self.session, self.expired = self.session, None, True
        if session is not None:
            session.close()

    def close(self) -> None:
        """Never waits for a running request: openenv-core calls this on its event loop when a client
        disconnects, so waiting would stall every other client; the request's end closes it instead."""
        with self._lock:
            if self._busy:
                self._close_pending = True
                return
        self._close_now()

    def _close_now(self) -> None:
        with self._lock:
            session, self.session, self._close_pending = self.session, None, False
        if session is not None:
            session.close()
        self.registry.discard(self)


def create_app(
    pack: str | TaskPack,
    *,
    options: ServerOptions | None = None,
    split: str | None = None,
    **env_options: Any,
) -> Any:
    """The OpenEnv FastAPI app for `pack` (`env_options`: the env's and the grader's options)."""
    limits = options or ServerOptions()
    sessions = Sessions(pack, split=split, **env_options)
    registry = SessionRegistry(limits.idle_timeout)

    def factory() -> RlvrOpenEnvEnvironment:
        return RlvrOpenEnvEnvironment(sessions, registry)

    app = openenv_create_app(factory, RlvrAction, RlvrObservation, max_concurrent_envs=limits.max_sessions)
    # over HTTP a client's mistake is a 4xx with the reason, never a 500
    app.add_exception_handler(BadRequest, _client_error(400))
    app.add_exception_handler(SessionError, _client_error(409))
    app.state.rlvr_sessions = sessions
    app.state.rlvr_registry = registry
    return app


def _client_error(status: int) -> Callable[[Request, Exception], Awaitable[JSONResponse]]:
    async def handler(request: Request, exc: Exception) -> JSONResponse:
        return JSONResponse(status_code=status, content={"detail": str(exc)})

    return handler


def close_app(app: Any) -> None:
    """Stop the reaper and release the shared grader (after the server stopped)."""
    app.state.rlvr_registry.stop()
    app.state.rlvr_sessions.close()


class RlvrEnvClient(EnvClient[RlvrAction, RlvrObservation, RlvrState]):
    """A typed OpenEnv client for an rlvr server."""

    def _step_payload(self, action: RlvrAction) -> dict[str, Any]:
        return action.model_dump(exclude_defaults=True)

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[RlvrObservation]:
        observation = RlvrObservation(
            **{
                **payload.get("observation", {}),
                "done": payload.get("done", False),
                "reward": payload.get("reward"),
            }
        )
        return StepResult(
            observation=observation, reward=payload.get("reward"), done=payload.get("done", False)
        )

    def _parse_state(self, payload: dict[str, Any]) -> RlvrState:
        return RlvrState(**payload)
