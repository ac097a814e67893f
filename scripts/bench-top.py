#!/usr/bin/env python3
"""The cost of `mainboard top`, beside a poller of the same readings as nvitop and glances take
them (psutil: every CPU's use, memory, swap, and every process's CPU share, memory, user, start
time and command line), both at one reading a second for the same number of readings, side by
side in one run. Each one's CPU time (user + system, from the kernel's account of the child)
over its wall time is its share of one CPU.

    bench-top.py BUILD_DIR [--seconds N] [--interval S]

`mainboard top` runs as `--json --all` (every process, its whole frame written a line a second,
no terminal to draw on); with the fake NVIDIA library's eight GPUs where it was built, once more
with them.
"""
import argparse
import os
import pathlib
import resource
import subprocess
import sys
import time

POLLER = r"""
import sys, time, psutil
interval, count = float(sys.argv[1]), int(sys.argv[2])
attrs = ["pid", "ppid", "username", "cpu_percent", "memory_info", "create_time", "cmdline",
         "num_threads"]
for i in range(count):
    psutil.cpu_percent(percpu=True)
    psutil.virtual_memory()
    psutil.swap_memory()
    psutil.getloadavg()
    rows = [p.info for p in psutil.process_iter(attrs)]
    sys.stdout.write(f"{len(rows)}\n")
    sys.stdout.flush()
    if i + 1 < count:
        time.sleep(interval)
"""


def timed(argv, env=None):
    """Runs argv to its end: (wall seconds, CPU seconds of the child, its output)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    out = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                         check=True).stdout
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--seconds", type=int, default=30)
    ap.add_argument("--interval", type=float, default=1.0)
    a = ap.parse_args()
    build = pathlib.Path(a.build).resolve()
    cli = str(build / "src/cli/mainboard")
    count = max(2, int(a.seconds / a.interval))
    try:
        import psutil  # noqa: F401
    except ImportError:
        print("skip: no psutil (python3-psutil)")
        return 0

    rows = []
    wall, cpu, out = timed([cli, "top", "--json", "--all", "--interval", str(a.interval),
                            "--count", str(count)])
    rows.append(("mainboard top --json --all", wall, cpu, len(out.splitlines())))
    wall, cpu, out = timed([sys.executable, "-c", POLLER, str(a.interval), str(count)])
    rows.append(("psutil poller (nvitop's way)", wall, cpu, len(out.splitlines())))
    nvml = build / "tests/fakes/fake_nvml/libnvidia-ml.so.1"
    scenario = pathlib.Path(__file__).resolve().parent.parent / "tests/fixtures/gpus/h100x8.json"
    if nvml.exists() and scenario.exists():
        env = dict(os.environ, MAINBOARD_NVML_LIBRARY=str(nvml),
                   MAINBOARD_FAKE_GPU_SCENARIO=str(scenario))
        wall, cpu, out = timed([cli, "top", "--json", "--all", "--interval", str(a.interval),
                                "--count", str(count)], env)
        rows.append(("mainboard top, 8 fake GPUs", wall, cpu, len(out.splitlines())))

    print(f"{count} readings, one every {a.interval:g} s; share of one CPU = CPU time / wall time")
    print(f"{'':32} {'wall s':>8} {'CPU s':>8} {'% of a CPU':>11} {'readings':>9}")
    for name, wall, cpu, n in rows:
        print(f"{name:32} {wall:8.2f} {cpu:8.3f} {100 * cpu / wall:10.2f}% {n:9}")
    top, poller = rows[0], rows[1]
    print(f"mainboard top's CPU time over the poller's: {top[2] / poller[2]:.2f}x "
          f"(goal for top: at most 1 % of a CPU at 1 s: {100 * top[2] / top[1]:.2f} %)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
