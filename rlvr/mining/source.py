"""Reading a project to mine: a directory or an sdist `.tar.gz`, laid out as the pack's repository.

The pack's repository is the project's package at the repository root (a `src/` layout is flattened,
since the sandbox imports modules by their path) plus its test files where they were, plus the
configuration files that tell pytest how to run them. Declared runtime dependencies are read from
`pyproject.toml` (`[project] dependencies`), `setup.cfg` (`install_requires`) or a literal
`install_requires=[...]` in `setup.py`.
"""

from __future__ import annotations

import ast
import configparser
import re
import tarfile
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement

from rlvr.task_packs.repo_tasks.format import MAX_REPO_FILE_CHARS, MAX_REPO_FILES

NOT_PACKAGES = {
    "test",
    "tests",
    "testing",
    "docs",
    "doc",
    "examples",
    "example",
    "tools",
    "scripts",
    "benchmarks",
    "benchmark",
    "bench",
    "build",
    "dist",
    "setup",
    "site",
}
TEST_FILE = re.compile(r"(^|/)(test_[^/]*|[^/]*_test)\.py$")
CONFIG_FILES = ("pyproject.toml", "setup.cfg", "pytest.ini", "tox.ini", "conftest.py")
MAX_TEST_DATA_CHARS = 2_000_000
SKIPPED_DIRS = {"__pycache__", ".git", ".tox", ".nox", ".venv", "venv", "build", "dist", ".eggs"}


class SourceError(ValueError):
    """The source cannot be mined as given; the message says what to do."""


@dataclass
class Project:
    """A project laid out for mining: `files` is the pack repository ({path: text})."""

    name: str
    root: Path
    package: str
    files: dict[str, str]
    tests: list[str]
    requirements: list[str] = field(default_factory=list)
    test_requirements: list[str] = field(default_factory=list)
    """What the project's tests need beyond `requirements` (its test extra or dependency group):
    installed for the mine-time suite runs only, never part of the pack."""
    skipped: list[str] = field(default_factory=list)
    test_data: dict[str, str] = field(default_factory=dict)
    large_tests: list[str] = field(default_factory=list)
    """Files the tests read (fixtures, data) and test modules too large for a pack: used at mine
    time only, never part of the pack."""

    def modules(self) -> list[str]:
        """The package's modules (path form), tests aside."""
        return sorted(
            p
            for p in self.files
            if p.startswith(self.package + "/") and p.endswith(".py") and p not in self.tests
        )


def extract_sdist(archive: Path, into: Path) -> Path:
    """Unpack an sdist safely (no absolute paths, links or devices) and return its project root."""
    into.mkdir(parents=True, exist_ok=True)
    try:
        with tarfile.open(archive, "r:*") as tar:
            tar.extractall(into, filter="data")
    except (tarfile.TarError, OSError) as exc:
        raise SourceError(f"{archive}: not a readable sdist archive ({exc})") from exc
    entries = [p for p in into.iterdir() if not p.name.startswith(".")]
    if len(entries) == 1 and entries[0].is_dir():
        return entries[0]
    return into


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def _project_name(root: Path) -> str:
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        try:
            name = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {}).get("name")
            if isinstance(name, str) and name:
                return name
        except (tomllib.TOMLDecodeError, UnicodeDecodeError):
            pass
    setup_cfg = root / "setup.cfg"
    if setup_cfg.is_file():
        parser = configparser.ConfigParser()
        try:
            parser.read(setup_cfg, encoding="utf-8")
            if parser.has_option("metadata", "name"):
                return parser.get("metadata", "name")
        except configparser.Error:
            pass
    return re.sub(r"-\d[\w.]*$", "", root.name)


def find_package(root: Path, name: str, wanted: str | None = None) -> tuple[Path, str]:
    """(directory holding the package, package name): `wanted` if given, else the package whose name
    matches the project's, else the largest top-level package."""
    bases = [root / "src", root] if (root / "src").is_dir() else [root]
    found: list[tuple[Path, str]] = []
    for base in bases:
        for child in sorted(base.iterdir()):
            if (
                child.is_dir()
                and (child / "__init__.py").is_file()
                and child.name.isidentifier()
                and child.name.lower() not in NOT_PACKAGES
            ):
                found.append((base, child.name))
    if wanted:
        for base, package in found:
            if package == wanted:
                return base, package
        raise SourceError(
            f"no package {wanted!r} in {root} (found: {', '.join(p for _, p in found) or 'none'})"
        )
    if not found:
        raise SourceError(
            f"{root}: no Python package (a directory with __init__.py) at the top level or under src/; "
            "single-module projects are not supported yet"
        )
    normal = _normal(name)
    for base, package in found:
        if _normal(package) == normal or normal.endswith(_normal(package)) or _normal(package) in normal:
            return base, package
    return max(found, key=lambda item: sum(1 for _ in (item[0] / item[1]).rglob("*.py")))


def _read_text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (UnicodeDecodeError, OSError):
        return None


def declared_requirements(root: Path) -> list[str]:
    """The project's runtime requirements that apply to this interpreter (markers evaluated)."""
    raw: list[str] = []
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        try:
            data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
            raw += [str(r) for r in data.get("project", {}).get("dependencies", []) or []]
        except (tomllib.TOMLDecodeError, UnicodeDecodeError):
            pass
    setup_cfg = root / "setup.cfg"
    if not raw and setup_cfg.is_file():
        parser = configparser.ConfigParser()
        try:
            parser.read(setup_cfg, encoding="utf-8")
            if parser.has_option("options", "install_requires"):
                raw += [line.strip() for line in parser.get("options", "install_requires").splitlines()]
        except configparser.Error:
            pass
    setup_py = root / "setup.py"
    if not raw and setup_py.is_file():
        raw += _setup_py_requirements(_read_text(setup_py) or "")
    wanted: list[str] = []
    for text in raw:
        text = text.split("#", 1)[0].strip()
        if not text:
            continue
        try:
            requirement = Requirement(text)
        except InvalidRequirement as exc:
            raise SourceError(f"{root}: cannot read the requirement {text!r}: {exc}") from exc
        if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
            wanted.append(str(requirement).split(";", 1)[0].strip())
    return wanted


TEST_EXTRAS = ("test", "tests", "testing")
TEST_REQUIREMENT_FILES = (
    "requirements-test.txt",
    "requirements-tests.txt",
    "requirements_test.txt",
    "test-requirements.txt",
    "test_requirements.txt",
    "requirements/test.txt",
    "requirements/tests.txt",
    "tests/requirements.txt",
)
# the suite runs with the miner's own pytest (its plugin records the calls): a project's pin of pytest
# itself, or of plugins that only measure (coverage, benchmarks timing nothing here), is not installed
NOT_INSTALLED_FOR_TESTS = {"pytest", "pytest_cov", "coverage", "pytest_codspeed", "pytest_xdist"}


def _group(groups: dict[str, object], name: str, depth: int = 0) -> list[str]:
    """A PEP 735 dependency group's requirement strings, included groups expanded."""
    out: list[str] = []
    entries = groups.get(name)
    if depth > 10 or not isinstance(entries, list):
        return out
    for entry in entries:
        if isinstance(entry, str):
            out.append(entry)
        elif isinstance(entry, dict) and isinstance(entry.get("include-group"), str):
            out += _group(groups, entry["include-group"], depth + 1)
    return out


def declared_test_requirements(root: Path, runtime: list[str]) -> list[str]:
    """The requirements the project declares for its tests (a `test`/`tests`/`testing` extra or
    dependency group, or a test requirements file), markers evaluated, without `runtime` ones and
    without pytest itself."""
    raw: list[str] = []
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        try:
            data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError):
            data = {}
        extras = data.get("project", {}).get("optional-dependencies", {}) or {}
        groups = data.get("dependency-groups", {}) or {}
        for name in TEST_EXTRAS:
            raw += [str(r) for r in extras.get(name, []) or []]
            raw += _group(groups, name)
    setup_cfg = root / "setup.cfg"
    if setup_cfg.is_file():
        parser = configparser.ConfigParser()
        try:
            parser.read(setup_cfg, encoding="utf-8")
            for name in TEST_EXTRAS:
                if parser.has_option("options.extras_require", name):
                    raw += parser.get("options.extras_require", name).splitlines()
        except configparser.Error:
            pass
    for relative in TEST_REQUIREMENT_FILES:
        raw += (_read_text(root / relative) or "").splitlines() if (root / relative).is_file() else []
    wanted: list[str] = []
    have = {_normal(Requirement(r).name) for r in runtime}
    for text in raw:
        text = text.split("#", 1)[0].strip()
        if not text or text.startswith("-"):
            continue  # pip options (-r, -e, --index-url) in a requirements file
        try:
            requirement = Requirement(text)
        except InvalidRequirement:
            continue  # a test extra is a convenience: one unreadable line does not stop the mining
        name = _normal(requirement.name)
        if name in NOT_INSTALLED_FOR_TESTS or name in have:
            continue
        if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
            line = str(requirement).split(";", 1)[0].strip()
            if line not in wanted:
                wanted.append(line)
    return wanted


def _setup_py_requirements(source: str) -> list[str]:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == "install_requires":
            try:
                value = ast.literal_eval(node.value)
            except ValueError:
                return []
            return [str(v) for v in value] if isinstance(value, list | tuple) else []
    return []


def read_project(source: Path, workdir: Path, package: str | None = None) -> Project:
    """The project at `source` (a directory or an sdist), laid out for the pack."""
    if source.is_file():
        if not source.name.endswith((".tar.gz", ".tgz", ".tar")):
            raise SourceError(f"{source}: give a project directory or an sdist (.tar.gz)")
        root = extract_sdist(source, workdir / "source")
    elif source.is_dir():
        root = source
    else:
        raise SourceError(f"{source}: no such file or directory")
    name = _project_name(root)
    base, package_name = find_package(root, name, package)
    files: dict[str, str] = {}
    skipped: list[str] = []
    test_data: dict[str, str] = {}
    tests_outside: list[str] = []
    for path in sorted((base / package_name).rglob("*.py")):
        if SKIPPED_DIRS & set(path.parts):
            continue
        _take(files, skipped, path.relative_to(base).as_posix(), path)
    tests: list[str] = [p for p in files if TEST_FILE.search(p) or p.rsplit("/", 1)[-1] == "conftest.py"]
    for directory in ("tests", "test", "testing"):
        test_root = root / directory
        if not test_root.is_dir():
            continue
        for path in sorted(test_root.rglob("*")):
            if not path.is_file() or path.is_symlink() or SKIPPED_DIRS & set(path.relative_to(root).parts):
                continue
            relative = path.relative_to(root).as_posix()
            if path.suffix != ".py":
                data = _read_text(path)
                if data is not None and len(data) <= MAX_TEST_DATA_CHARS:
                    test_data[relative] = data
            elif _take(files, skipped, relative, path):
                tests.append(relative)
            elif (text := _read_text(path)) is not None:
                test_data[relative] = text
                tests_outside.append(relative)
    for path in (
        sorted(root.glob("test_*.py")) + sorted(root.glob("*_test.py")) + sorted(root.glob("test.py"))
    ):
        if _take(files, skipped, path.name, path):
            tests.append(path.name)
    for config in CONFIG_FILES:
        if (root / config).is_file():
            if _take(files, skipped, config, root / config) and config == "conftest.py":
                tests.append(config)
    if not any(TEST_FILE.search(t) or t == "test.py" for t in tests):
        raise SourceError(
            f"{root}: no test files (test_*.py or *_test.py) found; the miner needs a pytest suite"
        )
    if len(files) > MAX_REPO_FILES:
        raise SourceError(
            f"{root}: {len(files)} files, more than a repo pack holds ({MAX_REPO_FILES}); "
            "mine a smaller package with --package"
        )
    return Project(
        name=_normal(name).replace("_", "-"),
        root=root,
        package=package_name,
        files=files,
        tests=sorted(set(tests)),
        requirements=(runtime := declared_requirements(root)),
        test_requirements=declared_test_requirements(root, runtime),
        skipped=skipped,
        test_data=test_data,
        large_tests=tests_outside,
    )


def _take(files: dict[str, str], skipped: list[str], relative: str, path: Path) -> bool:
    text = _read_text(path)
    if text is None or len(text) > MAX_REPO_FILE_CHARS:
        skipped.append(f"{relative}: " + ("not UTF-8 text" if text is None else "too large for a repo pack"))
        return False
    files[relative] = text
    return True
