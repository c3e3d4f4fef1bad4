# task: add
# attack: segfaults: ctypes null read, faulthandler, and C-stack exhaustion through deep recursion
import sys


def add(x, y):
    try:
        import ctypes

        ctypes.string_at(0)
    except Exception:
        pass
    try:
        import faulthandler

        faulthandler._sigsegv()
    except Exception:
        pass
    sys.setrecursionlimit(10**8)

    def deep(n):
        return deep(n + 1) + 1

    return deep(0)
