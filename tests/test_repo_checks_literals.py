"""Wrong fixes that differ only next to a literal the reference compares exactly, or in an object a
factory shares (issue 31), on a small repository of our own graded by the real repo grader; and a
right fix whose exception message is its own where the reference's message is not shown.

Wrong fixes (each passed on the grader before these rules): a script verb matched in any case and
a singular kept as an alias of it; a CLI command matched by its first letter and a singular kept as
an alias; a literal path matched by prefix and by containment; a call's literal argument matched
by prefix; a prefix filter over a mapping's keys
written as containment; a header's brackets stripped as a character set; a placeholder's name
lower-cased in one part of a pattern; a factory handing out one shared object. Right fixes written
otherwise (another message for an error nothing visible words) still pass.
"""

from __future__ import annotations

import re

import pytest

from rlvr.graders.repo.grader import RepoGrader
from tests.repo_fixtures import (
    assert_fails,
    assert_full_reward,
    edited_reference,
    module_grader,
    one_module_task,
)

SPAN_BODY = """    if end <= start:
        raise ValueError(f"a span ends after its first day ({start} to {end})")
    return end - start
"""
REFERENCE = f'''"""A desk of tickets: a script of commands, a command line, paths, settings, sections, templates."""


class Desk:
    def __init__(self) -> None:
        self.tickets: list[str] = []

    def open(self, title: str) -> int:
        """One more ticket; returns how many there are."""
        self.tickets.append(title)
        return len(self.tickets)

    def count(self) -> int:
        """How many tickets there are."""
        return len(self.tickets)


def new_desk() -> Desk:
    """An empty desk."""
    return Desk()


def run_script(commands: list[list[object]]) -> list[object]:
    """["open", title], ["tickets"] and ["count"] on a fresh desk, in order; another verb is a ValueError."""
    desk = Desk()
    results: list[object] = []
    for verb, *args in commands:
        if verb == "open":
            results.append(desk.open(str(args[0])))
        elif verb == "tickets":
            results.append(list(desk.tickets))
        elif verb == "count":
            results.append(len(desk.tickets))
        else:
            raise ValueError(f"unknown verb {{verb}}")
    return results


def span(start: int, end: int) -> int:
    """Days from `start` up to `end`; a span lasts at least one day."""
{SPAN_BODY}

def main(argv: list[str]) -> int:
    """`desk parts A B` prints the days from A to B (exit 0; `error: ...` and exit 1 for a bad span);
    anything else prints the usage line and exits 2."""
    if len(argv) == 3 and argv[0] == "parts":
        try:
            print(span(int(argv[1]), int(argv[2])))
        except ValueError as exc:
            print(f"error: {{exc}}")
            return 1
        return 0
    print("usage: desk parts START END")
    return 2


def page(path: str) -> str:
    """What a path shows: "/about" the about page, "/tickets/N" ticket N, anything else "missing"."""
    parts = [p for p in path.split("/") if p]
    if parts == ["about"]:
        return "about"
    if len(parts) == 2 and parts[0] == "tickets" and parts[1].isdigit():
        return f"ticket {{int(parts[1])}}"
    return "missing"


def show(argv: list[str]) -> int:
    """`show PATH` prints what the path shows; exit 0 unless it is missing (1)."""
    shown = page(argv[0]) if len(argv) == 1 else "missing"
    print(shown)
    return 1 if shown == "missing" else 0


KINDS = {{"bug": 1, "task": 2}}


def kind_of(label: str) -> int:
    """The number of a kind of ticket: 1 for "bug", 2 for "task", 0 for any other label."""
    return KINDS.get(label, 0)


def settings(env: dict[str, str]) -> dict[str, str]:
    """The variables whose names start with DESK_, without it, lower-cased."""
    return {{k[len("DESK_") :].lower(): v for k, v in env.items() if k.startswith("DESK_")}}


def sections(text: str) -> list[str]:
    """The names of the `[name]` header lines of a text, in order (one bracket cut from each end)."""
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("[") and line.endswith("]"):
            out.append(line[1:-1].strip())
    return out


class Template:
    def __init__(self, text: str) -> None:
        """A template of "/"-separated words and `<name>` placeholders."""
        self.parts = [p for p in text.split("/") if p]

    def read(self, path: str) -> dict[str, str] | None:
        """Each placeholder's name (as written) and the word in its place, or None if `path` does not fit."""
        words = [p for p in path.split("/") if p]
        if len(words) != len(self.parts):
            return None
        found: dict[str, str] = {{}}
        for part, word in zip(self.parts, words):
            if part.startswith("<") and part.endswith(">"):
                found[part[1:-1]] = word
            elif part != word:
                return None
        return found
'''

STUB = '    raise NotImplementedError("not implemented yet")\n'
BASE = REFERENCE.replace(SPAN_BODY, STUB)
SCENARIOS = [
    {"kind": "call", "target": "desk.core:run_script", "args": [[["open", "a"], ["open", "b"], ["tickets"]]]},
    {
        "kind": "call",
        "target": "desk.core:run_script",
        "args": [[["count"], ["open", "c"], ["count"], ["frob"]]],
    },
    {"kind": "cli", "target": "desk.core:main", "argv": ["parts", "2", "5"]},
    {"kind": "cli", "target": "desk.core:main", "argv": ["parts", "5", "5"]},
    {"kind": "cli", "target": "desk.core:main", "argv": ["frob", "2", "5"]},
    {"kind": "call", "target": "desk.core:span", "args": [1, 4]},
    {"kind": "cli", "target": "desk.core:show", "argv": ["/about"]},
    {"kind": "cli", "target": "desk.core:show", "argv": ["/tickets/7"]},
    {"kind": "call", "target": "desk.core:page", "args": ["/about"]},
    {"kind": "call", "target": "desk.core:page", "args": ["/tickets/7"]},
    {"kind": "call", "target": "desk.core:page", "args": ["/nope"]},
    {"kind": "call", "target": "desk.core:kind_of", "args": ["bug"]},
    {"kind": "call", "target": "desk.core:kind_of", "args": ["misc"]},
    {"kind": "call", "target": "desk.core:settings", "args": [{"DESK_MODE": "fast", "HOME": "/root"}]},
    {"kind": "call", "target": "desk.core:sections", "args": ["[main]\nmode = fast\n[extra]\n"]},
    {
        "kind": "object",
        "target": "desk.core:Template",
        "args": ["/tickets/<number>"],
        "steps": [["read", ["/tickets/7"]], ["read", ["/other/7"]]],
    },
    {"kind": "object", "target": "desk.core:new_desk", "args": [], "steps": [["count", []]]},
]
TASK = one_module_task(
    "desk-literals",
    "Feature request: `desk.core.span` raises NotImplementedError. Implement it as its docstring says.",
    "desk/core.py",
    BASE,
    REFERENCE,
    SCENARIOS,
)

grader = module_grader(TASK, "desk")


def _with(*pairs: tuple[str, str]) -> dict[str, str]:
    return edited_reference(TASK, "desk/core.py", *pairs)


WRONG = {
    # the verb matched in any case
    "script verb in any case": _with(('elif verb == "tickets":', 'elif str(verb).lower() == "tickets":')),
    # a singular kept as an alias of the verb
    "script verb alias": _with(('elif verb == "tickets":', 'elif verb in ("tickets", "ticket"):')),
    # the command matched by its first letter
    "command by prefix": _with(('argv[0] == "parts"', 'argv[0].startswith("p")')),
    # a singular kept as an alias of the command
    "command alias": _with(('argv[0] == "parts"', 'argv[0] in ("parts", "part")')),
    # a literal path matched by prefix, and by containment (through a command line)
    "path by prefix": _with(
        ('if parts == ["about"]:', 'if len(parts) == 1 and parts[0].startswith("about"):')
    ),
    "path by containment": _with(('if parts == ["about"]:', 'if len(parts) == 1 and "about" in parts[0]:')),
    # a call's literal argument matched by prefix
    "call literal by prefix": _with(
        (
            "return KINDS.get(label, 0)",
            "return next((v for k, v in KINDS.items() if str(label).startswith(k)), 0)",
        )
    ),
    # a prefix filter written as containment
    "prefix as containment": _with(('if k.startswith("DESK_")}', 'if "DESK_" in k}')),
    # every bracket character stripped, not one from each end
    "strip eats brackets": _with(("out.append(line[1:-1].strip())", 'out.append(line.strip("[]").strip())')),
    # a placeholder's name lower-cased
    "name lower-cased": _with(("found[part[1:-1]] = word", "found[part[1:-1].lower()] = word")),
    # one desk for every caller
    "shared instance": _with(
        (
            'def new_desk() -> Desk:\n    """An empty desk."""\n    return Desk()\n',
            'SHARED = Desk()\n\n\ndef new_desk() -> Desk:\n    """An empty desk."""\n    return SHARED\n',
        )
    ),
}

RIGHT = {
    # the span by range, its own message for an empty one (the reference's is shown nowhere)
    "own message": _with(
        (
            SPAN_BODY,
            "    days = len(range(start, end))\n"
            "    if days < 1:\n"
            '        raise ValueError("a span lasts at least one day")\n'
            "    return days\n",
        )
    ),
}


@pytest.mark.parametrize("name", sorted(WRONG))
def test_wrong_fix_fails(grader: RepoGrader, name: str) -> None:
    assert_fails(grader, TASK, WRONG[name], name)


@pytest.mark.parametrize("name", sorted(RIGHT))
def test_right_fix_passes(grader: RepoGrader, name: str) -> None:
    assert_full_reward(grader, TASK, RIGHT[name])


def test_reference_passes(grader: RepoGrader) -> None:
    assert_full_reward(grader, TASK, TASK.hidden["reference"])


def test_a_visible_message_is_still_compared() -> None:
    # the same right fix where the base repository already shows the reference's message: the
    # message is part of the behaviour and another one differs
    from tests.repo_fixtures import one_task_grader

    shown = dict(TASK.hidden["base"])
    shown["desk/errors.md"] = "Errors read: a span ends after its first day (START to END).\n"
    task = type(TASK)(
        id="desk-literals-shown",
        prompt=TASK.prompt,
        family="repo",
        hidden={
            **TASK.hidden,
            "base": shown,
            "reference": {**TASK.hidden["reference"], "desk/errors.md": shown["desk/errors.md"]},
        },
    )
    right = {**RIGHT["own message"], "desk/errors.md": shown["desk/errors.md"]}
    with one_task_grader(task, "desk-shown") as built:
        assert_fails(built, task, right, "a visible message replaced")


def test_word_variants_cut_and_extend_literals_only() -> None:
    from rlvr.graders.repo.literal_variants import word_variants

    assert word_variants("stays") == ["stay", "staysx", "xstays"]
    assert word_variants("/v/list") == ["/v/lis", "/v/listx", "x/v/list", "/vx/list"]
    assert word_variants("42") == [] and word_variants("/a/7") == []  # numbers are not literals
    assert word_variants("--flag") == [] and word_variants("a") == [] and word_variants(" a ") == []


def test_keys_prefixes_brackets_and_one_word_case() -> None:
    from rlvr.graders.repo.literal_variants import nested_brackets, prefixed_keys, token_case_variants

    assert prefixed_keys({"A_B": 1, "C": 2}) == [{"XA_B": 1, "XC": 2}]
    assert prefixed_keys({}) == [] and prefixed_keys({1: 2}) == [] and prefixed_keys([1]) == []
    assert nested_brackets("[a]\nk = 1\n [b c] \n") == ["[[a]]\nk = 1\n [[b c]] \n"]
    assert nested_brackets("[a]") == [] and nested_brackets("k = 1\nj = 2\n") == []
    assert token_case_variants("/x/<name>/<Rev:int>") == [  # words of two letters or more
        "/x/<NAME>/<Rev:int>",
        "/x/<name>/<rev:int>",
        "/x/<name>/<Rev:INT>",
    ]
    assert token_case_variants("word") == []


def test_invisible_messages_and_loosening() -> None:
    from rlvr.graders.repo.invisible_messages import invisible_messages, loosened

    base = {"p/a.py": 'raise ValueError("a shown message here")\n'}
    reference = {
        "p/__init__.py": "",
        "p/a.py": 'def f(a, b):\n    raise ValueError("a shown message here")\n'
        '    raise KeyError(f"never shown to anyone ({a} to {b})")\n    raise ValueError("short")\n',
    }
    found = invisible_messages(base, reference, "the issue text")
    assert found == [
        re.escape("never shown to anyone (") + ".*?" + re.escape(" to ") + ".*?" + re.escape(")")
    ]
    patterns = [re.compile(p) for p in found]
    want = {"stdout": "start\nerror: never shown to anyone (3 to 1)\n", "exit": 1}
    assert loosened(want, {"stdout": "start\nerror: its own words\n", "exit": 1}, patterns) == want
    other_line = {"stdout": "begin\nerror: its own words\n", "exit": 1}
    assert loosened(want, other_line, patterns) == other_line  # another line still differs
    empty = {"stdout": "start\nerror: \n", "exit": 1}
    assert loosened(want, empty, patterns) == empty  # a message has to be there
    assert invisible_messages(base, reference, "never shown to anyone ( to )") == []  # the issue shows it
