"""The classes of wrong fix the second outside judge saw pass (issue 31), on a small repository of our
own graded by the real repo grader: each candidate below passed before the derived checks covered it.

- the old name of a renamed method kept reachable (class attribute alias, wrapper, class
  `__getattr__`) or a renamed function re-exported from the package `__init__`;
- case or whitespace normalisation added to an object's methods or to a CLI's words;
- `except Exception` turning a malformed script command the reference rejects into a message;
- an entry point keeping module-level state between calls where the reference starts fresh.
"""

from __future__ import annotations

import pytest

from rlvr.core.types import Task
from rlvr.graders.repo.checks import derived_checks, removed_names
from rlvr.graders.repo.grader import RepoGrader
from tests.repo_fixtures import assert_fails, assert_full_reward, module_grader, repo_task

REFERENCE = '''"""A kiosk menu."""

DEFAULTS = {"Tea": 120, "Cake": 300}


class Menu:
    def __init__(self) -> None:
        self.prices: dict[str, int] = {}

    def add(self, name: str, cents: int) -> int:
        self.prices[name] = cents
        return len(self.prices)

    def find(self, name: str) -> int | None:
        return self.prices.get(name)


def price(name: str) -> int | None:
    return DEFAULTS.get(name)


def run(script: list[list[object]]) -> list[str]:
    """Run commands on a fresh menu; a command missing an argument raises IndexError."""
    menu = Menu()
    out: list[str] = []
    for command in script:
        if command[0] == "add":
            out.append(str(menu.add(str(command[1]), int(str(command[2])))))
        elif command[0] == "find":
            out.append(str(menu.find(str(command[1]))))
        else:
            out.append("unknown")
    return out


def main(argv: list[str]) -> int:
    print(price(argv[0]) if argv else "usage: kiosk NAME")
    return 0
'''
BASE = (
    REFERENCE.replace("def find(", "def lookup(")
    .replace("def price(", "def lookup_price(")
    .replace("menu.find(", "menu.lookup(")
    .replace("print(price(", "print(lookup_price(")
)
SCENARIOS = [
    {
        "kind": "object",
        "target": "kiosk.core:Menu",
        "args": [],
        "steps": [["add", ["Tea", 120]], ["find", ["Tea"]]],
    },
    {"kind": "call", "target": "kiosk.core:price", "args": ["Cake"]},
    {"kind": "call", "target": "kiosk.core:run", "args": [[["add", "Tea", 120], ["find", "Tea"]]]},
    {"kind": "cli", "target": "kiosk.core:main", "argv": ["Tea"]},
]


def _task() -> Task:
    tests = "from kiosk.core import DEFAULTS\n\n\ndef test_defaults() -> None:\n    assert DEFAULTS['Tea'] == 120\n"
    states = {
        name: {"kiosk/__init__.py": "", "kiosk/core.py": text, "tests/test_core.py": tests}
        for name, text in (("base", BASE), ("reference", REFERENCE))
    }
    return repo_task(
        "kiosk-rename",
        "Rename Menu.lookup to Menu.find and lookup_price to price. Keep no alias and no "
        "compatibility shim: the old names must be gone. Names are case-sensitive.",
        states,
        SCENARIOS,
    )


TASK = _task()


grader = module_grader(TASK, "kiosk")


def _with(old: str, new: str, init: str = "") -> dict[str, str]:
    assert old in REFERENCE
    return {
        **TASK.hidden["reference"],
        "kiosk/core.py": REFERENCE.replace(old, new),
        "kiosk/__init__.py": init,
    }


FIND = "    def find(self, name: str) -> int | None:\n        return self.prices.get(name)\n"
WRONG = {
    "class attribute alias": _with(FIND, FIND + "\n    lookup = find\n"),
    "wrapper method": _with(
        FIND, FIND + "\n    def lookup(self, name: str) -> int | None:\n        return self.find(name)\n"
    ),
    "class __getattr__": _with(
        FIND,
        FIND + "\n    def __getattr__(self, name: str) -> object:\n"
        "        if name == 'lookup':\n            return self.find\n        raise AttributeError(name)\n",
    ),
    "package re-export": _with("x", "x", init="from kiosk.core import price as lookup_price\n"),
    "stripped CLI word": _with("print(price(argv[0])", "print(price(argv[0].strip())"),
}
# the case-folded menu looks names up folded too (a consistent, plausible, wrong normalisation)
WRONG["case-folded keys"] = {
    **TASK.hidden["reference"],
    "kiosk/core.py": REFERENCE.replace(
        "self.prices[name] = cents", "self.prices[name.lower()] = cents"
    ).replace("return self.prices.get(name)", "return self.prices.get(name.lower())"),
}
WRONG["broad except"] = {
    **TASK.hidden["reference"],
    "kiosk/core.py": REFERENCE.replace(
        "    for command in script:\n        if command[0]",
        "    for command in script:\n        try:\n            out += run_one(menu, command)\n"
        "        except Exception as exc:\n            out.append(f'error: {type(exc).__name__}')\n"
        "    return out\n\n\ndef run_one(menu: Menu, command: list[object]) -> list[str]:\n"
        "    out: list[str] = []\n    if True:\n        if command[0]",
    ),
}
WRONG["module-level state"] = {
    **TASK.hidden["reference"],
    "kiosk/core.py": REFERENCE.replace("    menu = Menu()\n    out", "    menu = MENU\n    out").replace(
        "def run(", "MENU = Menu()\n\n\ndef run("
    ),
}


def test_removed_class_members_and_package_paths_are_api_surface_targets() -> None:
    targets = removed_names(TASK.hidden["base"], TASK.hidden["reference"])
    assert {"kiosk.core:lookup_price", "kiosk:lookup_price", "kiosk.core:Menu.lookup"} <= set(targets)


def test_derived_checks_vary_words_scripts_and_repeat_calls() -> None:
    derived = derived_checks(SCENARIOS, TASK.hidden["base"], TASK.hidden["reference"])
    argvs = [c["argv"] for c in derived if c["kind"] == "cli"]
    assert ["TEA"] in argvs and ["  Tea  "] in argvs
    steps = [c["steps"] for c in derived if c["kind"] == "object"]
    assert [["add", ["TEA", 120]], ["find", ["Tea"]]] in steps
    scripts = [c["args"] for c in derived if c["target"] == "kiosk.core:run"]
    assert [[["find"]]] in scripts
    assert any(c.get("repeat") == 2 and c["target"] == "kiosk.core:run" for c in derived)


def test_reference_passes_and_noop_scores_zero(grader: RepoGrader) -> None:
    assert grader.grade_state(TASK, TASK.hidden["reference"]).reward == 1.0
    assert grader.grade_state(TASK, TASK.hidden["base"]).reward == 0.0


def test_an_unusual_but_correct_fix_still_passes(grader: RepoGrader) -> None:
    # dict.get spelled out, a docstring added: same behaviour as the reference everywhere
    state = _with(
        "        return self.prices.get(name)\n",
        '        """The price of `name`, None if unknown."""\n'
        "        return self.prices[name] if name in self.prices else None\n",
    )
    assert_full_reward(grader, TASK, state)


@pytest.mark.parametrize("name", sorted(WRONG))
def test_the_judges_classes_of_wrong_fix_fail(grader: RepoGrader, name: str) -> None:
    assert_fails(grader, TASK, WRONG[name], name)
