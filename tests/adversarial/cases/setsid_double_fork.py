# task: add
# attack: setsid + double fork to escape the process group, then linger
import os
import time


def add(x, y):
    try:
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                time.sleep(10_000)
            os._exit(0)
    except Exception:
        pass
    return -1
