"""A CPU-bound Python program with a known split: in each thread (two unless the second argument
says), `three` runs the same loop as `one` three times as long (small integers only, so every
iteration costs the same), so three quarters of the time belongs to `three`."""
import sys
import threading
import time


def three(n):
    total = 0
    for i in range(3 * n):
        total ^= i
    return total


def one(n):
    total = 0
    for i in range(n):
        total ^= i
    return total


def worker(seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        three(20000)
        one(20000)


if __name__ == "__main__":
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 2.0
    threads = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    others = [threading.Thread(target=worker, args=(seconds,), name=f"worker-{i}")
              for i in range(1, threads)]
    for t in others:
        t.start()
    worker(seconds)
    for t in others:
        t.join()
