#!/usr/bin/env bash
# `mainboard profile dump --native` of a Python process with 200 and with 2000 threads, in one
# run: a dump stops, reads and lets go each thread once, so ten times the threads should take
# about ten times as long (reading every thread's Python stack for each stopped thread made it
# quadratic: 3.0 s for 400 threads, 82 s for 2000). Median of 5 runs each.
#   scripts/bench-dump.sh [BUILD]
set -euo pipefail
build=${1:-build/default}
cli=$build/src/cli/mainboard
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
cat >"$work/threads.py" <<'PY'
import sys, threading, time
def nap():
    while True:
        time.sleep(3600)
for _ in range(int(sys.argv[1])):
    threading.Thread(target=nap, daemon=True).start()
print("ready", flush=True)
nap()
PY
declare -A median
for n in 200 2000; do
  /usr/bin/python3 "$work/threads.py" "$n" >"$work/ready.$n" &
  pid=$!
  pids+=("$pid")
  for _ in $(seq 200); do grep -q ready "$work/ready.$n" 2>/dev/null && break; sleep 0.05; done
  times=()
  for _ in 1 2 3 4 5; do
    start=$(date +%s%N)
    "$cli" profile dump "$pid" --native >"$work/out" 2>&1
    times+=($(( ($(date +%s%N) - start) / 1000000 )))
  done
  threads=$(grep -c '^Thread' "$work/out")
  median[$n]=$(printf '%s\n' "${times[@]}" | sort -n | sed -n 3p)
  echo "profile dump --native, $n Python threads ($threads shown): median ${median[$n]} ms"
  kill "$pid"
done
python3 -c "print(f'2000 threads / 200 threads: {${median[2000]} / max(${median[200]}, 1):.1f}x (linear: about 10x)')"
