"""Generating policies against real backends: a tiny causal LM built locally from a config (no hub),
`transformers serve` on loopback as the OpenAI-compatible server, and a scripted stdlib HTTP server
for retry, backoff and timeout behaviour."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from rlvr.bench.policies import Generation, PolicyError, Request, Settings, make_policy
from rlvr.bench.policies.hf import HFPolicy
from rlvr.bench.policies.openai import OpenAIPolicy
from rlvr.cli import main

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

CHAT_TEMPLATE = (
    "{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}assistant: {% endif %}"
)
CORPUS = ["def add(a, b):\n    return a + b\n", "def mul(a, b):\n    return a * b\n", "import math\n"]


def build_tiny_model(directory: Path, *, chat: bool) -> Path:
    """A 2-layer GPT-2 with a byte-level BPE tokenizer trained on a few lines, saved locally."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=320, special_tokens=["<|endoftext|>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    tokenizer.train_from_iterator(CORPUS, trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer, eos_token="<|endoftext|>", pad_token="<|endoftext|>"
    )
    if chat:
        fast.chat_template = CHAT_TEMPLATE
    fast.save_pretrained(directory)
    torch.manual_seed(0)
    config = GPT2Config(
        vocab_size=len(fast), n_positions=128, n_embd=32, n_layer=2, n_head=2,
        bos_token_id=fast.eos_token_id, eos_token_id=fast.eos_token_id, pad_token_id=fast.eos_token_id,
    )  # fmt: skip
    GPT2LMHeadModel(config).save_pretrained(directory)
    return directory


@pytest.fixture(scope="module", autouse=True)
def one_torch_thread() -> Iterator[None]:
    """On a shared 2-core machine, two spinning OpenMP threads make a tiny model ~30x slower."""
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_model(tmp_path_factory.mktemp("tiny-model"), chat=True)


def requests_for(prompts: list[str], seed: int = 1) -> list[Request]:
    return [Request(f"t{i}", p, 0, seed + i) for i, p in enumerate(prompts)]


PROMPTS = ["def add(a, b):\n", "import", "def mul(a, b):\n    return", "x = 1\n", "def"]


def test_hf_policy_generates_in_batches(model_dir: Path) -> None:
    settings = Settings(temperature=1.0, max_tokens=12, prompt_format="raw")
    policy = make_policy(f"hf:{model_dir}", settings, batch_size=2)
    first = policy.generate(requests_for(PROMPTS))
    assert len(first) == len(PROMPTS)
    for generation in first:
        assert generation.error is None and isinstance(generation.text, str)
        assert generation.completion_tokens is not None and 1 <= generation.completion_tokens <= 12
        assert generation.prompt_tokens is not None and generation.prompt_tokens >= 1
        assert generation.latency_s is not None and generation.latency_s > 0
    again = policy.generate(requests_for(PROMPTS))  # same seeds, same batches -> same samples
    assert [g.text for g in again] == [g.text for g in first]


def test_hf_greedy_output_does_not_depend_on_batch_padding(model_dir: Path) -> None:
    policy = make_policy(
        f"hf:{model_dir}", Settings(temperature=0.0, max_tokens=8, prompt_format="raw"), batch_size=4
    )
    alone = policy.generate(requests_for(["def"]))[0]
    padded = policy.generate(requests_for(["def mul(a, b):\n    return a", "def"]))[1]
    assert alone.text == padded.text


def test_hf_chat_template_and_context_limit(model_dir: Path) -> None:
    policy = make_policy(f"hf:{model_dir}", Settings(max_tokens=200), batch_size=2)
    assert (
        isinstance(policy, HFPolicy) and policy.use_chat
    )  # the tokenizer has a chat template and format is auto
    (too_long,) = policy.generate(requests_for(["def add(a, b):\n"]))
    assert too_long.text is None and "exceeds the model's context of 128 tokens" in (too_long.error or "")
    with pytest.raises(PolicyError, match="does not exist"):
        make_policy("hf:/nonexistent/model")


def write_code_pack(root: Path) -> Path:
    root.mkdir()
    (root / "pack.toml").write_text('name = "tiny-code"\nfamily = "code"\nversion = "1"\n')
    tasks = [
        {"id": "add", "prompt": "def add(a, b):\n", "entry_point": "add", "difficulty": 1,
         "reference": "def add(a, b):\n    return a + b\n", "tests": [{"args": [1, 2]}, {"args": [3, 4]}]},
        {"id": "mul", "prompt": "def mul(a, b):\n", "entry_point": "mul", "difficulty": 2,
         "reference": "def mul(a, b):\n    return a * b\n", "tests": [{"args": [2, 3]}, {"args": [0, 9]}]},
    ]  # fmt: skip
    (root / "tasks.jsonl").write_text("".join(json.dumps(t) + "\n" for t in tasks))
    return root


def bench_args(pack: Path, policy: str, out: Path) -> list[str]:
    return ["bench", "--pack", str(pack), "--policy", policy, "--k", "1,2", "--n", "2", "--max-tokens", "10",
            "--temperature", "1.0", "--jobs", "2", "--no-progress", "--out", str(out)]  # fmt: skip


def check_generated_run(out: Path) -> dict[str, Any]:
    results = json.loads((out / "results.json").read_text())
    assert results["tasks"] == 2 and results["samples"] == 4
    assert results["generation_errors"] == 0
    assert results["pass@1"] is not None and 0.0 <= results["pass@1"] <= 1.0
    assert results["completion_tokens"]["mean"] is not None and results["latency_s"]["mean"] is not None
    samples = [json.loads(x) for x in (out / "samples.jsonl").read_text().splitlines()]
    assert sorted((s["task_id"], s["sample"]) for s in samples) == [
        ("add", 0),
        ("add", 1),
        ("mul", 0),
        ("mul", 1),
    ]
    assert all(isinstance(s["completion"], str) for s in samples)
    assert (out / "report.html").exists()
    return results


def test_bench_with_local_hf_model(model_dir: Path, tmp_path: Path) -> None:
    pack = write_code_pack(tmp_path / "pack")
    assert main([*bench_args(pack, f"hf:{model_dir}", tmp_path / "out"), "--batch-size", "4"]) == 0
    check_generated_run(tmp_path / "out")


# ----------------------------------------------------------------- OpenAI-compatible servers


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def served_model(model_dir: Path) -> Iterator[str]:
    """`transformers serve` with the tiny local model on a loopback port (offline)."""
    executable = shutil.which("transformers", path=str(Path(sys.executable).parent))
    if executable is None or not transformers.utils.import_utils.is_serve_available():
        pytest.skip("transformers serve needs fastapi, uvicorn and openai (the serve and dev extras)")
    port = free_port()
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    command = [
        executable,
        "serve",
        str(model_dir),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--device",
        "cpu",
    ]
    server = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    import httpx

    try:
        deadline = time.monotonic() + 120
        while True:
            if server.poll() is not None:
                pytest.fail(f"transformers serve exited: {server.stderr.read() if server.stderr else ''}")
            try:
                if httpx.get(f"http://127.0.0.1:{port}/v1/models", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                pytest.fail("transformers serve did not come up within 120 s")
            time.sleep(0.5)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def test_openai_policy_chat_and_completions_endpoints(served_model: str, model_dir: Path) -> None:
    settings = Settings(temperature=1.0, max_tokens=6)
    chat = make_policy(f"openai:{served_model}", settings, concurrency=2)
    assert isinstance(chat, OpenAIPolicy) and chat.model == str(model_dir)  # discovered from /v1/models
    completions = make_policy(
        f"openai:{served_model}/completions", settings, concurrency=2, model=str(model_dir)
    )
    try:
        for policy in (chat, completions):
            generations = policy.generate(requests_for(["def add(a, b):\n", "import"]))
            assert all(g.error is None and isinstance(g.text, str) for g in generations), generations
            assert all(g.completion_tokens is not None and 1 <= g.completion_tokens <= 6 for g in generations)
    finally:
        chat.close()
        completions.close()


def test_bench_against_openai_compatible_server(served_model: str, tmp_path: Path) -> None:
    pack = write_code_pack(tmp_path / "pack")
    assert main([*bench_args(pack, f"openai:{served_model}", tmp_path / "out"), "--concurrency", "2"]) == 0
    check_generated_run(tmp_path / "out")


class ScriptedServer:
    """A loopback HTTP server answering POSTs from a script of (status, delay seconds) steps."""

    def __init__(self, script: list[tuple[int, float]]) -> None:
        self.script = list(script)
        self.posts = 0
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("content-length", 0)))
                owner.posts += 1
                status, delay = owner.script.pop(0) if owner.script else (200, 0.0)
                time.sleep(delay)
                body = (
                    {"choices": [{"message": {"role": "assistant", "content": "    return a + b\n"},
                                  "finish_reason": "stop"}], "usage": {"prompt_tokens": 5, "completion_tokens": 7}}
                    if status == 200
                    else {"error": {"message": f"status {status}"}}
                )  # fmt: skip
                payload = json.dumps(body).encode()
                try:
                    self.send_response(status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(payload)))
                    if status == 503:
                        self.send_header("retry-after", "0")
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout test)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> ScriptedServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)


def one(url: str, **options: Any) -> Generation:
    policy = make_policy(f"openai:{url}", Settings(), model="m", backoff=0.01, **options)
    try:
        return policy.generate(requests_for(["def add(a, b):\n"]))[0]
    finally:
        policy.close()


def test_openai_policy_retries_transient_failures() -> None:
    with ScriptedServer([(503, 0.0), (429, 0.0), (500, 0.0)]) as server:
        generation = one(server.url, retries=3)
    assert server.posts == 4
    assert generation.error is None and generation.text == "    return a + b\n"
    assert (generation.prompt_tokens, generation.completion_tokens) == (5, 7)


def test_openai_policy_gives_up_with_a_clear_error() -> None:
    with ScriptedServer([(503, 0.0)] * 5) as server:
        generation = one(server.url, retries=1)
    assert server.posts == 2 and generation.text is None
    assert "after 2 attempts" in (generation.error or "") and "HTTP 503" in (generation.error or "")
    with ScriptedServer([(400, 0.0)]) as server:
        generation = one(server.url, retries=3)
    assert server.posts == 1 and "HTTP 400" in (generation.error or "")  # a client error is not retried


def test_openai_policy_times_out_requests() -> None:
    with ScriptedServer([(200, 3.0), (200, 3.0)]) as server:
        generation = one(server.url, retries=1, timeout=0.3)
    assert generation.text is None and "timed out" in (generation.error or "")
    # Without the per-request timeout the client would have waited for an answer and got one: the
    # error names the timeout, and the retry was a second post.
    assert server.posts == 2


def test_openai_policy_reports_an_unreachable_server() -> None:
    port = free_port()  # nothing listens here
    with pytest.raises(PolicyError, match="pass --model"):
        make_policy(f"openai:http://127.0.0.1:{port}/v1", Settings(), retries=0)
    generation = one(f"http://127.0.0.1:{port}/v1", retries=1)
    assert generation.text is None and "connection failed" in (generation.error or "")
