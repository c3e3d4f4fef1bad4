"""Hallucinated imports: modules a program imports that do not exist in the sandbox's world.

The sandbox offers only the standard library, so a module resolves when its top-level package is in
`sys.stdlib_module_names` and every dotted part below it is found on that package's search path.
Resolution uses import-system finders only: no module is executed (importing `antigravity.x` to check
it would open a browser), so candidate code never runs in this trusted process.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import sys
from functools import lru_cache

from rlvr.graders.code.syntax import analyze


@lru_cache(maxsize=4096)
def resolves(module: str) -> bool:
    """Whether `module` (e.g. `os.path`, `collections.abc`) exists in a stdlib-only interpreter."""
    if not module or module.startswith(".") or any(not part.isidentifier() for part in module.split(".")):
        return False  # relative imports have no package to be relative to in a single-file program
    top, *rest = module.split(".")
    if top not in sys.stdlib_module_names:
        return False
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return False
    if spec is None:
        return top in sys.builtin_module_names
    for part in rest:
        locations = spec.submodule_search_locations
        if locations is None:  # a plain module: `os.path` is an attribute alias, handled below
            return _attribute_module(top, module)
        found = importlib.machinery.PathFinder.find_spec(f"{spec.name}.{part}", list(locations))
        if found is None:
            return False
        spec = found
    return True


def _attribute_module(top: str, module: str) -> bool:
    """Dotted imports through a plain module work only for modules that install a submodule
    into sys.modules when imported (`os.path`); those are already loaded in any interpreter."""
    return module in sys.modules and top in sys.modules


def imported_modules(source: str) -> list[str]:
    """The modules `source` imports (statically, plus literal `__import__`/`import_module` calls)."""
    return list(analyze(source).imports)


def hallucinated_imports(source: str) -> list[str]:
    """The imported modules of `source` that would fail to import in the sandbox."""
    return [name for name in imported_modules(source) if not resolves(name)]
