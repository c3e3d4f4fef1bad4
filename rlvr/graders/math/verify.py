"""`rlvr.verify(gold, answer, **settings)`: grade one math answer against a reference in one line.

    >>> import rlvr
    >>> rlvr.verify("\\\\frac{1}{2}", "0.5").passed
    True

`answer` is a whole completion or just the answer (boxes, `Answer:` lines and prose are searched as in
`rlvr/Math-v0`). `gold` is the reference: a bare answer, `$...$`, or a solution text whose last `\\boxed{}`
(or stated answer) is the reference. Keyword settings are those of rlvr/specs/math_settings.py
(`precision`, `significant_figures`, `tolerance`, `strict`, `relation`, `boxes`, `relation_as_set`), plus
`timeout` (seconds for the sympy worker). The verdict's feedback names the extracted answer and the rule
that decided; `flags` say how the answer was found and which limit an oversized answer hit.
"""

from __future__ import annotations

import atexit
import threading
from typing import Any

from rlvr.core.pack import StaticPack
from rlvr.core.types import Task, Verdict
from rlvr.graders.math.extract import all_boxes, answer_from_boxes, is_plain_answer
from rlvr.graders.math.grader import AnswerFault, MathGrader
from rlvr.specs.math_settings import MathSettings

_LOCK = threading.Lock()
_GRADERS: dict[float | None, MathGrader] = {}


def _grader(timeout: float | None) -> MathGrader:
    with _LOCK:
        grader = _GRADERS.get(timeout)
        if grader is None:
            grader = MathGrader(StaticPack("rlvr.verify", [], family="math"), timeout=timeout)
            _GRADERS[timeout] = grader
        return grader


def _close_all() -> None:
    for grader in list(_GRADERS.values()):
        grader.close()


atexit.register(_close_all)


def reference_answer(gold: str, grader: MathGrader) -> str:
    """The reference a gold text states: its last box, the text itself when it is only an answer, or the
    answer its prose states (found in the worker)."""
    boxes = all_boxes(gold)
    if boxes:
        found = answer_from_boxes(gold, boxes, "all", reference=True).answer
        return found if found is not None else boxes[-1].content
    if is_plain_answer(gold):
        return gold
    try:
        found = grader.search_answer(gold)
    except AnswerFault:
        found = None
    return found or gold


def verify(gold: str | int | float, answer: str, *, timeout: float | None = None, **settings: Any) -> Verdict:
    """Grade `answer` against `gold` (see the module docstring); unknown settings raise MathSettingsError."""
    checked = MathSettings.from_mapping(settings, where="rlvr.verify")
    grader = _grader(timeout)
    reference = reference_answer(str(gold), grader)
    task = Task("verify", "", "math", hidden={"answer": reference, **checked.to_json()})
    return grader.grade_task(task, answer)
