#!/usr/bin/env bash
# Runs every benchmark and prints the figures the README quotes. Ratios come from one run, side
# by side: machines are noisy, so compare within a run, not across runs.
#   scripts/run-benchmarks.sh            everything
#   scripts/run-benchmarks.sh --quick    shorter runs (a smoke test of the benchmarks)
# MAINBOARD_PREVIOUS=/path/to/an/older/mainboard puts an earlier build beside this one in the
# start-up comparison.
set -euo pipefail
cd "$(dirname "$0")/.."
quick=0
[[ "${1:-}" == "--quick" ]] && quick=1
build=build/default
out=$build/bench-results
mkdir -p "$out"
cli=$build/src/cli/mainboard
python=/usr/bin/python3  # Debian's, with python3-psutil

min_time=0.5
runs=30
((quick)) && min_time=0.05 && runs=5

echo "== Google Benchmark: snapshot_bench"
"$build/bench/snapshot_bench" --benchmark_min_time="$min_time" \
  --benchmark_out="$out/snapshot_bench.json" --benchmark_out_format=json

echo
echo "== Google Benchmark: gpu_bench (fake NVML and CUDA driver)"
"$build/bench/gpu_bench" --benchmark_min_time="$min_time" \
  --benchmark_out="$out/gpu_bench.json" --benchmark_out_format=json

echo
echo "== Google Benchmark: fleet_bench (merging 1 000 and 10 000 node snapshots)"
"$build/bench/fleet_bench" --benchmark_min_time="$min_time" \
  --benchmark_out="$out/fleet_bench.json" --benchmark_out_format=json

echo
echo "== mainboard serve under scrapes, next to node_exporter where installed"
if ((quick)); then scripts/bench-serve.sh "$build" --quick; else scripts/bench-serve.sh "$build"; fi

echo
echo "== mainboard top's own cost at one reading a second, beside a psutil poller of the same readings"
if ((quick)); then "$python" scripts/bench-top.py "$build" --seconds 3; else "$python" scripts/bench-top.py "$build"; fi

echo
echo "== profile dump --native of 200 and 2000 Python threads (linear in the threads)"
scripts/bench-dump.sh "$build"

echo
echo "== Google Benchmark: span_bench (span cost dormant and active, save/load/export)"
"$build/bench/span_bench" --benchmark_min_time="$min_time" \
  --benchmark_out="$out/span_bench.json" --benchmark_out_format=json

echo
echo "== the span library's footprint: one program against mainboard::spans and mainboard::mainboard"
scripts/spans-footprint.sh "$build"

echo
echo "== Python: a span next to contextlib.nullcontext, import time, snapshot next to the command"
PYTHONPATH="$build/python" /usr/bin/python3 bench/python_span_bench.py "$cli"

echo
echo "== Google Benchmark: sampling_bench (symbolizing 10 000 samples)"
"$build/bench/sampling_bench" --benchmark_min_time="$min_time" \
  --benchmark_out="$out/sampling_bench.json" --benchmark_out_format=json
# What checking a Python read costs: each frame read twice (checked:1) against once (checked:0),
# on the same 100-deep stack, in this run.
"$python" - "$out/sampling_bench.json" <<'PY'
import json, sys
r = {b["name"]: b["real_time"] for b in json.load(open(sys.argv[1]))["benchmarks"]
     if b["name"].startswith("BM_PythonStackRead")}
before = r.get("BM_PythonStackRead/depth:100/paused:0/checked:0")
after = r.get("BM_PythonStackRead/depth:100/paused:0/checked:1")
if before and after:
    print(f"a 100-deep Python stack on two threads: {before:.0f} us read once, {after:.0f} us "
          f"with every frame read twice and checked ({after / before:.2f}x)")
PY

echo
echo "== stack sampling: the sampled program's slowdown, next to perf record"
"$python" scripts/bench-sampling.py "$build" "$(( quick ? 2 : 7 ))"

echo
echo "== a distributed job: merging 512 rank profiles (10 000 spans, 5 000 samples each), then its report"
if ((quick)); then "$python" scripts/bench-merge.py "$build" 16 2000 1000
else "$python" scripts/bench-merge.py "$build"; fi

echo
echo "== PyTorch profiler traces: 64 ranks' traces merged, one trace of 1 GiB read"
if ((quick)); then "$python" scripts/bench-traces.py "$build" 8 5 50 20
else "$python" scripts/bench-traces.py "$build"; fi

echo
echo "== pictures of large profiles: the HTML report and the SVG flame graph"
"$python" scripts/bench-pictures.py "$build"

echo
echo "== mainboard snapshot --json vs a Python probe (psutil + platform + subprocess)"
# A private cache file so the "cold" runs really are cold and the warm ones warm.
cache_home=$(mktemp -d)
trap 'rm -rf "$cache_home"' EXIT
export XDG_CACHE_HOME=$cache_home
"$cli" snapshot --json >/dev/null  # fills the toolchain cache
hyperfine -N --warmup 3 --runs "$runs" --export-json "$out/snapshot_vs_python.json" \
  -n "mainboard (warm cache)" "$cli snapshot --json" \
  -n "mainboard (cold, --no-cache)" "$cli --no-cache snapshot --json" \
  -n "mainboard --version (start-up)" "$cli --version" \
  -n "python probe" "$python bench/python_probe.py"
"$python" - "$out/snapshot_vs_python.json" <<'PY'
import json, sys
r = {x["command"]: x["mean"] for x in json.load(open(sys.argv[1]))["results"]}
py = r["python probe"]
for name in ("mainboard (warm cache)", "mainboard (cold, --no-cache)"):
    print(f"{name}: {r[name]*1000:.1f} ms, python probe {py*1000:.1f} ms -> {py/r[name]:.1f}x faster")
start = r["mainboard --version (start-up)"]
print(f"of the warm snapshot, start-up (mainboard --version) is {start*1000:.1f} ms, "
      f"the reading {(r['mainboard (warm cache)'] - start)*1000:.1f} ms")
print(f"warm snapshot {py / r['mainboard (warm cache)']:.1f}x faster than the python probe "
      "(goal >= 20x)")
PY

echo
# The goals against /bin/true are judged here, the commands started in turn: blocks of runs one
# after another, as hyperfine times them, measure the hour as much as the command.
echo "== start-up and a warm snapshot next to /bin/true, started in turn (steadier on a noisy machine)"
"$python" scripts/bench-startup.py "$(( quick ? 20 : 400 ))" "$cli" ${MAINBOARD_PREVIOUS:+"$MAINBOARD_PREVIOUS"}
# Whether the start-up order still holds what a snapshot runs (code changes move functions out).
"$python" scripts/startup-order.py check "$cli"

echo
echo "== Python: import mainboard and a first snapshot, next to import psutil and a reading"
# Compiled first, as an installed package is: the source tree's copy has no bytecode.
pkg=$(mktemp -d)
cp -r "$build/python/mainboard" "$pkg/"
"$python" -m compileall -q "$pkg" >/dev/null
hyperfine -N --warmup 3 --runs "$runs" --export-json "$out/python_first_contact.json" \
  -n "python3 -c pass" "$python -c pass" \
  -n "psutil" "$python -c 'import psutil; psutil.virtual_memory()'" \
  -n "mainboard" "env PYTHONPATH=$pkg $python -c 'import mainboard; mainboard.Machine().snapshot()'"
rm -rf "$pkg"
"$python" - "$out/python_first_contact.json" <<'PY'
import json, sys
r = {x["command"]: x["mean"] for x in json.load(open(sys.argv[1]))["results"]}
bare = r["python3 -c pass"]
print(f"import mainboard + Machine().snapshot(): {r['mainboard']*1000:.1f} ms, "
      f"import psutil + virtual_memory(): {r['psutil']*1000:.1f} ms -> "
      f"{r['mainboard'] / r['psutil']:.2f}x (goal <= 1x); beyond the bare interpreter "
      f"{(r['mainboard'] - bare)*1000:.1f} vs {(r['psutil'] - bare)*1000:.1f} ms")
PY
