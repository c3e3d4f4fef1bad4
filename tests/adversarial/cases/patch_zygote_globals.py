# task: add
# attack: harness tampering: reach the worker's own globals (sys.modules['__main__'], function __globals__)
# and replace its encoder, its audit lists and its exit function
import sys

patched = []
main = sys.modules.get("__main__")
targets = [main.__dict__] if main is not None else []
try:
    import _thread

    targets.append(_thread.start_new_thread.__globals__)
except Exception:
    pass
for namespace in targets:
    namespace["to_wire"] = lambda value, depth=0: value + 1000 if type(value) is int else value
    namespace["BLOCKED_EVENTS"] = frozenset()
    namespace["BLOCKED_MODULES"] = frozenset()
    patched.append(namespace)


def add(x, y):
    return 0 if not patched else -1000 + x + y + 1
