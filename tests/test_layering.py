"""The import layering stays true: lower layers never import higher ones.

    core  <  specs  <  sandbox, task_packs  <  graders  <  executors  <  envs  <  trainer
                                                                       (integrations, bench, cli: on top)

`core` is the data every layer shares (Task, Verdict, TaskPack, the plain-data codec); `specs` the
pieces packs and graders share (method drivers, deterministic generation, tool worlds); packs are
data and never import graders or the sandbox. Every import counts, lazy ones inside functions too, and
so do imports by name: a `"module:attr"` string table (the env, grader and pack registries) and a
literal `importlib.import_module("rlvr...")` name an edge as surely as an import statement does.
The trainer sits on the interfaces only (`TRAINER_IMPORTS`), never on a family's grader or the sandbox.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "rlvr"

ALLOWED: dict[str, set[str]] = {
    "core": {"core"},
    "specs": {"core", "specs"},
    "sandbox": {"core", "sandbox"},
    "task_packs": {"core", "specs", "task_packs"},
    "graders": {"core", "specs", "sandbox", "graders"},
    "executors": {"core", "specs", "sandbox", "task_packs", "graders", "executors"},
    "envs": {"core", "specs", "sandbox", "task_packs", "graders", "executors", "envs"},
    "mining": {"core", "specs", "sandbox", "task_packs", "graders", "executors", "envs", "mining"},
}


# What the trainer may import: the shared data, the envs (their registry and `envs/training.py`: pack,
# grader and batch grading for training), itself. Never a grader, the sandbox or a pack module.
TRAINER_IMPORTS = ("rlvr.core", "rlvr.envs", "rlvr.trainer")
_MODULE_NAME = re.compile(r"rlvr(?:\.[A-Za-z_]\w*)+")
_BY_NAME = re.compile(rf"({_MODULE_NAME.pattern})(?::[A-Za-z_]\w*)?")


def _is_module(root: Path, module: str) -> bool:
    where = root.parent.joinpath(*module.split("."))
    return where.with_suffix(".py").is_file() or (where / "__init__.py").is_file()


def _imports(path: Path, root: Path = ROOT) -> list[tuple[int, str]]:
    """(line, module) for every import of `path`: statements, and any string that names an existing
    rlvr module (`"rlvr.graders.base:Grader"`, `import_module("rlvr.envs.vector")`)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            named = _BY_NAME.fullmatch(node.value.strip())
            if named and _is_module(root, named.group(1)):
                found.append((node.lineno, named.group(1)))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
            if node.module == "rlvr":  # `from rlvr import graders` names a subpackage
                found += [(node.lineno, f"rlvr.{alias.name}") for alias in node.names]
    return found


def _layer(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "rlvr" else None


def layering_violations(root: Path) -> list[str]:
    violations = []
    for path in sorted(root.rglob("*.py")):
        own = path.relative_to(root).parts[0]
        allowed = ALLOWED.get(own)
        for line, module in _imports(path, root):
            where = f"{path.relative_to(root.parent)}:{line}"
            target = _layer(module)
            if (
                own == "trainer"
                and target is not None
                and not any(module == m or module.startswith(m + ".") for m in TRAINER_IMPORTS)
            ):
                violations.append(
                    f"{where}: the trainer imports {module} (allowed: {', '.join(TRAINER_IMPORTS)})"
                )
            elif allowed is not None and target is not None and target not in allowed | {"__init__"}:
                violations.append(f"{where}: {own} imports {module}")
    return violations


def test_no_module_imports_a_higher_layer() -> None:
    violations = layering_violations(ROOT)
    assert not violations, "layering violations:\n" + "\n".join(violations)


def _plant(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root / "rlvr"


def test_the_check_sees_imports_made_by_name(tmp_path: Path) -> None:
    """Planted edges a statement scan would miss: an importlib call, a "module:attr" table, a module
    name in a tuple that a loop imports; and the trainer reaching past the interfaces."""
    root = _plant(
        tmp_path,
        {
            "rlvr/envs/schemas.py": "",
            "rlvr/graders/tool/grader.py": "class ToolGrader: ...\n",
            "rlvr/sandbox/pool.py": "",
            "rlvr/task_packs/directory.py": (
                "import importlib\n"
                "def load():\n"
                "    importlib.import_module('rlvr.envs.schemas')\n"
                "    for name in ('rlvr.sandbox.pool',):\n"
                "        importlib.import_module(name)\n"
            ),
            "rlvr/task_packs/registry.py": 'GRADERS = {"tool": "rlvr.graders.tool.grader:ToolGrader"}\n',
            "rlvr/trainer/grpo.py": "def f():\n    from rlvr.graders.tool.grader import ToolGrader\n",
            "rlvr/graders/base.py": 'NOT_A_MODULE = "rlvr.verify"  # a name, not a module: no edge\n',
        },
    )
    assert layering_violations(root) == [
        "rlvr/task_packs/directory.py:3: task_packs imports rlvr.envs.schemas",
        "rlvr/task_packs/directory.py:4: task_packs imports rlvr.sandbox.pool",
        "rlvr/task_packs/registry.py:1: task_packs imports rlvr.graders.tool.grader",
        "rlvr/trainer/grpo.py:2: the trainer imports rlvr.graders.tool.grader (allowed: "
        + ", ".join(TRAINER_IMPORTS)
        + ")",
    ]


def test_every_rlvr_subpackage_has_a_layer_or_sits_on_top() -> None:
    on_top = {"trainer", "integrations", "bench", "cli", "__init__.py", "__main__.py", "__pycache__"}
    on_top.add("hacking")  # receipts/regrade, certify, canaries: measurement over graders and packs
    unknown = {p.name for p in ROOT.iterdir()} - set(ALLOWED) - on_top
    assert not unknown, f"new top-level modules need a place in the layering: {sorted(unknown)}"


def test_graders_are_grouped_by_family() -> None:
    prefixes = ("property_", "pyright_", "math_", "sql_", "tool_", "proof_")
    flat = [p.name for p in (ROOT / "graders").glob("*.py") if p.name.startswith(prefixes)]
    assert not flat, f"family modules belong in their family package: {flat}"


@pytest.mark.parametrize(
    "forbidden",
    ["torch", "rlvr.graders", "rlvr.sandbox", "rlvr.trainer", "rlvr.envs.code_env", "transformers"],
)
def test_import_rlvr_loads_no_heavy_layer(forbidden: str) -> None:
    code = (
        "import sys, rlvr, gymnasium as gym\n"
        "assert 'rlvr/Code-v0' in gym.registry and 'rlvr/Tool-v0' in gym.registry\n"
        f"loaded = [m for m in sys.modules if m == {forbidden!r} or m.startswith({forbidden!r} + '.')]\n"
        "print(','.join(loaded))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "", f"`import rlvr` loaded {out.stdout.strip()}"


def test_the_command_line_loads_no_model_code_until_training_starts() -> None:
    """`rlvr grade`, `rlvr bench` ... build the whole parser, which reads the training config's types: that
    must not import torch or transformers (seconds of start-up for every grading command)."""
    code = (
        "import sys\n"
        "from rlvr.cli import build_parser\n"
        "from rlvr.trainer.config import build_config\n"
        "build_parser(); build_config(None, ['grpo.loss_type=dapo'])\n"
        "print(','.join(m for m in ('torch', 'transformers') if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert out.stdout.strip() == "", f"the CLI loaded {out.stdout.strip()}"


def test_grader_families_form_no_cycle() -> None:
    """A family may build on another (repo on code's type layer, proof on math's worker), never both
    ways: the math worker names no other family's op (the proof grader hands it its own). The nodes are
    the family packages and the flat modules beside them, except `base`: it is the registry, naming
    every family by string so `make_grader` finds it, and every family implements its `Grader`."""
    graders = ROOT / "graders"
    units = {p.name: p for p in graders.iterdir() if (p / "__init__.py").is_file()}
    units |= {p.stem: p for p in graders.glob("*.py") if p.stem not in ("__init__", "base")}
    edges: dict[str, set[str]] = {unit: set() for unit in units}
    for unit, where in units.items():
        for path in where.rglob("*.py") if where.is_dir() else [where]:
            for _, module in _imports(path):
                parts = module.split(".")
                if parts[:2] == ["rlvr", "graders"] and len(parts) > 2 and parts[2] in set(units) - {unit}:
                    edges[unit].add(parts[2])

    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        return any(n == goal or (n not in seen and reaches(n, goal, seen | {n})) for n in edges[start])

    cycles = sorted(f"{a} <-> {b}" for a in units for b in edges[a] if reaches(b, a, {b}))
    assert not cycles, f"grader packages import each other: {cycles}"
