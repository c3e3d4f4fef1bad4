"""Inputs at the edges of a function's domain that only a docstring or an exception class states (issue 31).

Derived in the trusted process from trusted data only (the task's scenarios and base state):

- **Numeric boundaries**: an integer argument at 0, its negation, one less and one more, a negative,
  and one past every limit constant the base code names (`MAX_NIGHTS = 30`, `limit: int = 5`):
  a check the reference makes at a boundary ("positive amounts", "at most the limit") shows.
- **Number-like strings**: a string that is, or holds as a path segment or token, a run of digits,
  again with that run signed (`-3`, `+3`), split by an underscore (`1_0`) and padded with spaces, so
  a converter built on `int()` differs from one that accepts digit runs only. Not in non-ASCII
  digits: `int()`, `str.isdigit` and regex `\\d` accept them and `[0-9]` does not, and no docstring says
  which a digit run means (a correct `[0-9]+` fix failed against an `isdigit` reference).
- **Whitespace inside structured text**: a multi-line string (a config file, CSV, a template) again
  with spaces inside brackets (`[ server ]`), around `=` and `:` separators and before commas on
  every line, so a parser that no longer strips what the reference strips differs.
- **Unknown references**: a collection whose entries name other entries (a job's dependencies, a
  route's parent) again with one reference to an entry that does not exist.
- **Lines shifted**: a multi-line text again with a blank line, and with a comment line the task's
  own inputs use, before its first line, so an error that reports a line number (`ConfigError.line`)
  counting only significant lines differs (compared where the reference raises on both texts).
- **Arguments swapped**: an object step's two first distinct string arguments swapped (a transfer's
  source and target), also with its numbers at 1, so a rule that holds for one side only (an
  overdraft limit of the source) is reached by the calls the scenario already makes.
- **Coincident ranges**: a call's range (two adjacent numbers in increasing order, a start and its
  end) again with its width kept but ending exactly where another range the call holds starts, or
  starting where it ends (another pair of its arguments, or a pair inside a record it passes: the
  stays a query is asked about), so `<` written as `<=` at the boundary differs.
"""

from __future__ import annotations

import ast
import re
from typing import Any

UNKNOWN_ENTRY = "rlvr-missing-entry"
LIMIT_NAME = re.compile(r"limit|max|min|overdraft|cap|threshold|bound|ceiling|floor|most|least", re.I)
DIGITS = re.compile(r"(?<![\w.])\d+(?![\w.])")
MAX_LIMITS = 4  # limit constants per task
MAX_STRUCTURED = 3  # structured-text variants per argument
MAX_REFERENCES = 3  # unknown-reference variants per argument


def limit_constants(base: dict[str, str]) -> list[int]:
    """Integer values the base code gives a name that reads as a limit (a module or class constant,
    or a parameter default): `MAX_NIGHTS = 30`, `overdraft: int = 0`, `def take(n, limit=5)`."""
    found: list[int] = []
    for path, source in sorted(base.items()):
        if not path.endswith(".py"):
            continue
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        for node in ast.walk(tree):
            pairs: list[tuple[str, ast.expr | None]] = []
            if isinstance(node, ast.Assign):
                pairs += [(t.id, node.value) for t in node.targets if isinstance(t, ast.Name)]
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                pairs.append((node.target.id, node.value))
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                positional = node.args.args
                defaults = node.args.defaults
                pairs += [
                    (a.arg, d)
                    for a, d in zip(positional[len(positional) - len(defaults) :], defaults, strict=True)
                ]
            for name, value in pairs:
                if (
                    LIMIT_NAME.search(name)
                    and isinstance(value, ast.Constant)
                    and type(value.value) is int
                    and value.value not in found
                ):
                    found.append(value.value)
    return found[:MAX_LIMITS]


def number_variants(value: int | float, limits: list[int]) -> list[int | float]:
    """0, -value, value - 1, value + 1, a negative, and one past each limit constant (as the value's type)."""
    kind = type(value)
    out: list[int | float] = [0, -value, value - 1, value + 1, -1]
    out += [kind(limit + 1) for limit in limits]
    unique: list[int | float] = []
    for item in out:
        if item != value and item not in unique:
            unique.append(item)
    return unique


def number_like_variants(value: str) -> list[str]:
    """`value` with its first digit run (a whole token or path segment) signed, split by an
    underscore and padded with spaces; [] when it holds no such run."""
    match = DIGITS.search(value)
    if match is None:
        return []
    run = match.group(0)
    split = f"{run[0]}_{run[1:]}" if len(run) > 1 else f"{run}_0"
    replacements = [f"-{run}", f"+{run}", split, f" {run} "]
    out = [value[: match.start()] + r + value[match.end() :] for r in replacements]
    return [v for v in dict.fromkeys(out) if v != value]


BRACKETED = re.compile(r"^(\s*)([\[(<{])\s*([^\]\n)>}]*?)\s*([\])>}])(\s*)$")
SEPARATOR = re.compile(r"\s*([=:])\s*")


def structured_text_variants(value: str) -> list[str]:
    """A multi-line string with spaces padded inside brackets, around the first `=`/`:` of each line
    and before commas (one variant each, only where it changes the text)."""
    if "\n" not in value.strip():
        return []
    lines = value.split("\n")

    def pad_brackets(line: str) -> str:
        match = BRACKETED.match(line)
        if match is None:
            return line
        lead, opening, inside, closing, tail = match.groups()
        return f"{lead}{opening}  {inside}  {closing}{tail}" if inside else line

    def pad_separator(line: str) -> str:
        return (
            SEPARATOR.sub(lambda m: f"  {m.group(1)}  ", line, count=1) if not BRACKETED.match(line) else line
        )

    def pad_commas(line: str) -> str:
        return re.sub(r"\s*,\s*", " ,  ", line)

    out = ["\n".join(step(line) for line in lines) for step in (pad_brackets, pad_separator, pad_commas)]
    return [v for v in dict.fromkeys(out) if v != value][:MAX_STRUCTURED]


def _entry_name(entry: Any) -> str | None:
    if isinstance(entry, list | tuple) and entry and isinstance(entry[0], str):
        return entry[0]
    if isinstance(entry, dict):
        for key in ("name", "id", "key"):
            if isinstance(entry.get(key), str):
                return entry[key]
    return None


def unknown_reference_variants(value: Any) -> list[Any]:
    """For a collection whose entries name other entries — a list of records or rows with a name
    (first item, or a name/id/key field) and a field or item that is or lists other entries' names,
    or a mapping from names to names — the collection with one such reference renamed to an entry
    that does not exist (one per entry, at most MAX_REFERENCES)."""
    out: list[Any] = []
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        names = set(value)
        for key, item in value.items():
            if isinstance(item, str) and item in names:
                out.append({**value, key: UNKNOWN_ENTRY})
            elif isinstance(item, list) and any(isinstance(x, str) and x in names for x in item):
                at = next(i for i, x in enumerate(item) if isinstance(x, str) and x in names)
                out.append({**value, key: [*item[:at], UNKNOWN_ENTRY, *item[at + 1 :]]})
            if len(out) >= MAX_REFERENCES:
                break
        return out
    if not isinstance(value, list):
        return out
    names = {name for entry in value if (name := _entry_name(entry)) is not None}
    if len(names) < 2:
        return out
    for position, entry in enumerate(value):
        fields = (
            list(enumerate(entry))
            if isinstance(entry, list | tuple)
            else list(entry.items())
            if isinstance(entry, dict)
            else []
        )
        own = _entry_name(entry)
        for field, item in fields:
            renamed: Any = None
            if isinstance(item, list) and any(isinstance(x, str) and x in names for x in item):
                at = next(i for i, x in enumerate(item) if isinstance(x, str) and x in names)
                renamed = [*item[:at], UNKNOWN_ENTRY, *item[at + 1 :]]
            elif isinstance(item, str) and item in names and item != own:  # ["b", "a"], {"parent": "a"}
                renamed = UNKNOWN_ENTRY
            if renamed is not None:
                if isinstance(entry, dict):
                    changed: Any = {**entry, field: renamed}
                else:
                    changed = [*entry[:field], renamed, *entry[field + 1 :]]  # pyright: ignore[reportOperatorIssue]
                out.append([*value[:position], changed, *value[position + 1 :]])
                break
        if len(out) >= MAX_REFERENCES:
            break
    return out


COMMENT_LINE = re.compile(r"^\s*(#|;|//|--)")
MAX_COMMENTS = 2  # distinct comment lines used per task


def comment_lines(texts: list[str]) -> list[str]:
    """Comment lines (`# ...`, `; ...`, `// ...`, `-- ...`) the task's own text inputs hold, one per marker."""
    found: dict[str, str] = {}
    for text in texts:
        for line in text.split("\n"):
            match = COMMENT_LINE.match(line)
            if match is not None and match.group(1) not in found:
                found[match.group(1)] = line.strip()
    return list(found.values())[:MAX_COMMENTS]


def line_shift_variants(value: str, comments: list[str]) -> list[str]:
    """A text of lines (it holds a newline) with a blank line, then each comment line, put before it."""
    if "\n" not in value:
        return []
    return [f"\n{value}", *(f"{comment}\n{value}" for comment in comments)]


def swapped_arguments(args: list[Any]) -> list[list[Any]]:
    """`args` with its first two distinct string arguments swapped, and that again with every
    integer at 1 (the smallest amount a rule on one side, such as a balance and its overdraft, admits);
    [] when there are not two distinct strings."""
    positions = [i for i, value in enumerate(args) if isinstance(value, str) and value]
    pair = next(((i, j) for i in positions for j in positions if i < j and args[i] != args[j]), None)
    if pair is None:
        return []
    first, second = pair
    swapped = list(args)
    swapped[first], swapped[second] = args[second], args[first]
    out = [swapped]
    units = [1 if type(value) is int and value != 1 else value for value in swapped]
    if units != swapped:
        out.append(units)
    return out


MAX_COINCIDENT = 4  # per call


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _ranges(value: Any, depth: int = 0) -> list[tuple[Any, Any]]:
    """(start, end) of every two adjacent increasing numbers inside lists and records of `value`."""
    if depth > 4:
        return []
    items = list(value.values()) if isinstance(value, dict) else value if isinstance(value, list) else []
    found = [(a, b) for a, b in zip(items, items[1:], strict=False) if _number(a) and _number(b) and a < b]
    for item in items:
        if isinstance(item, list | dict):
            found += _ranges(item, depth + 1)
    return found


def coincident_ranges(args: list[Any]) -> list[list[Any]]:
    """`args` with its first range (two adjacent increasing numbers) moved to end where each other
    range it holds starts, or to start where it ends, its width kept; at most MAX_COINCIDENT."""
    at = next(
        (
            i
            for i in range(len(args) - 1)
            if _number(args[i]) and _number(args[i + 1]) and args[i] < args[i + 1]
        ),
        None,
    )
    if at is None:
        return []
    width = args[at + 1] - args[at]
    others = _ranges([*args[:at], None, None, *args[at + 2 :]])
    out: list[list[Any]] = []
    for start, end in others:
        for low, high in ((start - width, start), (end, end + width)):
            changed = [*args[:at], low, high, *args[at + 2 :]]
            if changed != args and changed not in out:
                out.append(changed)
    return out[:MAX_COINCIDENT]
