"""Where packs come from: built-ins, the `rlvr.task_packs` entry-point group, and directories."""

from __future__ import annotations

import difflib
import importlib
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from rlvr.core.pack import TaskPack

ENTRY_POINT_GROUP = "rlvr.task_packs"

# name -> "module:attribute"; the attribute is a TaskPack subclass or a zero-argument factory.
BUILTIN_PACKS: dict[str, str] = {
    "humaneval": "rlvr.task_packs.humaneval:HumanEvalPack",
    "humaneval-ts": "rlvr.task_packs.humaneval_ts:HumanEvalTsPack",
    "kata": "rlvr.task_packs.kata:KataPack",
    "kata-ts": "rlvr.task_packs.kata_ts:KataTsPack",
    "math-procedural": "rlvr.task_packs.math_procedural:MathProceduralPack",
    "sql-shop": "rlvr.task_packs.sql_shop:SQLShopPack",
    "tool-worlds": "rlvr.task_packs.tool_tasks:ToolWorldsPack",
    "proof-identities": "rlvr.task_packs.proof_identities:ProofIdentitiesPack",
    "reasoning-gym": "rlvr.task_packs.math_reasoning_gym:ReasoningGymPack",
    "tiny-functions": "rlvr.task_packs.tiny_functions:TinyFunctionsPack",
    "tiny-hacking": "rlvr.task_packs.tiny_hacking:TinyHackingPack",
    "tiny-hacking-weak": "rlvr.task_packs.tiny_hacking:TinyHackingWeakPack",
    "repo-tasks": "rlvr.task_packs.repo_tasks:RepoTasksPack",
}


class PackError(ValueError):
    """A pack that cannot be found or loaded; the message says what to do."""


def _resolve(target: Any) -> TaskPack:
    if isinstance(target, str):
        module_name, _, attribute = target.partition(":")
        target = getattr(importlib.import_module(module_name), attribute)
    pack = target() if callable(target) else target
    if not isinstance(pack, TaskPack):
        raise PackError(f"{target!r} did not produce a TaskPack")
    return pack


def _entry_point_targets() -> dict[str, Any]:
    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}


def available_names() -> list[str]:
    return sorted(set(BUILTIN_PACKS) | set(_entry_point_targets()))


def load_pack(name_or_path: str | Path) -> TaskPack:
    """A pack by built-in name, entry-point name, or directory path (`pack.toml` + `tasks.jsonl`)."""
    text = str(name_or_path)
    path = Path(text)
    if path.is_dir() or "/" in text or text.startswith("."):
        from rlvr.task_packs.directory import DirectoryPack

        if not path.is_dir():
            raise PackError(f"pack directory {text!r} does not exist")
        return DirectoryPack(path)
    if text in BUILTIN_PACKS:
        return _resolve(BUILTIN_PACKS[text])
    plugins = _entry_point_targets()
    if text in plugins:
        try:
            return _resolve(plugins[text].load())
        except Exception as exc:  # a broken third-party pack must not look like a missing one
            raise PackError(
                f"pack {text!r} (entry point {plugins[text].value}) failed to load: {exc}"
            ) from exc
    close = difflib.get_close_matches(text, available_names(), n=3)
    hint = f" Did you mean {', '.join(close)}?" if close else ""
    raise PackError(
        f"unknown pack {text!r}.{hint} Run `rlvr packs list` to see the packs, or pass a directory "
        "holding pack.toml and tasks.jsonl."
    )


def list_packs() -> list[dict[str, Any]]:
    """`rlvr packs list --json`: one entry per pack; a broken plugin is listed with its error."""
    out: list[dict[str, Any]] = []
    for name in available_names():
        try:
            out.append(load_pack(name).info())
        except Exception as exc:
            out.append({"name": name, "family": None, "size": 0, "splits": [], "error": str(exc)})
    return out


def resolve_pack(pack: TaskPack | str | Path) -> TaskPack:
    """A pack object as given, or the pack a name or directory path names (`load_pack`)."""
    return pack if isinstance(pack, TaskPack) else load_pack(pack)
