#!/usr/bin/env python3
"""What stack sampling costs the sampled program: a fixed amount of CPU work, timed by the program
itself, run bare and under each sampler. Two workloads: native (sample_target work, under
`mainboard profile run` and `perf record -g` at 99 and 999 Hz) and Python (bench/python_work.py on
one and two threads under `mainboard profile run` at 100 Hz: native frames only, Python frames read while
it runs (the default), with it paused for each read, on the wall clock). Runs are interleaved (in a
shuffled order each round) and the median of each is compared with the bare median of the same
run. For Python, also the reads
dropped as torn, per thousand.
For the Python work, also the program's CPU time for its work (slowed by what the profiler does
to its caches and by the interrupts it causes, not by time stopped) and the profiler's own CPU
time as a share of one CPU over the program's time: steadier than elapsed time on a noisy
machine.
Where the machine counts user-space instructions and cycles (`perf stat -e instructions:u,cycles:u`;
a virtual machine without a virtual PMU does not), the Python program runs under perf stat in every
configuration, bare included, and the target's own counts are compared: the steadiest measure of
what reading its stacks costs it (the ≤ 1 % of its cycles goal). Where it does not, the script
says so.
A third workload, where Debian's PyTorch is installed: a training loop (the tests' train_torch.py)
for a fixed time under `mainboard profile run` with each call graph: the steps it managed and the
profiler's own CPU (the run's CPU less the bare program's), so the default's cost can be weighed
against frame pointers'.
Usage: bench-sampling.py BUILD_DIR [ROUNDS] [native|python|torch]"""
import glob
import json
import os
import random
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile

build = sys.argv[1]
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 7
only = sys.argv[3] if len(sys.argv) > 3 else None
here = os.path.dirname(os.path.abspath(__file__))
mainboard = os.path.join(build, "src", "cli", "mainboard")
tmp = tempfile.mkdtemp()


def native_configs():
    target = os.path.join(build, "tests", "sample_target")
    work = ["work", "900"]  # about a second
    configs = {
        "bare": [target] + work,
        "mainboard 99 Hz": [mainboard, "profile", "run", "-o", "", "--hz", "99", "--", target] + work,
        "mainboard 999 Hz": [mainboard, "profile", "run", "-o", "", "--hz", "999", "--", target] + work,
        "mainboard 99 Hz dwarf": [mainboard, "profile", "run", "-o", "", "--hz", "99", "--call-graph", "dwarf", "--", target] + work,
    }
    perf = shutil.which("perf")
    if perf:
        data = os.path.join(tmp, "p.data")
        configs["perf record -F 99 -g"] = [perf, "record", "-q", "-F", "99", "-g", "-o", data, "--", target] + work
        configs["perf record -F 999 -g"] = [perf, "record", "-q", "-F", "999", "-g", "-o", data, "--", target] + work
        configs["perf record -F 99 --call-graph dwarf"] = [perf, "record", "-q", "-F", "99", "--call-graph", "dwarf", "-o", data, "--", target] + work
    return configs


COUNTED = ("instructions:u", "cycles:u")


def counters():
    """perf, where it can count this user's instructions and cycles; else None and why."""
    perf = shutil.which("perf")
    if not perf:
        return None, "perf is not installed"
    out = os.path.join(tmp, "probe.counts")
    subprocess.run([perf, "stat", "-x,", "-e", ",".join(COUNTED), "-o", out, "--", "/bin/true"],
                   capture_output=True, check=False)
    counts = read_counts(out)
    if len(counts) != len(COUNTED):
        return None, "perf stat says <not supported> for " + ", ".join(COUNTED) + \
            " (no hardware counters here: a virtual machine without a virtual PMU)"
    return perf, None


def read_counts(path):
    """{event: count} from perf stat -x, output; an event not counted is left out."""
    counts = {}
    try:
        lines = open(path).read().splitlines()
    except OSError:
        return counts
    for line in lines:
        fields = line.split(",")
        if len(fields) >= 3 and fields[2] in COUNTED and fields[0].isdigit():
            counts[fields[2]] = int(fields[0])
    return counts


def python_configs(threads, perf=None):
    rounds_of_work = str(300 // threads)  # about a second
    program = ["/usr/bin/python3", os.path.join(here, "..", "bench", "python_work.py"),
               rounds_of_work, str(threads)]
    if perf:  # the target alone counted, under each profiler as bare
        program = [perf, "stat", "-x,", "-e", ",".join(COUNTED), "-o",
                   os.path.join(tmp, "{config}-{round}.counts"), "--"] + program

    def run(name, *flags):
        return [mainboard, "profile", "run", "--hz", "100", "-o",
                os.path.join(tmp, f"{name}-{threads}-{{round}}.json"), *flags, "--"] + program

    configs = {
        "bare": program,
        "mainboard 100 Hz, native frames only": run("native", "--no-python"),
        "mainboard 100 Hz, Python frames": run("python"),
        "mainboard 100 Hz, Python frames, --pause": run("paused", "--pause"),
        "mainboard 100 Hz, Python frames, --wall": run("wall", "--wall"),
    }
    py_spy = shutil.which("py-spy")
    if py_spy:
        spy = [py_spy, "record", "-r", "100", "-o", os.path.join(tmp, "s.svg")]
        if perf:  # the Python program is perf stat's child
            spy.append("--subprocesses")
        configs["py-spy record -r 100"] = spy + ["--"] + program
        configs["py-spy record -r 100 --nonblocking"] = spy + ["--nonblocking", "--"] + program
    return configs


def children_cpu():
    u = resource.getrusage(resource.RUSAGE_CHILDREN)
    return u.ru_utime + u.ru_stime


def measure(title, configs):
    # Per run: the program's own elapsed time and CPU time for its work, and the CPU time of the
    # whole run (the profiler and the program) less the program's: the profiler's own CPU.
    times = {name: [] for name in configs}
    cpus = {name: [] for name in configs}
    others = {name: [] for name in configs}
    counts = {name: {e: [] for e in COUNTED} for name in configs}
    order = list(configs.items())
    for r in range(rounds):
        random.Random(r).shuffle(order)  # no configuration always first after another
        for name, argv in order:
            tag = str(list(configs).index(name))
            argv = [a.replace("{round}", str(r)).replace("{config}", tag) for a in argv]
            before = children_cpu()
            out = subprocess.run(argv, capture_output=True, text=True, check=False).stdout
            whole = children_cpu() - before
            line = [l.split() for l in out.splitlines() if l.startswith("elapsed ")]
            if line:
                times[name].append(float(line[0][1]))
                if len(line[0]) >= 4:
                    cpus[name].append(float(line[0][3]))
                    others[name].append(whole - float(line[0][3]))
            for event, count in read_counts(os.path.join(tmp, f"{tag}-{r}.counts")).items():
                counts[name][event].append(count)
    bare = statistics.median(times["bare"])
    bare_cpu = statistics.median(cpus["bare"]) if cpus["bare"] else None
    bare_other = statistics.median(others["bare"]) if others["bare"] else None
    print(f"{title:<44} {'median':>9} {'slowdown':>9}" +
          (f" {'its CPU':>9} {'profiler CPU':>13}" if bare_cpu else "") +
          f"   ({rounds} interleaved rounds)")
    for name, values in times.items():
        if not values:
            print(f"{name:<44} {'-':>9}")
            continue
        m = statistics.median(values)
        line = f"{name:<44} {m:>8.3f}s {100 * (m / bare - 1):>+8.2f}%"
        if bare_cpu and cpus[name]:
            c = statistics.median(cpus[name])
            # The profiler's CPU beyond what the program's start and end cost bare, as a share
            # of one CPU over the program's time.
            extra = statistics.median(others[name]) - bare_other
            line += f" {100 * (c / bare_cpu - 1):>+8.2f}% {100 * extra / m:>12.2f}%"
        for event in COUNTED:
            if counts[name][event] and counts["bare"][event]:
                change = statistics.median(counts[name][event]) / statistics.median(counts["bare"][event]) - 1
                line += f" {event} {100 * change:+.2f}%"
        print(line)


def torn_reads():
    # Reads that did not validate, from the profiles' "python: N of M stack reads" lines (a
    # profile says so only when it dropped some); the samples of the others stand for their reads.
    for mode in ("python", "wall"):
        dropped = reads = 0
        for path in glob.glob(os.path.join(tmp, mode + "-*.json")):
            profile = json.load(open(path))
            said = [re.match(r"python: (\d+) of (\d+) stack reads", u) for u in profile["unavailable"]]
            said = [m for m in said if m]
            if said:
                dropped += int(said[0].group(1))
                reads += int(said[0].group(2))
            else:
                reads += len(profile["samples"])
        if reads:
            print(f"torn Python reads dropped ({mode}): {dropped} of about {reads}"
                  f" ({1000 * dropped / reads:.1f} per thousand)")


def torch_measure():
    script = os.path.join(here, "..", "tests", "targets", "python", "train_torch.py")
    env = dict(os.environ, PYTHONPATH=os.path.join(build, "python"))
    program = ["/usr/bin/python3", script, "3"]  # trains for 3 seconds

    def run(graph):
        return [mainboard, "profile", "run", "-o", os.path.join(tmp, f"torch-{graph}.json"),
                "--call-graph", graph, "--"] + program

    configs = {"bare": program, "mainboard, --call-graph fp": run("fp"),
               "mainboard, --call-graph dwarf": run("dwarf")}
    steps = {name: [] for name in configs}
    cpu = {name: [] for name in configs}
    order = list(configs.items())
    for r in range(rounds):
        random.Random(r).shuffle(order)
        for name, argv in order:
            before = children_cpu()
            out = subprocess.run(argv, capture_output=True, text=True, env=env, check=False)
            whole = children_cpu() - before
            words = out.stdout.split()
            if out.returncode != 0 or not words:
                print(f"{name}: exit {out.returncode}: {out.stderr.strip()[-300:]}")
                return
            steps[name].append(int(words[-1]))
            cpu[name].append(whole)
    bare_steps, bare_cpu = statistics.median(steps["bare"]), statistics.median(cpu["bare"])
    print(f"{'PyTorch training loop, 3 s (train_torch.py)':<44} {'steps':>9} {'slowdown':>9}"
          f" {'profiler CPU':>13}   ({rounds} interleaved rounds)")
    extra = {}
    for name in configs:
        s_ = statistics.median(steps[name])
        extra[name] = statistics.median(cpu[name]) - bare_cpu
        print(f"{name:<44} {s_:>9.0f} {100 * (bare_steps / s_ - 1):>+8.2f}% {extra[name]:>12.2f}s")
    fp, dwarf = extra["mainboard, --call-graph fp"], extra["mainboard, --call-graph dwarf"]
    if fp > 0:
        print(f"profiler CPU, dwarf / fp: {dwarf / fp:.2f}x")


if only in (None, "native"):
    measure("native work (sample_target)", native_configs())
if only in (None, "python"):
    if only is None:
        print()
    # One thread leaves the other core to the profiler (as on most machines); two share both cores
    # of a 2-core machine with it.
    perf, why_not = counters()
    if why_not:
        print(f"the target's own instructions and cycles are not counted: {why_not}")
    measure("Python work on 1 thread (python_work.py)", python_configs(1, perf))
    print()
    measure("Python work on 2 threads", python_configs(2, perf))
    torn_reads()
if only in (None, "torch"):
    have_torch = subprocess.run(["/usr/bin/python3", "-c", "import torch"],
                                capture_output=True, check=False).returncode == 0
    if have_torch:
        print()
        torch_measure()
shutil.rmtree(tmp, ignore_errors=True)
