"""Half of each step computes, half sleeps: on-CPU sampling sees compute(), wall-clock sees both."""
import sys
import time


def compute(seconds):
    end = time.monotonic() + seconds
    total = 0
    while time.monotonic() < end:
        for i in range(1000):
            total ^= i
    return total


def wait(seconds):
    time.sleep(seconds)


def run(seconds, step):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        compute(step)
        wait(step)


run(float(sys.argv[1]) if len(sys.argv) > 1 else 1.0,
    float(sys.argv[2]) if len(sys.argv) > 2 else 0.05)
