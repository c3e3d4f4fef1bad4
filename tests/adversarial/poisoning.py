"""Warm-worker poisoning: each `poison` source tampers with process-wide state in its sandbox process;
the honest candidate that runs next on the same worker must be unaffected."""

POISONS = {
    "builtins": """
import builtins
builtins.sum = lambda *a, **k: 0
builtins.len = lambda *a: 0
builtins.int = float
def add(x, y):
    return -1
""",
    "random": """
import random
random.seed(0)
random.random = lambda: 0.0
random.randint = lambda a, b: a
def add(x, y):
    return -1
""",
    "recursion_limit": """
import sys
sys.setrecursionlimit(25)
def add(x, y):
    return -1
""",
    "modules": """
import sys, types
sys.modules["operator"] = types.ModuleType("operator")
sys.modules["functools"] = types.ModuleType("functools")
import os
os.environ["PYTHONHASHSEED"] = "0"
def add(x, y):
    return -1
""",
    "logging": """
import logging
logging._srcfile = "/nowhere"  # would make the next candidate's records walk frames (refused)
logging.disable(logging.CRITICAL)
logging.getLogger().addHandler(logging.NullHandler())
logging.getLogger("rlvr").propagate = False
def add(x, y):
    return -1
""",
    "cwd_and_umask": """
import os
try:
    os.chdir("/tmp")
except Exception:
    pass
os.umask(0o777)
def add(x, y):
    return -1
""",
}

# An honest candidate that leans on exactly what the poisons touched.
AFTER_POISON = """
import functools
import logging
import operator
import random
import sys


def add(x, y):
    assert logging._srcfile is None and logging.root.manager.disable == 0 and not logging.root.handlers
    logging.getLogger("rlvr").warning("adding %d and %d", x, y)  # no frame walk: no refusal
    assert sys.getrecursionlimit() >= 1000
    assert len([1, 2]) == 2 and sum([x, y]) == x + y and int("1") == 1
    assert random.random() != 0.0 or random.random() != 0.0
    def depth(n):
        return 0 if n == 0 else 1 + depth(n - 1)
    depth(200)
    return functools.reduce(operator.add, [x, y])
"""
