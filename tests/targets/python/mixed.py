"""Python that spends its time in a C extension's loop: step() calls hotloop.spin()."""
import sys
import time

sys.path.insert(0, sys.argv[2])
import hotloop  # noqa: E402


def step():
    return hotloop.spin(2_000_000)


def train(seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        step()


train(float(sys.argv[1]))
