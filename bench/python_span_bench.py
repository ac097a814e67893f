#!/usr/bin/env python3
"""What a span costs from Python, next to contextlib.nullcontext, in one run; the import time;
and Machine().snapshot() next to the command's. Run with the build tree's package on PYTHONPATH
(scripts/run-benchmarks.sh does).

    python_span_bench.py [CLI]
"""

import asyncio
import contextlib
import json
import os
import subprocess
import sys
import time
import timeit

ROUNDS = 7
NUMBER = 200_000


def per_call(stmt, setup_globals):
    best = min(timeit.repeat(stmt, globals=setup_globals, number=NUMBER, repeat=ROUNDS))
    return best / NUMBER * 1e9


def main():
    started = time.perf_counter()
    import mainboard  # noqa: E402  (timed)
    import_ms = (time.perf_counter() - started) * 1e3
    # A fresh interpreter, too: what a user's `import mainboard` costs.
    fresh = subprocess.run([sys.executable, "-X", "importtime", "-c", "import mainboard"],
                           capture_output=True, text=True, check=True).stderr
    total_us = max(int(line.split("|")[1]) for line in fresh.splitlines()
                   if line.strip().endswith("mainboard"))
    g = {"mainboard": mainboard, "contextlib": contextlib}
    null = per_call("with contextlib.nullcontext(): pass", g)
    dormant = per_call('with mainboard.span("x"): pass', g)
    with mainboard.Profiler(features=mainboard.Feature.SPANS, max_spans=0):
        active = per_call('with mainboard.span("x"): pass', g)

        async def in_task():  # the same span inside an asyncio task (a track per task)
            return per_call('with mainboard.span("x"): pass', g)
        in_task_ns = asyncio.run(in_task())
    print(f"with contextlib.nullcontext(): pass   {null:7.1f} ns")
    print(f"with mainboard.span('x'), no session  {dormant:7.1f} ns  ({dormant / null:.2f}x nullcontext)")
    print(f"with mainboard.span('x'), in session  {active:7.1f} ns  ({active / null:.2f}x nullcontext)")
    print(f"same, inside an asyncio task          {in_task_ns:7.1f} ns  ({in_task_ns / null:.2f}x nullcontext)")
    print(f"import mainboard                      {total_us / 1e3:7.1f} ms (fresh interpreter, -X importtime)")
    if len(sys.argv) > 1:
        cli = sys.argv[1]
        m = mainboard.Machine()
        m.snapshot()  # identity and the toolchain cache, as a warm command has them
        py = min(timeit.repeat(lambda: m.snapshot(), number=1, repeat=15)) * 1e3
        runs = []
        for _ in range(15):
            t0 = time.perf_counter()
            subprocess.run([cli, "snapshot", "--json"], capture_output=True, check=True)
            runs.append((time.perf_counter() - t0) * 1e3)
        print(f"Machine().snapshot() (warm)           {py:7.1f} ms   mainboard snapshot --json: "
              f"{min(runs):.1f} ms (a new process each time)")


if __name__ == "__main__":
    main()
