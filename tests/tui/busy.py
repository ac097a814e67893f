"""A program for `profile top` to watch: a thread that computes in `hot` (two lines of it) and
`cold` (which calls `hot`), a thread that sleeps. Runs for argv[1] seconds (0: until killed)."""
import sys
import threading
import time


def hot(n):
    s = 0
    for i in range(n):
        s += i * i
    return s


def cold(n):
    return hot(n // 3)


def sleeper():
    while True:
        time.sleep(0.05)


threading.Thread(target=sleeper, name="sleeper", daemon=True).start()
seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 0
end = time.time() + seconds if seconds > 0 else float("inf")
while time.time() < end:
    hot(100000)
    cold(100000)
