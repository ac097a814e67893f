"""Two multiprocessing children do the work; the parent only waits for them."""
import multiprocessing
import time


def child_work():
    end = time.monotonic() + 0.8
    while time.monotonic() < end:
        sum(range(1000))


if __name__ == "__main__":
    children = [multiprocessing.Process(target=child_work) for _ in range(2)]
    for c in children:
        c.start()
    for c in children:
        c.join()
