#!/usr/bin/env python3
"""PyTorch profiler traces: a job's trace directory merged, and one very large trace read.

    scripts/bench-traces.py BUILD [RANKS STEPS OPS BIG_MIB]     default 64 20 200 1024

1. RANKS Kineto traces (torch 2.x's shape: steps, operators with their CUDA launches, a kernel
   per operator, an NCCL all-reduce per step, distributedInfo), STEPS steps of OPS operators
   each, merged with `mainboard profile merge` (goal: under 10 s on 2 cores), next to reading
   the same files with Python's json.load alone (the first thing a notebook over them does).
2. One trace of BIG_MIB MiB read by `mainboard profile report --json`: its peak memory against
   the file's size (goal: under the file's own size: the trace is read event by event, never
   whole; a document of it in memory would take several times it).
Wall time and peak memory from wait4's rusage."""
import os
import subprocess
import sys
import tempfile
import time

build = sys.argv[1]
ranks, steps, ops, big_mib = (int(a) for a in (sys.argv[2:6] if len(sys.argv) > 5
                                                else (64, 20, 200, 1024)))
cli = os.path.join(build, "src", "cli", "mainboard")
python = "/usr/bin/python3"


def events(rank, steps, ops, pid, shift):
    """One rank's events as JSON text pieces, in the order Kineto writes them."""
    slow = 300 if rank == 5 else 0
    t = 1000.0 + shift
    for k in range(steps):
        step_len = ops * 30 + 2000 + 300
        yield ('{"ph":"X","cat":"user_annotation","name":"ProfilerStep#%d","pid":%d,"tid":%d,'
               '"ts":%.3f,"dur":%.3f,"args":{"External id":%d}}' % (k, pid, pid, t, step_len, k))
        yield ('{"ph":"X","cat":"user_annotation","name":"enumerate(DataLoader)#_MultiProcessing'
               'DataLoaderIter.__next__","pid":%d,"tid":%d,"ts":%.3f,"dur":%.3f,"args":{}}'
               % (pid, pid, t + 1, 900.0 + slow))
        o = t + 1000 + slow
        for i in range(ops):
            corr = k * 100000 + i
            yield ('{"ph":"X","cat":"cpu_op","name":"aten::op_%d","pid":%d,"tid":%d,"ts":%.3f,'
                   '"dur":20.0,"args":{"External id":%d,"Sequence number":%d,"Input Dims":'
                   '[[64,64],[64,64]]}}' % (i % 40, pid, pid, o, corr, corr))
            yield ('{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":%d,"tid":%d,'
                   '"ts":%.3f,"dur":5.0,"args":{"cbid":211,"correlation":%d,"External id":%d}}'
                   % (pid, pid, o + 2, corr, corr))
            yield ('{"ph":"X","cat":"kernel","name":"void kernel_%d<float>(float*, int)","pid":0,'
                   '"tid":7,"ts":%.3f,"dur":15.0,"args":{"device":0,"stream":7,"correlation":%d,'
                   '"registers per thread":64,"shared memory":0,"grid":[128,1,1],'
                   '"block":[256,1,1],"External id":%d}}' % (i % 40, o + 10, corr, corr))
            o += 30
        end = t + step_len - 100
        yield ('{"ph":"X","cat":"kernel","name":"ncclDevKernel_AllReduce_Sum_f32_RING_LL","pid":0,'
               '"tid":20,"ts":%.3f,"dur":%.3f,"args":{"device":0,"stream":20,"correlation":%d}}'
               % (o, end - o, k * 100000 + 99999))
        t += step_len + 50


def write_trace(path, rank, world, steps, ops):
    pid = 4000 + rank
    size = 0
    with open(path, "w") as f:
        head = ('{"schemaVersion":1,"deviceProperties":[],"distributedInfo":{"backend":"nccl",'
                '"rank":%d,"world_size":%d},"traceEvents":[' % (rank, world))
        f.write(head)
        first = True
        for e in events(rank, steps, ops, pid, shift=rank * 37.5):
            f.write(e if first else "," + e)
            size += len(e) + 1
            first = False
        f.write('],"baseTimeNanoseconds":1764979200000000000}\n')
    return size


def measured(argv):
    """(wall seconds, peak RSS bytes, exit status, stderr) of one command."""
    t = time.perf_counter()
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t
    return wall, usage.ru_maxrss * 1024, os.waitstatus_to_exitcode(status), p.stderr.read()


with tempfile.TemporaryDirectory() as work:
    d = os.path.join(work, "traces")
    os.mkdir(d)
    size = sum(write_trace(os.path.join(d, f"host{r}_{4000 + r}.1.pt.trace.json"), r, ranks,
                           steps, ops) for r in range(ranks))
    print(f"{ranks} Kineto traces of {steps} steps x {ops} operators (with their launches and "
          f"kernels): {size / 2**20:.0f} MiB")
    wall, rss, code, err = measured([cli, "profile", "merge", d, "-o", os.path.join(work, "j.json")])
    if code != 0:
        sys.exit(f"profile merge failed ({code}): {err}")
    loads = ("import json, os, sys\nd = sys.argv[1]\n"
             "for n in sorted(os.listdir(d)):\n    json.load(open(os.path.join(d, n)))\n")
    pwall, prss, pcode, perr = measured([python, "-c", loads, d])
    print(f"profile merge: {wall:.2f} s (goal <= 10 s: {wall / 10:.2f} of it), peak "
          f"{rss / 2**20:.0f} MiB; Python's json.load of the same files: {pwall:.2f} s, peak "
          f"{prss / 2**20:.0f} MiB: the merge takes {wall / pwall:.2f}x the time of reading them")
    print("  " + err.strip().splitlines()[-1][:240])
    for name in os.listdir(d):
        os.unlink(os.path.join(d, name))

    # One large trace, written in pieces.
    big = os.path.join(work, "big.pt.trace.json")
    per_step = sum(len(e) + 1 for e in events(0, 1, ops, 4000, 0))
    big_steps = max(1, big_mib * 2**20 // per_step)
    t = time.perf_counter()
    size = write_trace(big, 0, 1, big_steps, ops)
    print(f"one trace of {size / 2**20:.0f} MiB ({big_steps} steps; written in "
          f"{time.perf_counter() - t:.0f} s)")
    wall, rss, code, err = measured([cli, "profile", "report", big, "--json"])
    if code != 0:
        sys.exit(f"profile report failed ({code}): {err}")
    print(f"profile report --json of it: {wall:.1f} s ({size / 2**20 / wall:.0f} MiB/s), peak "
          f"{rss / 2**20:.0f} MiB: {rss / size:.2f} of the file's size (goal < 1)")
