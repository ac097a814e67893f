#!/usr/bin/env python3
"""Merging a large job's rank profiles: RANKS profiles of SPANS spans and SAMPLES stack samples
each (a training step of four phases, a Python-and-native stack per sample), merged with
`mainboard profile merge`, then the merged profile's `profile report`; wall time and peak memory
of each (from wait4's rusage), against the goals.

    scripts/bench-merge.py BUILD [RANKS SPANS SAMPLES]     default 512 10000 5000
"""
import json
import os
import subprocess
import sys
import tempfile
import time

build = sys.argv[1]
ranks, spans, samples = (int(a) for a in (sys.argv[2:5] if len(sys.argv) > 4 else (512, 10000, 5000)))
cli = os.path.join(build, "src", "cli", "mainboard")
MS = 1_000_000
PHASES = ["data", "forward", "backward", "optimizer"]


def rank_file(rank):
    """The JSON text of one rank's profile (built as text: json.dumps of 512 of them is slow)."""
    start = 10_000_000_000 + rank * 1000
    per_step = len(PHASES) + 1
    steps = spans // per_step
    span_rows, t = [], start
    stats = {p: [0, 0] for p in ["step"] + [f"step/{p}" for p in PHASES]}
    for k in range(steps):
        s0 = t
        rows = []
        for i, ph in enumerate(PHASES):
            d = (2 + i) * MS + (rank % 7) * 1000 + (3 * MS if rank == 5 and ph == "data" else 0)
            rows.append(f"[{i + 1},0,{t},{t + d}]")
            stats[f"step/{ph}"][0] += 1
            stats[f"step/{ph}"][1] += d
            t += d
        span_rows.append(f"[0,0,{s0},{t}]")
        span_rows.extend(rows)
        stats["step"][0] += 1
        stats["step"][1] += t - s0
    paths = list(stats)
    span_stats = ",".join(
        json.dumps({"path": p, "name": p.split("/")[-1], "calls": c, "total_ns": tot,
                    "self_ns": tot, "min_ns": 0, "max_ns": 0}) for p, (c, tot) in stats.items())
    frames = ",".join(
        json.dumps({"function": f"fn_{i}", "module": "[python]" if i < 20 else "libtorch_cpu.so",
                    "file": f"train_{i % 5}.py" if i < 20 else "", "line": i, "inlined": False})
        for i in range(60))
    stacks = ",".join("[" + ",".join(str((j * 7 + d) % 60) for d in range(24)) + "]"
                      for j in range(400))
    sample_rows = ",".join(f"[{start + i * 10 * MS},{i % 2},{(i * 13) % 400}]"
                           for i in range(samples))
    doc = (
        '{"schema_version":7,"pid":%d,"command":"python3","start_ns":%d,"end_ns":%d,'
        '"paths":%s,"span_stats":[%s],"spans":[%s],"dropped_spans":0,'
        '"threads":[{"index":0,"tid":%d,"name":"MainThread","process":0},'
        '{"index":1,"tid":%d,"name":"pt_autograd_0","process":0}],'
        '"device_samples":[],"activity_names":[],"activities":[],"dropped_activities":0,'
        '"counters":[],"frames":[%s],"stacks":[%s],"samples":[%s],"sample_hz":99,'
        '"span_clock":"tsc","span_clock_hz":null,"lost_samples":0,"unavailable":[],'
        '"function_maps":[],"machine":null,"node":"n%d",'
        '"rank":{"rank":%d,"local_rank":%d,"world_size":%d,"job_id":"1","source":"RANK"},'
        '"clock":{"monotonic_ns":%d,"realtime_ns":%d,"uncertainty_ns":100,"boot_id":"b%d"},'
        '"written_by":"%s","processes":[]}'
    ) % (1000 + rank, start, t, json.dumps(paths), span_stats, ",".join(span_rows), 1000 + rank,
         2000 + rank, frames, stacks, sample_rows, rank // 8, rank, rank % 8, ranks, start,
         1_700_000_000 * 10**9 + start, rank // 8, version)
    return doc


def measured(argv):
    """(wall seconds, peak RSS bytes, exit status, stderr) of one command."""
    t = time.perf_counter()
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t
    err = p.stderr.read()
    return wall, usage.ru_maxrss * 1024, os.waitstatus_to_exitcode(status), err


version = subprocess.run([cli, "--version"], capture_output=True, text=True).stdout.split()[-1]
with tempfile.TemporaryDirectory() as work:
    rank_dir = os.path.join(work, "ranks")
    os.mkdir(rank_dir)
    t = time.perf_counter()
    size = 0
    for r in range(ranks):
        text = rank_file(r)
        size += len(text)
        with open(os.path.join(rank_dir, f"rank-{r:05}.json"), "w") as f:
            f.write(text)
    print(f"{ranks} rank profiles of {spans} spans and {samples} samples: "
          f"{size / 2**20:.0f} MiB of JSON (written in {time.perf_counter() - t:.1f} s)")
    job = os.path.join(work, "job.json")
    wall, rss, code, err = measured([cli, "profile", "merge", rank_dir, "-o", job])
    if code != 0:
        sys.exit(f"profile merge failed ({code}): {err}")
    print(f"profile merge: {wall:.2f} s (goal <= 10 s: {wall / 10:.2f} of it), "
          f"peak {rss / 2**30:.2f} GiB (goal <= 4 GiB), "
          f"merged file {os.path.getsize(job) / 2**20:.0f} MiB")
    print("  " + err.strip().splitlines()[-1])
    wall, rss, code, err = measured([cli, "profile", "report", job])
    if code != 0:
        sys.exit(f"profile report failed ({code}): {err}")
    print(f"profile report of the merged profile: {wall:.2f} s (goal <= 2 s: {wall / 2:.2f} of "
          f"it), peak {rss / 2**30:.2f} GiB")
    wall, rss, code, err = measured([cli, "profile", "report", job, "--json"])
    print(f"profile report --json: {wall:.2f} s, peak {rss / 2**30:.2f} GiB")
