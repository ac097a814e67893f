#!/usr/bin/env python3
"""What stack sampling costs the sampled program: a fixed amount of CPU work (sample_target work),
timed by the program itself, run bare, under `mainboard profile run` and under `perf record -g`
at 99 and 999 Hz. Runs are interleaved and the median of each is compared with the bare median
of the same run. Usage: bench-sampling.py BUILD_DIR [ROUNDS]"""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

build = sys.argv[1]
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 7
target = os.path.join(build, "tests", "sample_target")
mainboard = os.path.join(build, "src", "cli", "mainboard")
work = ["work", "900"]  # about a second
tmp = tempfile.mkdtemp()
configs = {
    "bare": [target] + work,
    "mainboard 99 Hz": [mainboard, "profile", "run", "-o", "", "--hz", "99", "--", target] + work,
    "mainboard 999 Hz": [mainboard, "profile", "run", "-o", "", "--hz", "999", "--", target] + work,
    "mainboard 99 Hz dwarf": [mainboard, "profile", "run", "-o", "", "--hz", "99", "--call-graph", "dwarf", "--", target] + work,
}
perf = shutil.which("perf")
if perf:
    configs["perf record -F 99 -g"] = [perf, "record", "-q", "-F", "99", "-g", "-o", os.path.join(tmp, "p.data"), "--", target] + work
    configs["perf record -F 999 -g"] = [perf, "record", "-q", "-F", "999", "-g", "-o", os.path.join(tmp, "p.data"), "--", target] + work
    configs["perf record -F 99 --call-graph dwarf"] = [perf, "record", "-q", "-F", "99", "--call-graph", "dwarf", "-o", os.path.join(tmp, "p.data"), "--", target] + work
times = {name: [] for name in configs}
for _ in range(rounds):
    for name, argv in configs.items():
        out = subprocess.run(argv, capture_output=True, text=True, check=False).stdout
        line = [l for l in out.splitlines() if l.startswith("elapsed ")]
        if line:
            times[name].append(float(line[0].split()[1]))
bare = statistics.median(times["bare"])
print(f"{'configuration':<38} {'median':>9} {'slowdown':>9}   (target's own time, {rounds} interleaved rounds)")
for name, values in times.items():
    if not values:
        print(f"{name:<38} {'-':>9}")
        continue
    m = statistics.median(values)
    print(f"{name:<38} {m:>8.3f}s {100 * (m / bare - 1):>+8.2f}%")
shutil.rmtree(tmp, ignore_errors=True)
