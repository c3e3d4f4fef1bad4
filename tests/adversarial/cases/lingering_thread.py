# task: add
# attack: lingering threads that keep running (and try to forge output) after the function returns
import threading
import time


def spin():
    while True:
        print("3")
        time.sleep(0.001)


def add(x, y):
    for start in (
        lambda: threading.Thread(target=spin, daemon=True).start(),
        lambda: __import__("_thread").start_new_thread(spin, ()),
    ):
        try:
            start()
        except Exception:
            pass
    return -1
