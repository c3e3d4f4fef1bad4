# task: add
# attack: finalizers: __del__ and weakref callbacks that fire during harness tear-down
import weakref


class Sneaky:
    def __del__(self):
        print("3")
        raise SystemExit(0)


keep = Sneaky()


def add(x, y):
    local = Sneaky()
    weakref.finalize(local, print, "PASS")
    return -1
