#!/usr/bin/env python3
"""A distributed job profiled rank by rank, merged, and its straggler named.

    job_test.py MAINBOARD PYTHONPATH local    three ranks of a DDP training (PyTorch, gloo) under
                                              torchrun's variables, set here, one rank slowed
    job_test.py MAINBOARD PYTHONPATH slurm    the same through `mainboard fleet profile` on the
                                              project's Slurm (SLURM_CONF set by the caller; its
                                              node names in the file `nodes` beside it)
    job_test.py MAINBOARD PYTHONPATH crash    ranks that die: one's program is killed, one rank's
                                              mainboard itself; the merge says who is missing
    job_test.py MAINBOARD PYTHONPATH traces   three ranks on the project's Slurm profiled by
                                              torch.profiler alone (tensorboard_trace_handler, one
                                              rank's data loading slowed); the trace directory
                                              merged, checked against the traces' own figures

Exit 0 when every check holds, 1 when one does not, 77 when PyTorch is not installed."""
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

MB, PYTHONPATH, MODE = sys.argv[1], sys.argv[2], sys.argv[3]
HERE = os.path.dirname(os.path.abspath(__file__))
TRAIN = os.path.join(HERE, "..", "targets", "python", "ddp_train.py")
TORCH_TRAIN = os.path.join(HERE, "..", "targets", "python", "ddp_torch_profiler.py")
PY = "/usr/bin/python3"
WORLD, SLOW, DELAY, STEPS = 3, 1, 0.2, 10
failed = []


def check(what, ok, detail=""):
    print(("ok: " if ok else "FAIL: ") + what + ("" if ok else f"\n  {detail}"), flush=True)
    if not ok:
        failed.append(what)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def base_env():
    env = {k: v for k, v in os.environ.items()
           if k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK") and not k.startswith("SLURM_")
           or k == "SLURM_CONF"}
    env.update(PYTHONPATH=PYTHONPATH, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port()),
               GLOO_SOCKET_IFNAME="lo", SLOW_RANK=str(SLOW), DELAY_S=str(DELAY),
               STEPS=str(STEPS), MAINBOARD_LOG="error", OMP_NUM_THREADS="1")
    return env


def start_ranks(out, args, **variables):
    """WORLD ranks of `python3 ARGS` under `mainboard profile run -o OUT/`, each with torchrun's
    RANK and WORLD_SIZE and `variables` (a value of None: the rank's number), in a session of
    its own (so that a test can kill one rank's whole group)."""
    procs, common = [], base_env()  # one MASTER_PORT for all
    for r in range(WORLD):
        env = dict(common, RANK=str(r), WORLD_SIZE=str(WORLD),
                   **{k: str(r) if v is None else v for k, v in variables.items()})
        procs.append(subprocess.Popen([MB, "profile", "run", "-o", out + "/", "--quiet", "--", PY,
                                       *args], env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True, start_new_session=True))
    return procs


def run(argv, **kw):
    return subprocess.run(argv, capture_output=True, text=True, timeout=300, **kw)


def merged_report(out_dir, work):
    job = os.path.join(work, "job.json")
    trace = os.path.join(work, "job.trace.json")
    m = run([MB, "profile", "merge", out_dir, "-o", job, "--perfetto", trace])
    check("profile merge exits 0", m.returncode == 0, m.stderr)
    r = run([MB, "profile", "report", job, "--json"])
    check("profile report --json exits 0", r.returncode == 0, r.stderr)
    text = run([MB, "profile", "report", job]).stdout
    return m, json.loads(r.stdout) if r.returncode == 0 else {}, text, trace


def check_straggler(report, text, trace, where):
    ranks = report.get("ranks", {})
    s = ranks.get("straggler") or {}
    injected = DELAY * STEPS * 1e9
    print(f"  {where}: {ranks.get('verdict')}")
    check(f"{where}: the straggler is rank {SLOW}", s.get("rank") == SLOW, ranks.get("verdict"))
    check(f"{where}: its phase is data loading",
          s.get("phase") == "step/data" and s.get("phase_kind") == "data loading", s)
    check(f"{where}: the others wait in the backward pass (DDP's all-reduce)",
          s.get("wait_phase") == "step/backward", s)
    check(f"{where}: its lag is the delay injected, within 20 %",
          abs(s.get("lag_ns", 0) - injected) <= 0.2 * injected,
          f"lag {s.get('lag_ns', 0) / 1e9:.3f} s, injected {injected / 1e9:.3f} s")
    check(f"{where}: the others' wait is the delay injected, within 20 %",
          abs(s.get("others_wait_ns", 0) - injected) <= 0.2 * injected,
          f"wait {s.get('others_wait_ns', 0) / 1e9:.3f} s, injected {injected / 1e9:.3f} s")
    others = [r for r in ranks.get("ranks", []) if r["rank"] != SLOW]
    check(f"{where}: the waiting ranks point at it",
          len(others) == WORLD - 1 and all(r.get("waits_for") == SLOW for r in others),
          ranks.get("ranks"))
    check(f"{where}: slowest in most steps", s.get("slowest_steps", 0) >= STEPS * 0.8, s)
    first = text.splitlines()[0] if text else ""
    check(f"{where}: the report's first line names it",
          first.startswith(f"rank {SLOW} ") and "holds the job back" in first, first)
    with open(trace) as f:
        events = json.load(f)["traceEvents"]
    names = sorted(e["args"]["name"] for e in events
                   if e.get("ph") == "M" and e.get("name") == "process_name"
                   and e["args"]["name"].startswith("rank "))
    check(f"{where}: the trace has a process per rank",
          [n.split(" (")[0] for n in names] == [f"rank {r}" for r in range(WORLD)], names)


def local():
    with tempfile.TemporaryDirectory() as work:
        out = os.path.join(work, "profiles")
        procs = start_ranks(out, [TRAIN], LOCAL_RANK=None, TORCHELASTIC_RUN_ID="job-1")
        outs = [p.communicate(timeout=300) for p in procs]
        for r, (p, (o, e)) in enumerate(zip(procs, outs)):
            check(f"rank {r} trained and exited 0", p.returncode == 0 and f"rank {r}:" in o,
                  f"exit {p.returncode}: {o} {e[-2000:]}")
        files = sorted(os.listdir(out))
        check("one profile per rank", files == [f"rank-{r:05}.json" for r in range(WORLD)], files)
        m, report, text, trace = merged_report(out, work)
        check_straggler(report, text, trace, "torchrun variables")


def slurm():
    with tempfile.TemporaryDirectory(dir=os.environ.get("MAINBOARD_SHARED_TMP")) as work:
        out = os.path.join(work, "profiles")
        f = run([MB, "fleet", "profile", "--nodes", str(WORLD), "--ntasks", str(WORLD), "-o", out,
                 "--", PY, TRAIN], env=base_env())
        check("fleet profile exits 0", f.returncode == 0, f.stderr[-3000:])
        check("every rank trained", all(f"rank {r}:" in f.stdout for r in range(WORLD)),
              f.stdout[-2000:])
        check("it says how to merge", "mainboard profile merge " + out in f.stderr, f.stderr)
        files = sorted(os.listdir(out)) if os.path.isdir(out) else []
        check("one profile per rank", files == [f"rank-{r:05}.json" for r in range(WORLD)], files)
        nodes = set()
        for name in files:
            with open(os.path.join(out, name)) as fh:
                p = json.load(fh)
            nodes.add(p.get("node"))
            check(f"{name} says its rank and job",
                  (p.get("rank") or {}).get("source") == "SLURM_PROCID"
                  and (p.get("rank") or {}).get("job_id"), p.get("rank"))
        m, report, text, trace = merged_report(out, work)
        check_straggler(report, text, trace, "fleet profile")
        # Ended mid-run (scancel, a time limit, Ctrl-C): every rank still keeps its profile.
        stopped = os.path.join(work, "stopped")
        p = subprocess.Popen([MB, "fleet", "profile", "--nodes", str(WORLD), "--ntasks",
                              str(WORLD), "-o", stopped, "--", "sleep", "60"], env=base_env(),
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        deadline = time.time() + 60
        while time.time() < deadline and subprocess.run(
                ["squeue", "--steps", "--noheader", "--format=%j"], capture_output=True,
                text=True).stdout.count("mainboard-profile-") == 0:
            time.sleep(0.2)
        time.sleep(1)
        t = time.time()
        p.send_signal(signal.SIGTERM)
        _, err = p.communicate(timeout=120)
        took = time.time() - t
        kept = sorted(os.listdir(stopped)) if os.path.isdir(stopped) else []
        check("SIGTERM mid-run: every rank keeps its profile",
              kept == [f"rank-{r:05}.json" for r in range(WORLD)], f"{kept}: {err[-2000:]}")
        check("SIGTERM mid-run: exit 143, within 20 s", p.returncode == 143 and took < 20,
              f"exit {p.returncode} after {took:.1f} s")
        # The cluster's node names are the run's own (scripts/slurm-up.sh writes them).
        with open(os.path.join(os.path.dirname(os.environ["SLURM_CONF"]), "nodes")) as fh:
            names = sorted(fh.read().split())
        check("the ranks ran on three nodes",
              sorted(r["node"] for r in report.get("ranks", {}).get("ranks", [])) == names,
              f'{report.get("ranks", {}).get("ranks")}, nodes {names}')


SPANS = """
import os, sys, time
import mainboard
rank = int(os.environ["RANK"])
for i in range(400):
    with mainboard.span("step"):
        with mainboard.span("work"):
            t = time.time() + 0.002
            while time.time() < t:
                pass
    if rank == 1 and i == 100:
        os.kill(os.getpid(), 9)
print("done", flush=True)
"""


def crash():
    with tempfile.TemporaryDirectory() as work:
        out = os.path.join(work, "profiles")
        procs = start_ranks(out, ["-c", SPANS])
        time.sleep(0.5)
        os.killpg(procs[2].pid, signal.SIGKILL)  # rank 2's mainboard and its program, gone
        codes = [p.wait(timeout=120) for p in procs]
        check("rank 0 exits 0", codes[0] == 0, codes)
        check("rank 1 exits as its program did (SIGKILL: 137)", codes[1] == 137, codes)
        files = sorted(os.listdir(out)) if os.path.isdir(out) else []
        check("ranks 0 and 1 left their profiles", files == ["rank-00000.json", "rank-00001.json"],
              files)
        with open(os.path.join(out, "rank-00001.json")) as f:
            killed = json.load(f)
        check("the killed rank's profile keeps its samples and says why it has no spans",
              killed["samples"] and any("signal 9" in u for u in killed["unavailable"]),
              killed["unavailable"])
        # Merged into the ranks' own directory, then again: the earlier merge is left out.
        for attempt in ("first", "again"):
            m = run([MB, "profile", "merge", out, "-o", os.path.join(out, "job.json")])
            check(f"the merge succeeds ({attempt})", m.returncode == 0, m.stderr)
            check(f"the merge says rank 2 is missing ({attempt})",
                  "1 of 3 ranks have no profile: rank 2" in m.stderr, m.stderr)
        check("the earlier merge is named and left out",
              "job.json is itself a merged job (left out)" in m.stderr, m.stderr)


def trace_figures(path):
    """What a trace holds, read here on its own: each step's start and end (µs, its own clock),
    and each rank's data loading and collective time."""
    with open(path) as f:
        events = json.load(f)
    events = events["traceEvents"] if isinstance(events, dict) else events
    steps = sorted((e["ts"], e["ts"] + e["dur"]) for e in events
                   if e.get("ph") == "X" and e["name"].startswith("ProfilerStep#"))
    data = sum(e["dur"] for e in events
               if e.get("ph") == "X" and e["name"].startswith("enumerate(DataLoader)"))
    gloo_ends = sorted(e["ts"] + e["dur"] for e in events
                       if e.get("ph") == "X" and e["name"] == "gloo:all_reduce")
    return steps, data, gloo_ends


def traces():
    steps_recorded, delay = 8, 0.1
    with tempfile.TemporaryDirectory(dir=os.environ.get("MAINBOARD_SHARED_TMP")) as work:
        out = os.path.join(work, "traces")
        env = dict(base_env(), TRACE_DIR=out, STEPS=str(steps_recorded), DELAY_S=str(delay))
        f = run(["srun", "--nodes", str(WORLD), "--ntasks", str(WORLD), "--ntasks-per-node=1",
                 "--kill-on-bad-exit=1", PY, TORCH_TRAIN], env=env)
        check("srun of the torch.profiler job exits 0", f.returncode == 0, f.stderr[-3000:])
        check("every rank trained", all(f"rank {r}:" in f.stdout for r in range(WORLD)),
              f.stdout[-2000:])
        files = sorted(os.listdir(out)) if os.path.isdir(out) else []
        check("one trace per rank, named by tensorboard_trace_handler",
              len(files) == WORLD and all(n.startswith(f"rank{r}.") and
                                          n.endswith(".pt.trace.json")
                                          for r, n in enumerate(files)), files)
        if failed:
            return
        job, page, pb = (os.path.join(work, n) for n in ("job.json", "job.html", "job.pb.gz"))
        m = run([MB, "profile", "merge", out, "-o", job, "--html", page, "--pprof", pb])
        check("profile merge of the trace directory exits 0", m.returncode == 0, m.stderr)
        print("  " + m.stderr.strip().replace("\n", "\n  "))
        check("the merge says how it aligned the ranks' clocks",
              "aligned with rank 0's by the ends of their collectives (gloo/NCCL operators"
              in m.stderr, m.stderr)
        r = run([MB, "profile", "report", job, "--json"])
        report = json.loads(r.stdout) if r.returncode == 0 else {}
        ranks = report.get("ranks", {})
        s = ranks.get("straggler") or {}
        check("the straggler is rank 1", s.get("rank") == SLOW, ranks.get("verdict"))
        check("its phase is the DataLoader's, data loading",
              "enumerate(DataLoader)" in s.get("phase", "") and
              s.get("phase_kind") == "data loading", s)
        check("the others wait for it in gloo's all-reduce",
              s.get("wait_phase") == "ProfilerStep/gloo:all_reduce", s)
        check("the step is ProfilerStep, recorded on every rank",
              ranks.get("step") == "ProfilerStep" and len(ranks.get("steps", [])) == steps_recorded,
              (ranks.get("step"), len(ranks.get("steps", []))))
        check("ranks 0 and 2 are aligned with rank 0 by the collectives' ends",
              [x.get("alignment") for x in ranks.get("ranks", [])] ==
              ["reference", "collective ends", "collective ends"], ranks.get("ranks"))
        breakdown = {b["rank"]: b for b in ranks.get("breakdown", [])}
        check("the breakdown of each rank, from its CPU operators",
              sorted(breakdown) == [0, 1, 2] and
              all(b["source"] == "cpu operators" for b in breakdown.values()), breakdown)
        if sorted(breakdown) == [0, 1, 2]:
            check("rank 1 computes most of its window, the others communicate most of theirs",
                  breakdown[1]["compute_pct"] > 50 and breakdown[0]["non_compute_pct"] > 50 and
                  breakdown[2]["non_compute_pct"] > 50, breakdown)

        # The figures agree with what the traces hold, read here on their own.
        with open(job) as fh:
            merged = json.load(fh)
        spread = {x["path"]: x for x in ranks.get("spans", [])}
        data_path = s.get("phase", "")
        figures = {}
        for r_, name in enumerate(files):
            figures[r_] = trace_figures(os.path.join(out, name))
        for r_, (steps, data, _) in figures.items():
            proc = merged["processes"][r_]
            stats = {x["path"]: x for x in proc["span_stats"]}
            step_total = sum(e - b for b, e in steps) * 1000
            got = stats.get("ProfilerStep", {})
            check(f"rank {r_}: {len(steps)} steps, their total as the trace holds it",
                  got.get("calls") == len(steps) == steps_recorded and
                  abs(got.get("total_ns", 0) - step_total) <= len(steps) * 1000,
                  f'{got.get("calls")} steps, {got.get("total_ns")} ns; trace: {len(steps)}, '
                  f'{step_total} ns')
            got_data = spread.get(data_path, {}).get("total_ns", [0] * WORLD)[r_]
            check(f"rank {r_}: its data loading as the trace holds it",
                  abs(got_data - data * 1000) <= 64 * 1000, f"{got_data} ns; trace {data * 1000}")
        injected = delay * steps_recorded * 1e9
        check("the straggler's excess in data loading is the delay injected, within 20 %",
              abs(s.get("phase_excess_ns", 0) - injected) <= 0.2 * injected, s)
        # On one axis: the ranks leave each all-reduce together; moved by the offsets the merge
        # chose, each of rank 0's all-reduce ends has one of every other rank within 10 ms (one
        # at the window's edge may be missing from a trace: its end came as the profiler stopped).
        offsets = [x["offset_ns"] for x in merged["processes"]]
        moved = [[e * 1000 + offsets[r_] for e in figures[r_][2]] for r_ in range(WORLD)]
        apart = [max(min(abs(e - o) for o in moved[r_]) for r_ in range(1, WORLD))
                 for e in moved[0]]
        together = sum(a <= 10e6 for a in apart)
        check("the ranks' all-reduces end together on the job's axis",
              together >= min(len(m) for m in moved) - 1 and together >= steps_recorded - 2,
              [f"{a / 1e6:.2f} ms" for a in apart])

        # The page: a lane per rank, their steps on one time axis.
        with open(page) as fh:
            html = fh.read()
        at = html.index('<script type="application/json" id="mb-data">')
        d = json.loads(html[html.index(">", at) + 1:html.index("</script>", at)])
        step_path = d["spans"]["paths"].index("ProfilerStep")
        lanes = {t["index"]: t["label"].split(" ")[1] for t in d["threads"]
                 if t["label"].startswith("rank ")}
        rows = [x for x in d["spans"]["rows"] if x[0] == step_path]
        per_rank = {}
        for path, thread, start, dur in rows:
            per_rank.setdefault(lanes.get(thread), []).append((start, start + dur))
        check("the page holds every rank's steps",
              sorted(per_rank) == ["0", "1", "2"] and
              all(len(v) == steps_recorded for v in per_rank.values()),
              {k: len(v) for k, v in per_rank.items()})
        # One time axis: the ranks leave each all-reduce together (a step's end is not a
        # meeting point: after the last all-reduce each rank finishes its step on its own).
        reduce_path = d["spans"]["paths"].index("ProfilerStep/gloo:all_reduce")
        page_ends = {}
        for path, thread, start, dur in d["spans"]["rows"]:
            if path == reduce_path:
                page_ends.setdefault(lanes.get(thread), []).append(start + dur)
        if sorted(page_ends) == ["0", "1", "2"]:
            apart = [max(min(abs(e - o) for o in page_ends[str(r_)]) for r_ in range(1, WORLD))
                     for e in page_ends["0"]]
            together = sum(a <= 10e6 for a in apart)
            check("the page's all-reduces end together across the ranks (one time axis)",
                  together >= steps_recorded - 2, [f"{a / 1e6:.2f} ms" for a in apart])
        else:
            check("the page holds every rank's all-reduces", False, sorted(page_ends))

        # Named by another pattern: the default worker name (host_pid) with the rank put
        # elsewhere, read with --rank-from.
        renamed = os.path.join(work, "renamed")
        os.mkdir(renamed)
        for r_, name in enumerate(files):
            os.link(os.path.join(out, name),
                    os.path.join(renamed, f"node-{r_}_w{r_}.{name.split('.', 1)[1]}"))
        plain = run([MB, "profile", "merge", renamed, "-o", os.path.join(work, "plain.json")])
        check("without a rank in the file names, the merge says so",
              plain.returncode == 0 and "name no rank" in plain.stderr, plain.stderr)
        again = run([MB, "profile", "merge", renamed, "--rank-from", r"_w([0-9]+)\.", "-o",
                     os.path.join(work, "again.json")])
        check("--rank-from reads them, and the straggler is rank 1 again",
              again.returncode == 0 and again.stderr.strip().splitlines()[-1].startswith(
                  "rank 1 holds the job back"), again.stderr)
        bad = run([MB, "profile", "merge", renamed, "--rank-from", "rank(["])
        check("a --rank-from that is not a regular expression is refused (exit 2)",
              bad.returncode == 2 and "not a regular expression" in bad.stderr, bad.stderr)


if MODE in ("local", "slurm", "traces"):
    if subprocess.run([PY, "-c", "import torch"], capture_output=True).returncode != 0:
        print("skipped: PyTorch is not installed")
        sys.exit(77)
{"local": local, "slurm": slurm, "crash": crash, "traces": traces}[MODE]()
print("FAILED: " + ", ".join(failed) if failed else "all passed")
sys.exit(1 if failed else 0)
