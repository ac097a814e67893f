"""Waits in vfork (uninterruptible sleep) for 0.4 s at a time, between short computations, for
about argv[1] seconds: a process that ptrace cannot stop while it waits."""
import sys
import time

sys.path.insert(0, sys.argv[2])
import hotloop  # noqa: E402


def waits():
    hotloop.vfork_wait(400)


def computes():
    return hotloop.spin(1_000_000)


end = time.monotonic() + float(sys.argv[1])
while time.monotonic() < end:
    waits()
    computes()
