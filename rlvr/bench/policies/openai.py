"""`openai:URL` — any OpenAI-compatible server (vLLM, llama.cpp, `transformers serve`, ...).

URL is a base such as `http://127.0.0.1:8000/v1` or a full `.../v1/chat/completions` or
`.../v1/completions` endpoint. Requests run concurrently; connection errors, timeouts, 429 and 5xx
are retried with exponential backoff (honouring Retry-After); other 4xx fail the sample at once.
"""

from __future__ import annotations

import os
import random
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from rlvr.bench.policies.base import (
    Generation,
    Policy,
    PolicyError,
    Request,
    Settings,
    chat_messages,
    truncate_at_stop,
)

RETRYABLE_STATUS = {408, 409, 425, 429, 500, 502, 503, 504}
MAX_BACKOFF_SECONDS = 30.0


class RequestFailed(Exception):
    def __init__(self, message: str, retryable: bool, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retryable = retryable
        self.retry_after = retry_after


def split_endpoint(url: str, prompt_format: str) -> tuple[str, str]:
    """(base URL ending in the API root, endpoint kind "chat" | "completions")."""
    url = url.rstrip("/")
    if not url.startswith(("http://", "https://")):
        raise PolicyError(f"openai: URL must start with http:// or https://, got {url!r}")
    if url.endswith("/chat/completions"):
        return url[: -len("/chat/completions")], "chat"
    if url.endswith("/completions"):
        return url[: -len("/completions")], "completions"
    return url, "completions" if prompt_format == "raw" else "chat"


def _retry_after(headers: Any) -> float | None:
    value = headers.get("retry-after")
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


class OpenAIPolicy(Policy):
    """Options: `model` (default: the server's first listed model), `concurrency`, `retries`,
    `timeout` (seconds per request), `backoff` (first retry delay, doubled each retry),
    `api_key` (default: $OPENAI_API_KEY, if set)."""

    def __init__(
        self,
        spec: str,
        url: str,
        settings: Settings | None = None,
        *,
        model: str | None = None,
        concurrency: int = 8,
        retries: int = 4,
        timeout: float = 120.0,
        backoff: float = 0.5,
        api_key: str | None = None,
    ) -> None:
        super().__init__(spec, settings)
        try:
            import httpx
        except ImportError as exc:
            raise PolicyError(f"openai: policies need httpx (pip install 'rlvr[serve]'): {exc}") from exc
        if concurrency < 1 or retries < 0 or timeout <= 0 or backoff < 0:
            raise PolicyError(
                "openai: concurrency >= 1, retries >= 0, timeout > 0 and backoff >= 0 are required"
            )
        if self.settings.prompt_format == "chat" and url.rstrip("/").endswith("/v1/completions"):
            raise PolicyError("openai: --prompt-format chat needs a chat/completions endpoint")
        self.base, self.kind = split_endpoint(url, self.settings.prompt_format)
        self.concurrency, self.retries, self.timeout, self.backoff = concurrency, retries, timeout, backoff
        self.preferred_batch = 4 * concurrency
        key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        self._httpx = httpx
        self.client = httpx.Client(headers=headers, timeout=timeout)
        self.model = model or self._first_model()

    def _first_model(self) -> str:
        try:
            response = self.client.get(f"{self.base}/models")
            response.raise_for_status()
            models = response.json().get("data") or []
            return str(models[0]["id"])
        except Exception as exc:
            raise PolicyError(
                f"openai: could not list models at {self.base}/models ({exc}); pass --model NAME"
            ) from exc

    def _payload(self, request: Request) -> dict[str, Any]:
        settings = self.settings
        payload: dict[str, Any] = {
            "model": self.model,
            "max_tokens": settings.max_tokens,
            "temperature": settings.temperature,
            "top_p": settings.top_p,
            "seed": request.seed,
        }
        if settings.stop:
            payload["stop"] = list(settings.stop)
        if self.kind == "chat":
            payload["messages"] = chat_messages(request.prompt, settings.system)
        else:
            payload["prompt"] = request.prompt
        return payload

    def _post_once(self, payload: dict[str, Any]) -> dict[str, Any]:
        httpx = self._httpx
        try:
            response = self.client.post(
                f"{self.base}/{'chat/completions' if self.kind == 'chat' else 'completions'}", json=payload
            )
        except httpx.TimeoutException as exc:
            raise RequestFailed(f"timed out after {self.timeout:g}s ({type(exc).__name__})", True) from exc
        except httpx.TransportError as exc:
            raise RequestFailed(f"connection failed: {type(exc).__name__}: {exc}", True) from exc
        if response.status_code != 200:
            body = response.text[:300].replace("\n", " ")
            raise RequestFailed(
                f"HTTP {response.status_code}: {body}",
                response.status_code in RETRYABLE_STATUS,
                _retry_after(response.headers),
            )
        try:
            data = response.json()
        except ValueError as exc:
            raise RequestFailed(f"response is not JSON: {response.text[:200]!r}", False) from exc
        if not isinstance(data, dict):
            raise RequestFailed("response is not a JSON object", False)
        return data

    def _parse(self, data: dict[str, Any]) -> tuple[str, str | None, dict[str, Any]]:
        choices = data.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise RequestFailed(f"response has no choices: {str(data)[:200]}", False)
        choice = choices[0]
        if self.kind == "chat":
            message = choice.get("message") or {}
            text = message.get("content") if isinstance(message, dict) else None
        else:
            text = choice.get("text")
        if not isinstance(text, str):
            raise RequestFailed(f"response choice has no text: {str(choice)[:200]}", False)
        usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
        return text, choice.get("finish_reason"), usage or {}

    def _one(self, request: Request) -> Generation:
        try:
            return self._request_with_retries(request)
        except Exception as exc:  # an unexpected failure is still one recorded, failed sample
            return Generation.failed(f"request failed: {type(exc).__name__}: {exc}")

    def _request_with_retries(self, request: Request) -> Generation:
        payload = self._payload(request)
        started = time.perf_counter()
        attempt = 0
        while True:
            try:
                text, finish, usage = self._parse(self._post_once(payload))
                break
            except RequestFailed as exc:
                if not exc.retryable or attempt >= self.retries:
                    tries = f" after {attempt + 1} attempts" if attempt else ""
                    return Generation.failed(f"request failed{tries}: {exc}", time.perf_counter() - started)
                delay = min(MAX_BACKOFF_SECONDS, self.backoff * 2**attempt) * (0.5 + random.random() / 2)
                time.sleep(
                    min(MAX_BACKOFF_SECONDS, exc.retry_after) if exc.retry_after is not None else delay
                )
                attempt += 1
        text, stopped = truncate_at_stop(text, self.settings.stop)
        prompt_tokens, completion_tokens = usage.get("prompt_tokens"), usage.get("completion_tokens")
        return Generation(
            text=text,
            prompt_tokens=prompt_tokens if isinstance(prompt_tokens, int) else None,
            completion_tokens=completion_tokens if isinstance(completion_tokens, int) else None,
            latency_s=time.perf_counter() - started,
            finish_reason="stop" if stopped else (finish if isinstance(finish, str) else None),
        )

    def generate(self, requests: list[Request]) -> list[Generation]:
        with ThreadPoolExecutor(max_workers=min(self.concurrency, max(1, len(requests)))) as pool:
            return list(pool.map(self._one, requests))

    def identity(self) -> dict[str, Any]:
        return {**super().identity(), "model": self.model, "endpoint": self.kind}

    def close(self) -> None:
        self.client.close()
