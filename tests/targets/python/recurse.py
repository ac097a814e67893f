# A stack that changes faster than it can be read: recursion 20 deep, returning and starting
# again, forever (or for argv[1] seconds). A true stack of it is up to 21 recurse frames at line
# 12 (the innermost at 9, its start, to 12) under main at line 18 (16 to 18 when innermost) under
# <module> at line 22.
import sys
import time


def recurse(x):
    if x == 0:
        return
    recurse(x - 1)


def main(seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        recurse(20)


print("ready", flush=True)
main(float(sys.argv[1]) if len(sys.argv) > 1 else 1e9)
