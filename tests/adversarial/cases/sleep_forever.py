# task: add
# status: timeout
# attack: block in a sleep with every catchable signal ignored
import signal
import time

for number in range(1, 65):
    try:
        signal.signal(number, signal.SIG_IGN)
    except Exception:
        pass


def add(x, y):
    time.sleep(10_000)
