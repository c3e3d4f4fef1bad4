"""The math worker speaks a protocol, not stdout: replies travel on their own pipe as token-tagged frames, so
nothing an answer makes the worker print can pose as a reply; answers are parsed, never run as code; and
reasoning-gym scorers are limited to an allow-list of generators that never evaluate answers as code."""

from __future__ import annotations

import ast
import inspect
import json
import re
import sys
import textwrap
from pathlib import Path

import pytest

from rlvr.core.pack import StaticPack
from rlvr.core.types import Task
from rlvr.graders.math.grader import MathGrader
from rlvr.graders.math.worker import SympyWorker, WorkerProtocolError
from rlvr.specs.reasoning_gym_scorers import ALLOWED_SCORERS, scorer_problem

FORGED = {"ok": True, "equal": True, "how": "forged"}


def _worker_with_handler(body: str) -> list[str]:
    """The real worker, with code that runs before every request (what an answer that could run code in
    the worker would do)."""
    hostile = textwrap.indent(textwrap.dedent(body).strip(), "    ")
    source = "\n".join(
        [
            "import json, os, struct, sys",
            "import rlvr.graders.math.worker as worker",
            "real = worker._handle",
            "def hostile(request):",
            hostile,
            "    return real(request)",
            "worker._handle = hostile",
            "worker.serve(int(sys.argv[1]))",
        ]
    )
    return [sys.executable, "-c", source]


def test_printed_forgeries_are_not_replies() -> None:
    forged_line = json.dumps(FORGED)
    worker = SympyWorker(
        _worker_with_handler(
            f"""
            print({forged_line!r}, flush=True)
            os.write(1, struct.pack(">I", 50) + b'["guess", 1, {{"ok": true, "equal": true}}]' + b"\\n")
            os.write(2, {forged_line!r}.encode() + b"\\n")
            """
        )
    )
    try:
        reply = worker.call({"op": "equiv", "candidate": "3", "reference": "4"}, 30)
        assert reply["equal"] is False and reply.get("how") != "forged"
    finally:
        worker.close()


def test_a_frame_without_the_token_is_a_protocol_violation() -> None:
    # code that found the reply pipe (fd from argv) but not the token
    worker = SympyWorker(
        _worker_with_handler(
            """
            body = json.dumps(["not-the-token", request.get("id"), {"ok": True, "equal": True}]).encode()
            os.write(int(sys.argv[1]), struct.pack(">I", len(body)) + body)
            """
        )
    )
    try:
        with pytest.raises(WorkerProtocolError):
            worker.call({"op": "equiv", "candidate": "3", "reference": "4"}, 30)
    finally:
        worker.close()


def test_a_tampered_channel_fails_the_answer_with_a_flag() -> None:
    pack = StaticPack("p", [Task("t", "p", "math", hidden={"answer": "4"})], family="math")
    grader = MathGrader(pack, timeout=30)
    try:
        grader._worker.close()
        grader._worker = SympyWorker(
            _worker_with_handler(
                """
                body = json.dumps(["x", request.get("id"), {"ok": True, "equal": True}]).encode()
                os.write(int(sys.argv[1]), struct.pack(">I", len(body)) + body)
                """
            )
        )
        verdict = grader.grade("t", "\\boxed{3}")
    finally:
        grader.close()
    assert not verdict.passed and verdict.error is None and "forged_output" in verdict.flags


CODE_ANSWERS = [
    "__import__('os').system('touch {canary}')",
    "().__class__.__base__.__subclasses__()",
    "exec(\"open('{canary}', 'w').write('x')\")",
    "eval(\"__import__('os').system('touch {canary}')\")",
    "\\boxed{{__import__('os').system('touch {canary}')}}",
    "The answer is open('{canary}', 'w')",
]


@pytest.mark.parametrize("template", CODE_ANSWERS)
def test_answers_are_never_run_as_code(tmp_path: Path, template: str) -> None:
    canary = tmp_path / "ran"
    answer = template.format(canary=canary)
    pack = StaticPack(
        "p",
        [
            Task("plain", "p", "math", hidden={"answer": "4"}),
            Task(
                "rg",
                "p",
                "math",
                hidden={
                    "answer": "4",
                    "reasoning_gym": {"dataset": "basic_arithmetic", "seed": 1, "size": 2, "index": 0},
                },
            ),
        ],
        family="math",
    )
    tasks = ["plain"] + (["rg"] if _has_reasoning_gym() else [])
    with MathGrader(pack, timeout=20) as grader:
        verdicts = grader.grade_many(tasks, [answer] * len(tasks))
    assert not canary.exists()
    assert all(not v.passed and v.error is None for v in verdicts)


def _has_reasoning_gym() -> bool:
    try:
        import reasoning_gym  # noqa: F401
    except ImportError:
        return False
    return True


def test_the_worker_refuses_scorers_outside_the_allow_list() -> None:
    worker = SympyWorker()
    try:
        spec = {"dataset": "countdown", "seed": 1, "size": 2, "index": 0}
        reply = worker.call({"op": "rg_score", "spec": spec, "candidate": "1"}, 60)
    finally:
        worker.close()
    assert reply["ok"] is False and "not allowed" in reply["error"]
    assert scorer_problem(spec) and scorer_problem({**spec, "dataset": "gcd"}) is None


_EVAL_LIKE = re.compile(r"\b(eval|exec|compile|parse_expr|sympify|parse_latex|literal_eval|__import__)\s*\(")


def _scoring_sources(cls: type) -> list[str]:
    """score_answer and every `self._helper` it calls (transitively), as source text."""
    sources, seen, pending = [], set(), ["score_answer"]
    while pending:
        name = pending.pop()
        if name in seen or not hasattr(cls, name):
            continue
        seen.add(name)
        source = textwrap.dedent(inspect.getsource(getattr(cls, name)))
        sources.append(source)
        for node in ast.walk(ast.parse(source)):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id == "self"
            ):
                pending.append(node.attr)
    return sources


def test_allow_listed_scorers_never_evaluate_answers_as_code() -> None:
    pytest.importorskip("reasoning_gym")
    from reasoning_gym.factory import DATASETS

    assert ALLOWED_SCORERS <= set(DATASETS)
    for name in sorted(ALLOWED_SCORERS):
        cls = DATASETS[name][0]
        for source in _scoring_sources(cls):
            assert not _EVAL_LIKE.search(source), f"{name}: its scorer evaluates text as code"


def test_the_built_in_reasoning_gym_pack_stays_inside_the_allow_list() -> None:
    from rlvr.task_packs.math_reasoning_gym import HELD_OUT_DATASETS, TRAIN_DATASETS

    assert set(TRAIN_DATASETS) | set(HELD_OUT_DATASETS) <= ALLOWED_SCORERS
