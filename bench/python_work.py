"""A fixed amount of CPU-bound Python work on two threads (for timing a profiler's slowdown).
Writes how long the work took, in ms, to the file named by the second argument when given: the
program's own view, without the profiler's start and end."""
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


def worker(rounds):
    for _ in range(rounds):
        three(20000)
        one(20000)


rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 200
start = time.perf_counter()
other = threading.Thread(target=worker, args=(rounds,))
other.start()
worker(rounds)
other.join()
if len(sys.argv) > 2:
    with open(sys.argv[2], "w") as out:
        out.write(f"{(time.perf_counter() - start) * 1000:.3f}\n")
