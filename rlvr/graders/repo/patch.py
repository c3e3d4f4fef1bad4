"""Patches: unified diffs (as `git diff` / `diff -u` print them) and whole-file blocks, applied to an
in-memory repository. Parsing is plain line scanning (anchored regexes on single lines only).

Intake is as forgiving as `git apply --recount` and `patch -F2` are: a hunk's counts are ignored (its
body runs to the next header or the first non-diff line), a bare `@@` is placed by its context alone,
context is found at the stated line or the nearest offset, then with trailing whitespace ignored, then
with up to two context lines dropped from either end. A hunk that still does not apply is refused with
which hunk, and the first line of it the file does not have."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from rlvr.graders.repo.workspace import Workspace, WorkspaceError, check_path

HUNK_HEADER = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
BARE_HUNK = re.compile(r"^@@(?:\s.*)?$")  # `@@`, `@@ ... @@`, `@@ def f():` - no usable line numbers
FENCE = re.compile(r"^```")
FILE_BLOCK = re.compile(r"^```[ \t]*(?:[\w+-]+[ \t]+)?(?:(?:path|file|filename)=)?([\w./-]+\.\w+)[ \t]*$")
FENCE_OPEN = re.compile(r"^```[ \t]*([\w+-]*)[ \t]*$")
# a path named on its own line before a fence: `pkg/mod.py`, **pkg/mod.py**, pkg/mod.py:, File: pkg/mod.py
PATH_LINE = re.compile(
    r"^(?:#+\s*)?(?:[-*]\s+)?(?:(?:file|path|filename)\s*:\s*)?[*`'\"]*([\w.-]+(?:/[\w.-]+)*\.\w+)[*`'\"]*:?\s*$",
    re.IGNORECASE,
)
# a path as the block's first comment line: `# pkg/mod.py`, `# file: pkg/mod.py`
PATH_COMMENT = re.compile(
    r"^#\s*(?:(?:file|path|filename)\s*:\s*)?([\w.-]+(?:/[\w.-]+)+\.py|[\w.-]+\.py)\s*$", re.I
)
MAX_PATCH_CHARS = 1_000_000
MAX_FUZZ = 2  # context lines `patch -F2` may drop from either end of a hunk


class PatchError(ValueError):
    """A patch that does not parse or does not apply; the message says where and why."""


@dataclass
class FilePatch:
    old_path: str | None
    new_path: str | None
    # (stated old start line, or None for a bare `@@`; body lines tagged " ", "-", "+")
    hunks: list[tuple[int | None, list[str]]] = field(default_factory=list)


def _strip_prefix(raw: str) -> str | None:
    name = raw.split("\t", 1)[0].strip()
    if name == "/dev/null":
        return None
    if " " in name and re.search(r"\s\d{4}-\d\d-\d\d", name):  # `diff -u` timestamps after a space
        name = name.split(" ", 1)[0]
    if name.startswith(("a/", "b/")):
        name = name[2:]
    return check_path(name)


def _is_file_header(lines: list[str], index: int) -> bool:
    return lines[index].startswith("--- ") and index + 1 < len(lines) and lines[index + 1].startswith("+++ ")


def _hunk_body(lines: list[str], index: int) -> tuple[list[str], int]:
    """The hunk starting at lines[index], read as `git apply --recount` does: up to the next hunk or
    file header or the first line that is not a diff line, whatever the header's counts said."""
    body: list[str] = []
    while index < len(lines):
        line = lines[index]
        if line.startswith("@@") or _is_file_header(lines, index) or line.startswith("diff --git "):
            break
        tag = line[:1]
        if line.startswith("\\"):  # "\ No newline at end of file"
            index += 1
            continue
        if tag == "":  # a blank context line whose leading space an editor dropped
            body.append(" ")
        elif tag in (" ", "-", "+"):
            body.append(line)
        else:
            break
        index += 1
    while body and body[-1] == " ":  # blank lines after a hunk are not context
        body.pop()
    return body, index


def parse_unified_diff(text: str) -> list[FilePatch]:
    if len(text) > MAX_PATCH_CHARS:
        raise PatchError(f"patch longer than {MAX_PATCH_CHARS} characters")
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    patches: list[FilePatch] = []
    index = 0
    while index < len(lines):
        if not _is_file_header(lines, index):
            index += 1
            continue
        try:
            current = FilePatch(_strip_prefix(lines[index][4:]), _strip_prefix(lines[index + 1][4:]))
        except WorkspaceError as exc:
            raise PatchError(f"patch line {index + 1}: {exc}") from None
        if current.old_path is None and current.new_path is None:
            raise PatchError(f"patch line {index + 1}: both sides are /dev/null")
        patches.append(current)
        index += 2
        while index < len(lines):
            header = lines[index]
            match = HUNK_HEADER.match(header)
            if match is None and not BARE_HUNK.match(header):
                break
            start = int(match.group(1)) if match else None
            body, index = _hunk_body(lines, index + 1)
            if not body:
                raise PatchError(
                    f"patch line {index}: hunk `{header[:40]}` of {current.new_path or current.old_path} is empty"
                )
            current.hunks.append((start, body))
    if not patches:
        raise PatchError("no file headers (--- a/path, +++ b/path) found: not a unified diff")
    return patches


def _same(a: str, b: str, loose: bool) -> bool:
    return a == b or (loose and a.rstrip() == b.rstrip())


def _matches(lines: list[str], old: list[str], at: int, loose: bool) -> bool:
    return all(_same(lines[at + k], old[k], loose) for k in range(len(old)))


def _locate(lines: list[str], old: list[str], expected: int, loose: bool = False) -> int | None:
    """Where `old` occurs in `lines`, nearest to `expected` first (as `patch` searches)."""
    if not old:
        return min(max(expected, 0), len(lines))
    last = len(lines) - len(old)
    if last < 0:
        return None
    expected = min(max(expected, 0), last)
    for distance in range(last + 1):
        for candidate in (expected - distance, expected + distance):
            if 0 <= candidate <= last and _matches(lines, old, candidate, loose):
                return candidate
        if expected - distance < 0 and expected + distance > last:
            break
    return None


def _why_not(
    path: str, number: int, header: str, lines: list[str], old: list[str], expected: int
) -> PatchError:
    """Which line of the hunk's old text is missing, and where the longest matching run of it was."""
    best_at, best_run = -1, 0
    for at in range(len(lines)):
        run = 0
        while run < len(old) and at + run < len(lines) and _same(lines[at + run], old[run], True):
            run += 1
        if run > best_run and run < len(old):
            best_at, best_run = at, run
    if best_run == 0:
        first = next((line for line in old if line.strip()), old[0] if old else "")
        why = f"its first line {first.strip()[:60]!r} is nowhere in the file"
    else:
        why = (
            f"its first {best_run} line(s) match at line {best_at + 1}, then the file has "
            f"{lines[best_at + best_run].strip()[:60]!r} where the hunk expects {old[best_run].strip()[:60]!r}"
            if best_at + best_run < len(lines)
            else f"its first {best_run} line(s) match at the end of the file, which ends before the rest"
        )
    return PatchError(f"{path}: hunk {number} ({header}) does not apply: {why}")


def _apply_hunks(path: str, original: str, hunks: list[tuple[int | None, list[str]]]) -> str:
    lines = original.splitlines()
    trailing_newline = original.endswith("\n") or not original
    offset = 0
    floor = 0  # hunks apply in order: a later one never lands before an earlier one
    for number, (start, body) in enumerate(hunks, start=1):
        header = f"@@ -{start} @@" if start is not None else "bare @@"
        old = [line[1:] for line in body if line[0] in " -"]
        if start is None:
            expected = floor
        else:
            expected = max(0, start - 1 + offset) if old else max(0, start + offset)
        placed = _place(lines, body, expected, floor)
        if placed is None:
            raise _why_not(path, number, header, lines, old, expected)
        position, old_len, new_lines = placed
        lines[position : position + old_len] = new_lines
        offset += len(new_lines) - old_len
        floor = position + len(new_lines)
    text = "\n".join(lines)
    return text + "\n" if trailing_newline and lines else text


def _place(lines: list[str], body: list[str], expected: int, floor: int) -> tuple[int, int, list[str]] | None:
    """(position, old length, new lines) of a hunk: exact context, then context equal but for trailing
    whitespace, then with up to MAX_FUZZ context lines dropped from each end (`patch -F`). Context
    lines keep the file's own text."""
    lead = next((i for i, line in enumerate(body) if line[0] != " "), len(body))
    trail = next((i for i, line in enumerate(reversed(body)) if line[0] != " "), len(body))
    for fuzz in range(MAX_FUZZ + 1):
        # like `patch -F`, never dropping the last context line at an end that has any
        top, bottom = min(fuzz, max(0, lead - 1)), min(fuzz, max(0, trail - 1))
        if fuzz and top == 0 and bottom == 0:
            break
        part = body[top : len(body) - bottom]
        old = [line[1:] for line in part if line[0] in " -"]
        if fuzz and not old:
            continue
        for loose in (False, True) if not fuzz else (True,):
            position = _locate(lines[floor:], old, expected + top - floor, loose)
            if position is None:
                continue
            at = position + floor
            return at, len(old), _new_lines(lines, at, part)
    return None


def _new_lines(lines: list[str], at: int, part: list[str]) -> list[str]:
    """The hunk's new text at `at`: its added lines, and the file's own text for its context lines."""
    out: list[str] = []
    cursor = at
    for line in part:
        if line[0] == " ":
            out.append(lines[cursor])
            cursor += 1
        elif line[0] == "-":
            cursor += 1
        else:
            out.append(line[1:])
    return out


def apply_unified_diff(workspace: Workspace, text: str) -> list[str]:
    """Apply every file of the diff, all or nothing; returns the paths touched."""
    patches = parse_unified_diff(text)
    staged = dict(workspace.files)
    touched: list[str] = []
    for patch in patches:
        if patch.old_path is None:
            assert patch.new_path is not None
            if patch.new_path in staged:
                raise PatchError(f"{patch.new_path}: the patch creates a file that already exists")
            source = ""
        else:
            if patch.old_path not in staged:
                raise PatchError(f"{patch.old_path}: no such file in the repository")
            source = staged[patch.old_path]
        if patch.new_path is None:
            result = ""
        else:
            result = _apply_hunks(patch.new_path or patch.old_path or "", source, patch.hunks)
        if patch.old_path is not None and patch.old_path != patch.new_path:
            del staged[patch.old_path]
            touched.append(patch.old_path)
        if patch.new_path is not None:
            staged[patch.new_path] = result
            touched.append(patch.new_path)
    trial = Workspace(files=dict(workspace.files), base=workspace.base)
    for name in set(workspace.files) - set(staged):
        trial.delete(name)
    try:
        for name in touched:
            if name in staged:
                trial.write(name, staged[name])
    except WorkspaceError as exc:
        raise PatchError(str(exc)) from None
    workspace.files = trial.files
    return sorted(set(touched))


def _named_before(lines: list[str], index: int) -> str | None:
    """A path given on the (non-blank) line just before the fence at `index`."""
    back = index - 1
    while back >= 0 and not lines[back].strip():
        back -= 1
        if index - back > 2:
            return None
    if back < 0:
        return None
    match = PATH_LINE.match(lines[back].strip())
    return match.group(1) if match else None


def parse_file_blocks(text: str) -> dict[str, str]:
    """Whole-file blocks: a fenced block holding a file's complete new content, its path given as the
    info string (```pkg/mod.py, ```python pkg/mod.py, ```python path=pkg/mod.py), on the line before
    the fence (`pkg/mod.py`, **pkg/mod.py**, File: pkg/mod.py) or as the block's first comment line
    (# pkg/mod.py); that comment line is part of the file's content."""
    blocks: dict[str, str] = {}
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    index = 0
    while index < len(lines):
        stripped = lines[index].strip()
        match = FILE_BLOCK.match(stripped)
        name = match.group(1) if match else None
        if name is None:
            opening = FENCE_OPEN.match(stripped)
            if opening is None or opening.group(1).lower() in ("diff", "patch"):
                index += 1
                continue
            name = _named_before(lines, index)
            if name is None and index + 1 < len(lines):
                comment = PATH_COMMENT.match(lines[index + 1].strip())
                name = comment.group(1) if comment else None
            if name is None:
                index += 1
                continue
        try:
            path = check_path(name)
        except WorkspaceError as exc:
            raise PatchError(f"block at line {index + 1}: {exc}") from None
        end = index + 1
        while end < len(lines) and lines[end].strip() != "```":
            end += 1
        if end >= len(lines):
            raise PatchError(f"block for {path} at line {index + 1} is not closed with ```")
        blocks[path] = "\n".join(lines[index + 1 : end]) + "\n"
        index = end + 1
    return blocks


def apply_completion(workspace: Workspace, completion: str) -> list[str]:
    """Patch mode: a unified diff, or whole-file blocks. Raises PatchError if neither applies."""
    if not isinstance(completion, str):
        raise PatchError("the completion must be text")
    normalized = completion.replace("\r\n", "\n")
    if "\n+++ " in normalized or normalized.startswith("--- "):
        return apply_unified_diff(workspace, completion)
    blocks = parse_file_blocks(completion)
    if not blocks:
        raise PatchError("found neither a unified diff nor whole-file blocks (```path/to/file.py ... ```)")
    trial = Workspace(files=dict(workspace.files), base=workspace.base)
    try:
        for path, content in blocks.items():
            trial.write(path, content)
    except WorkspaceError as exc:
        raise PatchError(str(exc)) from None
    workspace.files = trial.files
    return sorted(blocks)


def make_unified_diff(before: dict[str, str], after: dict[str, str]) -> str:
    """The unified diff turning `before` into `after` (what `git diff` would print, minus the headers)."""
    import difflib

    chunks: list[str] = []
    for path in sorted(set(before) | set(after)):
        old, new = before.get(path), after.get(path)
        if old == new:
            continue
        diff = difflib.unified_diff(
            (old or "").splitlines(keepends=True),
            (new or "").splitlines(keepends=True),
            fromfile=f"a/{path}" if old is not None else "/dev/null",
            tofile=f"b/{path}" if new is not None else "/dev/null",
        )
        chunks.append("".join(line if line.endswith("\n") else line + "\n" for line in diff))
    return "".join(chunks)
