"""A fixed amount of CPU-bound Python work on N threads (second argument, default 1), for timing a
profiler's slowdown.
Prints how long the work took and the CPU time the process used for it ("elapsed SECONDS cpu
SECONDS"): the program's own view, without a profiler's start and end."""
import sys
import threading
import time
from pathlib import Path

# The same two functions as the tests' split.py (three runs the loop of one three times).
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "targets" / "python"))
from split import one, three  # noqa: E402


def worker(rounds):
    for _ in range(rounds):
        three(20000)
        one(20000)


rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 200
threads = int(sys.argv[2]) if len(sys.argv) > 2 else 1
start = time.perf_counter()
cpu = time.process_time()
others = [threading.Thread(target=worker, args=(rounds,)) for _ in range(threads - 1)]
for t in others:
    t.start()
worker(rounds)
for t in others:
    t.join()
print(f"elapsed {time.perf_counter() - start:.6f} cpu {time.process_time() - cpu:.6f}")
