"""A CPU-bound Python program with a known split: in each thread (two unless the second argument
says), `three` runs the same loop as `one` three times as long (small integers only, so every
iteration costs the same), so three quarters of the time belongs to `three`.

It runs until the process has had the first argument's seconds of CPU time (all threads together),
not of the wall clock: a loaded machine gives it less CPU a second, and the on-CPU samples a test
counts follow the CPU time. Bounded in wall time all the same (ten times as long, at least 30 s)."""
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


def worker(cpu_end, wall_end):
    while time.process_time() < cpu_end and time.monotonic() < wall_end:
        three(20000)
        one(20000)


if __name__ == "__main__":
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 2.0
    threads = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    ends = (time.process_time() + seconds, time.monotonic() + max(10 * seconds, 30))
    others = [threading.Thread(target=worker, args=ends, name=f"worker-{i}")
              for i in range(1, threads)]
    for t in others:
        t.start()
    worker(*ends)
    for t in others:
        t.join()
