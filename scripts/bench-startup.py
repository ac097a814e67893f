#!/usr/bin/env python3
"""Start-up and a warm `snapshot --json` next to /bin/true, started in turn (interleaved) rather
than one command's runs after another's: on a noisy machine the hour changes between two blocks
of runs, and a ratio taken across them says more about the hour than about the command. Each
round starts /bin/true, then each given command's `--version` and `snapshot --json` (a warm tool
cache of their own), and times it from spawn to exit; medians are compared, with each command's
page faults (the kernel's count for the child: a fault costs about 10 us on a VM).
Usage: bench-startup.py ROUNDS MAINBOARD [PREVIOUS_MAINBOARD ...]"""
import os
import statistics
import sys
import tempfile
import time


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    rounds = int(sys.argv[1])
    binaries = sys.argv[2:]
    devnull = os.open(os.devnull, os.O_WRONLY)
    commands = [("/bin/true", ["/bin/true"], None)]
    caches = []
    for i, binary in enumerate(binaries):
        cache = tempfile.TemporaryDirectory()
        caches.append(cache)
        env = dict(os.environ, XDG_CACHE_HOME=cache.name)
        name = "mainboard" if i == 0 else f"previous {i}"
        commands.append((f"{name} --version", [binary, "--version"], env))
        commands.append((f"{name} snapshot --json (warm)", [binary, "snapshot", "--json"], env))
    times = {name: [] for name, _, _ in commands}
    faults = {name: [] for name, _, _ in commands}
    warmup = 10  # fills the tool caches and the page cache
    for r in range(rounds + warmup):
        for name, argv, env in commands:
            start = time.perf_counter_ns()
            pid = os.posix_spawn(argv[0], argv, env or os.environ,
                                 file_actions=[(os.POSIX_SPAWN_DUP2, devnull, 1)])
            _, _, usage = os.wait4(pid, 0)
            if r >= warmup:
                times[name].append(time.perf_counter_ns() - start)
                faults[name].append(usage.ru_minflt + usage.ru_majflt)
    base = statistics.median(times["/bin/true"])
    goals = {"--version": 1.5, "snapshot": 3.0}
    for name, _, _ in commands:
        m = statistics.median(times[name])
        goal = next((f"; goal <= {g}x" for k, g in goals.items()
                     if k in name and name.startswith("mainboard")), "")
        print(f"{name}: {m / 1e6:.2f} ms, {m / base:.2f}x /bin/true{goal}; "
              f"{statistics.median(faults[name]):.0f} page faults")
    print(f"({rounds} rounds, medians; /bin/true {base / 1e6:.2f} ms)")


if __name__ == "__main__":
    main()
