#!/usr/bin/env python3
"""`--pprof` read by Go's own pprof (Debian's golang-go): what `go tool pprof -top` says of the
profile agrees with what `mainboard profile report --json` says of the same run.

    pprof_test.py MAINBOARD FIXTURES

1. A Python program sampled by `mainboard profile run --pprof`: each function's samples as the
   leaf (flat) and on the stack (cum) are the report's self and total samples.
2. A PyTorch profiler trace (`profile report TRACE --pprof`): each operator's flat time is the
   self time of the span paths it ends, its cum the time of every path it is on.
3. A merged job of two traces (`profile merge --pprof`): the same, over both ranks.
`go tool pprof -raw` must read every file too. Exit 0 when all holds, 1 when not, 77 without Go."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

MB, FIXTURES = sys.argv[1], sys.argv[2]
TORCH2 = os.path.join(FIXTURES, "traces", "torch2")
failed = []

SPIN = """
import time
def inner(n):
    s = 0
    for i in range(n):
        s += i * i
    return s
def outer(seconds):
    t = time.process_time() + seconds
    while time.process_time() < t:
        inner(20000)
outer(1.0)
"""


def check(what, ok, detail=""):
    print(("ok: " if ok else "FAIL: ") + what + ("" if ok else f"\n  {detail}"), flush=True)
    if not ok:
        failed.append(what)


def run(argv, **kw):
    return subprocess.run(argv, capture_output=True, text=True, timeout=300, **kw)


def pprof_top(path, env, index, unit=None):
    """{function: (flat, cum)} as `go tool pprof -top` prints them."""
    argv = ["go", "tool", "pprof", "-symbolize=none", f"-sample_index={index}", "-top",
            "-nodecount=100000", "-nodefraction=0", "-edgefraction=0"]
    argv += ([f"-unit={unit}"] if unit else []) + [path]
    r = run(argv, env=env)
    check(f"go tool pprof -top reads {os.path.basename(path)}", r.returncode == 0, r.stderr)
    rows = {}
    started = False
    for line in r.stdout.splitlines():
        if line.split()[:5] == ["flat", "flat%", "sum%", "cum", "cum%"]:
            started = True
            continue
        if not started or not line.strip():
            continue
        m = re.match(r"\s*(\S+)\s+\S+%\s+\S+%\s+(\S+)\s+\S+%\s+(.*)$", line)
        if m:
            number = lambda s: float(re.sub(r"[a-z]+$", "", s))
            rows[m.group(3)] = (number(m.group(1)), number(m.group(2)))
    r = run(["go", "tool", "pprof", "-symbolize=none", "-raw", path], env=env)
    check(f"go tool pprof -raw reads {os.path.basename(path)}",
          r.returncode == 0 and "Samples:" in r.stdout and "Locations" in r.stdout,
          r.stderr[-2000:])
    return rows


def compare_spans(report_stats, top, where):
    """Span paths' self time against pprof's per-name flat and cum (nanoseconds)."""
    flat, cum = {}, {}
    for s in report_stats:
        names = s["path"].split("/")
        flat[names[-1]] = flat.get(names[-1], 0) + s["self_ns"]
        for n in set(names):
            cum[n] = cum.get(n, 0) + s["self_ns"]
    wrong = [(n, flat[n], cum[n], top.get(n)) for n in flat
             if n not in top or abs(top[n][0] - flat[n]) > 1 or abs(top[n][1] - cum[n]) > 1]
    check(f"{where}: every operator's flat and cum time is the report's ({len(flat)} names)",
          not wrong and len(top) == len(flat), wrong[:5])


def main():
    if shutil.which("go") is None:
        print("skipped: Go (golang-go) is not installed")
        return 77
    with tempfile.TemporaryDirectory() as work:
        env = dict(os.environ, GOCACHE=os.path.join(work, "gocache"), HOME=work,
                   PPROF_TMPDIR=work, GOFLAGS="-mod=mod", GOTOOLCHAIN="local")
        # 1. Stack samples of a Python program.
        prog = os.path.join(work, "spin.py")
        with open(prog, "w") as f:
            f.write(SPIN)
        profile, pb = os.path.join(work, "spin.json"), os.path.join(work, "spin.pb.gz")
        r = run([MB, "profile", "run", "-o", profile, "--pprof", pb, "--quiet", "--",
                 "/usr/bin/python3", prog])
        check("profile run --pprof exits 0", r.returncode == 0, r.stderr[-2000:])
        with open(pb, "rb") as f:
            check("the pprof file is gzipped", f.read(2) == b"\x1f\x8b")
        rep = json.loads(run([MB, "profile", "report", profile, "--json", "--top", "100000"]).stdout)
        top = pprof_top(pb, env, "samples")
        names = {}
        for fn in rep["hot_functions"]:
            names.setdefault(fn["function"], []).append(fn)
        unique = {n: v[0] for n, v in names.items() if len(v) == 1}
        wrong = [(n, (f["self_samples"], f["total_samples"]), top.get(n))
                 for n, f in unique.items()
                 if top.get(n) != (f["self_samples"], f["total_samples"])]
        check(f"samples: each function's flat and cum are its self and total samples "
              f"({len(unique)} functions)", not wrong and "inner" in unique, wrong[:5])
        # Which function is hottest is the sampler's measure, not pprof's (a loaded machine moves
        # it); that inner() is there with samples of its own is pprof's reading of the file.
        check("samples: inner() is there with samples of its own", top.get("inner", (0,))[0] > 0,
              sorted(top.items(), key=lambda kv: -kv[1][0])[:3])
        total = sum(v[0] for v in top.values())
        check("samples: pprof counts every sample", total == rep["samples"],
              f"{total} against {rep['samples']}")

        # 2. A PyTorch profiler trace: its operator time.
        trace = os.path.join(TORCH2, "host0_4242.1764979223123.pt.trace.json")
        pb2 = os.path.join(work, "trace.pb.gz")
        r = run([MB, "profile", "report", trace, "--pprof", pb2, "--json", "--top", "100000"])
        check("profile report TRACE --pprof exits 0", r.returncode == 0, r.stderr)
        compare_spans(json.loads(r.stdout)["stats"], pprof_top(pb2, env, "time", "ns"),
                      "a trace")

        # 3. A merged job of two traces, one gzipped.
        job, pb3 = os.path.join(work, "job.json"), os.path.join(work, "job.pb.gz")
        r = run([MB, "profile", "merge", TORCH2, "-o", job, "--pprof", pb3])
        check("profile merge --pprof exits 0", r.returncode == 0, r.stderr)
        r = run([MB, "profile", "report", job, "--json", "--top", "100000"])
        compare_spans(json.loads(r.stdout)["stats"], pprof_top(pb3, env, "time", "ns"),
                      "a merged job")
    print("FAILED: " + ", ".join(failed) if failed else "all passed")
    return 1 if failed else 0


sys.exit(main())
