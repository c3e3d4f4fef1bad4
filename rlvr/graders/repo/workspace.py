"""The agent's workspace: the repository as an in-memory dict {relative path: text} on the trusted side.

Nothing the agent writes ever touches the grader's filesystem while it works: edits change the dict,
and the agent's code only runs in the sandbox, on a copy shipped with each job. Paths are checked
here, once, for every operation: relative, '/'-separated, no '..', no empty or dot parts, no NUL,
limited length (each name within the file system's 255 bytes); contents must be text (no NUL, valid Unicode) within size limits.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rlvr.specs.repo_paths import DEFAULT_PROTECTED, is_protected

__all__ = [
    "DEFAULT_PROTECTED",
    "Workspace",
    "WorkspaceError",
    "changed_paths",
    "check_path",
    "check_text",
    "is_protected",
]

MAX_FILE_CHARS = 200_000
MAX_TOTAL_CHARS = 2_000_000
MAX_FILES = 400
MAX_PATH_CHARS = 200
MAX_NAME_BYTES = 255  # NAME_MAX: a longer file or directory name cannot be written anywhere


class WorkspaceError(ValueError):
    """An operation the workspace refuses; the message is shown to the agent."""


def check_path(path: object) -> str:
    """The normalised relative path, or WorkspaceError saying what is wrong with it."""
    if not isinstance(path, str) or not path:
        raise WorkspaceError("path must be a non-empty string")
    if len(path) > MAX_PATH_CHARS:
        raise WorkspaceError(f"path longer than {MAX_PATH_CHARS} characters")
    if "\0" in path or "\\" in path:
        raise WorkspaceError("path may not contain NUL or backslashes")
    if path.startswith("/") or path.startswith("~"):
        raise WorkspaceError("path must be relative to the repository root")
    parts = path.removeprefix("./").split("/")
    for part in parts:
        if part in ("", ".", ".."):
            raise WorkspaceError(
                f"path {path!r} has an empty, '.' or '..' part; paths stay inside the repository"
            )
        if not part.isprintable():
            raise WorkspaceError("path has unprintable characters")
        if len(part.encode("utf-8", "surrogatepass")) > MAX_NAME_BYTES:
            raise WorkspaceError(f"a file or directory name longer than {MAX_NAME_BYTES} bytes (UTF-8)")
    return "/".join(parts)


def check_text(text: object, what: str = "content") -> str:
    if not isinstance(text, str):
        raise WorkspaceError(f"{what} must be a string")
    if len(text) > MAX_FILE_CHARS:
        raise WorkspaceError(f"{what} is {len(text)} characters; the limit is {MAX_FILE_CHARS}")
    if "\0" in text:
        raise WorkspaceError(f"{what} contains a NUL byte: only text files are supported")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise WorkspaceError(f"{what} is not valid Unicode text") from None
    return text


@dataclass
class Workspace:
    """The repository state of one episode. `base` is the state the episode started from."""

    files: dict[str, str]
    base: dict[str, str] = field(default_factory=dict)

    @classmethod
    def fresh(cls, files: dict[str, str]) -> Workspace:
        return cls(files=dict(files), base=dict(files))

    def total_chars(self) -> int:
        return sum(len(text) for text in self.files.values())

    def read(self, path: object) -> str:
        name = check_path(path)
        if name not in self.files:
            raise WorkspaceError(f"no such file: {name}")
        return self.files[name]

    def write(self, path: object, text: object) -> str:
        name = check_path(path)
        content = check_text(text)
        if name not in self.files and len(self.files) >= MAX_FILES:
            raise WorkspaceError(f"the repository may hold at most {MAX_FILES} files")
        if any(other.startswith(name + "/") for other in self.files) or any(
            name.startswith(other + "/") for other in self.files
        ):
            raise WorkspaceError(f"{name} clashes with a directory or file of the same name")
        growth = len(content) - len(self.files.get(name, ""))
        if self.total_chars() + growth > MAX_TOTAL_CHARS:
            raise WorkspaceError(f"the repository may hold at most {MAX_TOTAL_CHARS} characters")
        self.files[name] = content
        return name

    def delete(self, path: object) -> str:
        name = check_path(path)
        if self.files.pop(name, None) is None:
            raise WorkspaceError(f"no such file: {name}")
        return name

    def changed(self) -> list[str]:
        """Paths added, removed or modified relative to the base state."""
        names = set(self.files) | set(self.base)
        return sorted(n for n in names if self.files.get(n) != self.base.get(n))


def changed_paths(before: dict[str, str], after: dict[str, str]) -> list[str]:
    return sorted(n for n in set(before) | set(after) if before.get(n) != after.get(n))
