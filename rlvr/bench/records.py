"""One benchmark sample as a plain JSON record: what was generated, how it was graded, and the
per-sample diagnostics the report aggregates (syntax error, hallucinated imports, timeout)."""

from __future__ import annotations

from typing import Any

from rlvr.bench.imports import hallucinated_imports
from rlvr.bench.policies import Generation
from rlvr.core.stored_text import store_text
from rlvr.core.types import Task, Verdict

# How a grading error reads when the grader itself ran out of time.
TIMEOUT_ERROR_MARKERS = ("timed out", "timeout")


def sample_key(pack: str | None, task_id: str, sample: int) -> tuple[str, str, int]:
    return (pack or "", task_id, sample)


def is_timeout(verdict: Verdict) -> bool:
    """The candidate ran out of time (the code grader's timeout fault), or grading timed out."""
    from rlvr.graders.code.verdict import CANDIDATE_FAULTS

    if "timeout" in verdict.flags or verdict.feedback.startswith(CANDIDATE_FAULTS["timeout"]):
        return True
    error = (verdict.error or "").lower()
    return any(marker in error for marker in TIMEOUT_ERROR_MARKERS)


def is_syntax_error(verdict: Verdict) -> bool:
    if "syntax" in verdict.gates:
        return True
    syntax = verdict.components.get("syntax")
    return syntax is not None and syntax.max > 0 and syntax.score < syntax.max


def graded_program(task: Task, completion: str) -> str:
    """The program the code grader runs for this completion (full program, fence or continuation)."""
    from rlvr.graders.code.extract import build_program

    entry_point = str(task.hidden.get("entry_point", ""))
    return build_program(task.prompt, completion, entry_point)


def base_record(
    pack: str | None, task: Task | None, task_id: str, sample: int, generation: Generation
) -> dict[str, Any]:
    record: dict[str, Any] = {
        "pack": pack,
        "task_id": task_id,
        "sample": sample,
        "difficulty": task.difficulty if task is not None else None,
        "completion": generation.text,
        "generation_error": generation.error,
        "prompt_tokens": generation.prompt_tokens,
        "completion_tokens": generation.completion_tokens,
        "latency_s": None if generation.latency_s is None else round(generation.latency_s, 6),
        "finish_reason": generation.finish_reason,
        "reward": 0.0,
        "passed": False,
        "components": {},
        "components_max": {},
        "gates": [],
        "error": None,
        "flags": [],
        "visible_passed": None,
        "timeout": False,
        "syntax_error": None,
        "hallucinated_imports": None,
        "grade_s": None,
        "receipt": None,
    }
    store_text(record, "completion", generation.text)
    return record


def failed_record(
    pack: str | None, task: Task | None, task_id: str, sample: int, generation: Generation, error: str
) -> dict[str, Any]:
    """A sample that could not be graded (generation failed, or the grader itself broke)."""
    record = base_record(pack, task, task_id, sample, generation)
    record["error"] = error
    return record


def graded_record(
    pack: str, task: Task, sample: int, generation: Generation, verdict: Verdict, family: str
) -> dict[str, Any]:
    record = base_record(pack, task, task.id, sample, generation)
    verdict_json = verdict.to_json()
    for name in (
        "reward",
        "passed",
        "components",
        "components_max",
        "gates",
        "error",
        "flags",
        "visible_passed",
        "receipt",
    ):
        record[name] = verdict_json[name]
    record["timeout"] = is_timeout(verdict)
    if family == "code" and generation.text is not None:
        record["syntax_error"] = is_syntax_error(verdict)
        if not record["syntax_error"]:
            try:
                record["hallucinated_imports"] = hallucinated_imports(graded_program(task, generation.text))
            except Exception as exc:  # analysis is a diagnostic: report it, never lose the sample
                record["flags"] = [*record["flags"], f"import analysis failed: {type(exc).__name__}"]
    return record
