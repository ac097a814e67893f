#!/usr/bin/env python3
"""The size and time of the pictures of large profiles: 100 000 samples, a 10-minute 99 Hz
profile of 8 threads (475 200 samples) and a 1 M-sample one, each over 20 000 distinct stacks 10
to 60 frames deep drawn from 3 000 functions (native and Python), written by `profile report
--html --svg`; and how fast the 100 000-sample page opens and switches views in headless
Chromium (bench/page_timing.mjs, with the browser checks' puppeteer-core, installed on first use).
    bench-pictures.py BUILD_DIR"""
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

build = sys.argv[1]
cli = os.path.join(build, "src", "cli", "mainboard")
rng = random.Random(7)


def profile(samples, threads=8, stacks=20000, functions=3000):
    frames = []
    for i in range(functions):
        if i % 3 == 0:
            frames.append({"function": f"step_{i}", "module": "[python]", "file": f"/app/mod{i % 40}.py",
                           "line": i % 500 + 1, "inlined": False})
        else:
            frames.append({"function": f"ns::Kernel<{i}>::run(float const*, int)", "module": f"libwork{i % 12}.so",
                           "file": "", "line": 0, "inlined": False})
    # Stacks share their roots as real programs do: each extends a shorter one.
    table = [[rng.randrange(functions) for _ in range(10)]]
    while len(table) < stacks:
        base = rng.choice(table[-200:] if len(table) > 200 else table)
        keep = rng.randrange(5, len(base) + 1)
        grown = base[:keep] + [rng.randrange(functions) for _ in range(rng.randrange(1, 8))]
        table.append(grown[:60])
    rows = [[i * 1_000_000 // 99 * 8 + t, t, rng.randrange(stacks)] for i in range(samples // threads)
            for t in range(threads)]
    empty = {"paths": [], "span_stats": [], "spans": [], "device_samples": [], "activity_names": [],
             "activities": [], "counters": [], "function_maps": [], "unavailable": [],
             "processes": [], "dropped_spans": 0, "dropped_activities": 0, "lost_samples": 0,
             "span_clock": "", "span_clock_hz": None, "machine": None, "node": "bench",
             "rank": None, "clock": None, "written_by": ""}
    return {**empty, "schema_version": 7, "pid": 42, "command": "train", "start_ns": 0,
            "end_ns": rows[-1][0] + 1, "sample_hz": 99,
            "threads": [{"index": t, "tid": 100 + t, "name": f"worker{t}", "process": 0}
                        for t in range(threads)],
            "frames": frames, "stacks": [list(reversed(s)) for s in table], "samples": rows}

def page_in_browser(html):
    """The page's open and view-switch times in headless Chromium (goal: each under 1 s)."""
    source = os.path.dirname(os.path.abspath(__file__)) + "/.."
    work = os.path.abspath(os.path.join(build, "tests", "js"))
    if not os.path.exists("/usr/bin/chromium") or not shutil.which("node"):
        print("  the page in a browser: no chromium or node here")
        return
    install = subprocess.run([os.path.join(source, "tests", "js", "install.sh"),
                              os.path.join(source, "tests", "js"), work], capture_output=True, text=True)
    if install.returncode != 0:
        print("  the page in a browser: puppeteer-core not installed: " + install.stderr.strip())
        return
    shutil.copy(os.path.join(source, "bench", "page_timing.mjs"), os.path.join(work, "page_timing.mjs"))
    timing = subprocess.run(["node", "page_timing.mjs", html], capture_output=True,
                            text=True, cwd=work)
    print("  the page in headless Chromium (goal: each under 1 s): " +
          (timing.stdout.strip() or timing.stderr.strip()))


with tempfile.TemporaryDirectory() as tmp:
    for label, n in (("100 000 samples, 8 threads", 100_000), ("10 min at 99 Hz, 8 threads", 475_200),
                     ("1 M samples, 8 threads", 1_000_000)):
        path = os.path.join(tmp, "p.json")
        with open(path, "w") as f:
            json.dump(profile(n), f)
        html, svg = os.path.join(tmp, "p.html"), os.path.join(tmp, "p.svg")
        start = time.monotonic()
        subprocess.run([cli, "profile", "report", path, "--html", html, "--svg", svg], check=True,
                       stdout=subprocess.DEVNULL)
        took = time.monotonic() - start
        print(f"{label}: profile {os.path.getsize(path) / 2**20:.1f} MiB -> HTML "
              f"{os.path.getsize(html) / 2**20:.2f} MiB (goal <= 2 MiB), SVG "
              f"{os.path.getsize(svg) / 2**20:.2f} MiB; report + both pictures {took:.2f} s")
        if n == 100_000:
            page_in_browser(html)
