"""Patches: unified diffs (as `git diff` / `diff -u` print them) and whole-file blocks, applied to an
in-memory repository. Parsing is plain line scanning (no backtracking regexes over untrusted text);
a hunk must match its context exactly, at its stated line or (like `patch`) at the nearest offset."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from rlvr.graders.repo.workspace import Workspace, WorkspaceError, check_path

HUNK_HEADER = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
FILE_BLOCK = re.compile(r"^```[ \t]*(?:python[ \t]+)?(?:path=)?([\w./-]+\.\w+)[ \t]*$")
MAX_PATCH_CHARS = 1_000_000


class PatchError(ValueError):
    """A patch that does not parse or does not apply; the message says where."""


@dataclass
class FilePatch:
    old_path: str | None
    new_path: str | None
    hunks: list[tuple[int, list[str]]] = field(default_factory=list)


def _strip_prefix(raw: str) -> str | None:
    name = raw.split("\t", 1)[0].strip()
    if name == "/dev/null":
        return None
    if name.startswith(("a/", "b/")):
        name = name[2:]
    return check_path(name)


def parse_unified_diff(text: str) -> list[FilePatch]:
    if len(text) > MAX_PATCH_CHARS:
        raise PatchError(f"patch longer than {MAX_PATCH_CHARS} characters")
    lines = text.splitlines()
    patches: list[FilePatch] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        if not line.startswith("--- ") or index + 1 >= len(lines) or not lines[index + 1].startswith("+++ "):
            index += 1
            continue
        try:
            current = FilePatch(_strip_prefix(line[4:]), _strip_prefix(lines[index + 1][4:]))
        except WorkspaceError as exc:
            raise PatchError(f"patch line {index + 1}: {exc}") from None
        if current.old_path is None and current.new_path is None:
            raise PatchError(f"patch line {index + 1}: both sides are /dev/null")
        patches.append(current)
        index += 2
        while index < len(lines):
            match = HUNK_HEADER.match(lines[index])
            if match is None:
                break
            old_count = int(match.group(2) or "1") if match.group(2) != "0" else 0
            new_count = int(match.group(4) or "1") if match.group(4) != "0" else 0
            start, body = int(match.group(1)), []
            index += 1
            seen_old = seen_new = 0
            while index < len(lines) and (seen_old < old_count or seen_new < new_count):
                body_line = lines[index]
                tag = body_line[:1]
                if body_line.startswith("\\"):
                    index += 1
                    continue
                if tag in (" ", ""):
                    seen_old, seen_new = seen_old + 1, seen_new + 1
                    body_line = " " + body_line[1:]
                elif tag == "-":
                    seen_old += 1
                elif tag == "+":
                    seen_new += 1
                else:
                    raise PatchError(f"patch line {index + 1}: unexpected line in a hunk: {body_line[:60]!r}")
                body.append(body_line)
                index += 1
            if seen_old != old_count or seen_new != new_count:
                raise PatchError(f"patch line {index}: hunk shorter than its header says")
            while index < len(lines) and lines[index].startswith("\\"):
                index += 1
            current.hunks.append((start, body))
    if not patches:
        raise PatchError("no file headers (--- a/path, +++ b/path) found: not a unified diff")
    return patches


def _apply_hunks(path: str, original: str, hunks: list[tuple[int, list[str]]]) -> str:
    lines = original.splitlines()
    trailing_newline = original.endswith("\n") or not original
    offset = 0
    for number, (start, body) in enumerate(hunks, start=1):
        old = [line[1:] for line in body if line[0] in " -"]
        new = [line[1:] for line in body if line[0] in " +"]
        expected = max(0, start - 1 + offset) if old else max(0, start + offset)
        position = _locate(lines, old, expected)
        if position is None:
            raise PatchError(
                f"{path}: hunk {number} (@@ -{start}) does not apply: its context is not in the file"
            )
        lines[position : position + len(old)] = new
        offset += len(new) - len(old)
    text = "\n".join(lines)
    return text + "\n" if trailing_newline and lines else text


def _locate(lines: list[str], old: list[str], expected: int) -> int | None:
    if not old:
        return min(expected, len(lines))
    for distance in range(len(lines) + 1):
        for candidate in (expected - distance, expected + distance):
            if 0 <= candidate <= len(lines) - len(old) and lines[candidate : candidate + len(old)] == old:
                return candidate
        if expected - distance < 0 and expected + distance > len(lines):
            break
    return None


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


def parse_file_blocks(text: str) -> dict[str, str]:
    """Whole-file blocks: a fenced block whose info string is the path (```pkg/mod.py or
    ```python pkg/mod.py), holding the file's complete new content."""
    blocks: dict[str, str] = {}
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        match = FILE_BLOCK.match(lines[index].strip())
        if match is None:
            index += 1
            continue
        try:
            path = check_path(match.group(1))
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
    if "\n+++ " in completion or completion.startswith("--- "):
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
