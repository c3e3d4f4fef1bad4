# task: add
# status: crash timeout
# attack: close every inherited descriptor (the result pipe included) and stop itself with SIGSTOP, so the zygote waits on a frozen child
import os
import signal


def add(x, y):
    os.closerange(0, 1024)
    signal.raise_signal(signal.SIGSTOP)
    return x + y
