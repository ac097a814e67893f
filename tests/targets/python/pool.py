"""Worker processes spin while the parent only waits: all the work is in processes the parent
started. Prints "ready" once they run; each worker ends when the parent does."""
import multiprocessing
import os
import sys
import time


def worker_spin(parent):
    while os.getppid() == parent:
        sum(range(1000))


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    fork = multiprocessing.get_context("fork")
    workers = [fork.Process(target=worker_spin, args=(os.getpid(),)) for _ in range(n)]
    for w in workers:
        w.start()
    time.sleep(0.3)
    print("ready", flush=True)
    for w in workers:
        w.join()
