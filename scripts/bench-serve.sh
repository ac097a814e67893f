#!/usr/bin/env bash
# `mainboard serve` under scrapes, next to node_exporter (Debian's prometheus-node-exporter,
# when installed) on the same machine with the same scraper (bench/serve_load.cpp): latency
# p50/p99 with 1 and 50 concurrent scrapers, the server's CPU time per scrape, and its resident
# memory after 100 and after 10 000 more scrapes (flat: no leak). mainboard serves eight fake
# H100s (the fake NVIDIA libraries) on this host, with --min-interval 0: every scrape takes a
# fresh reading, the worst case. Last, one scraper again with 1000 idle connections held open
# (half silent, half stopped in the middle of a request line: a port scanner, a stuck proxy),
# all from one address: --max-connections 8192, so that its share (an eighth) holds them all.
#   scripts/bench-serve.sh [BUILD] [--quick]
set -euo pipefail
build=${1:-build/default}
quick=0
[[ "${2:-}" == "--quick" ]] && quick=1
load=$build/bench/serve_load
cli=$build/src/cli/mainboard
root=$(cd "$(dirname "$0")/.." && pwd)
n1=2000 n50=5000 leak=10000
((quick)) && n1=100 n50=500 leak=500
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
wait_http() {
  for _ in $(seq 100); do curl -sf "http://127.0.0.1:$1/metrics" >/dev/null 2>&1 && return 0; sleep 0.1; done
  echo "bench-serve: nothing answers on port $1" >&2
  return 1
}
measure() {  # measure NAME PORT PID
  local name=$1 port=$2 pid=$3
  "$load" "$port" "$pid" 50 1 >/dev/null  # warm up
  local one fifty before after
  # (serve_load exits 1 when a scrape failed; the count is in its line)
  one=$("$load" "$port" "$pid" "$n1" 1 || true)
  fifty=$("$load" "$port" "$pid" "$n50" 50 || true)
  before=$("$load" "$port" "$pid" 100 1 || true)
  after=$("$load" "$port" "$pid" "$leak" 4 || true)
  local size idle
  size=$(curl -s "http://127.0.0.1:$port/metrics" | wc -c)
  python3 - "$port" 1000 >"$work/idle.ready" <<'PY' &
import socket, sys, time
held = []
for i in range(int(sys.argv[2])):
    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
    if i % 2:
        s.send(b"GET /metrics HTTP/1.1\r\nHost:")
    held.append(s)
print("ready", flush=True)
time.sleep(3600)
PY
  local holder=$!
  for _ in $(seq 200); do grep -q ready "$work/idle.ready" 2>/dev/null && break; sleep 0.05; done
  idle=$("$load" "$port" "$pid" 20 1 || true)
  kill "$holder" 2>/dev/null || true
  wait "$holder" 2>/dev/null || true
  python3 - "$name" "$size" "$one" "$fifty" "$before" "$after" "$idle" <<'PY'
import json, sys
name, size = sys.argv[1], int(sys.argv[2])
one, fifty, before, after, idle = (json.loads(a) for a in sys.argv[3:8])
print(f"{name:<34} {one['p50_ms']:7.2f} {one['p99_ms']:7.2f}   {fifty['p50_ms']:7.2f} {fifty['p99_ms']:7.2f}"
      f"   {one['cpu_ms_per_scrape']:6.2f}   {before['rss_kib']/1024:6.1f} → {after['rss_kib']/1024:6.1f} MiB"
      f"   {size/1024:6.1f} KiB   {idle['p50_ms']:7.2f}")
for label, r in (("1 scraper", one), ("50 scrapers", fifty), ("memory", after),
                 ("1000 idle connections", idle)):
    if r["failures"]:
        print(f"  ({name}, {label}: {r['failures']} of {r['scrapes']} scrapes not answered 200)")
PY
}

echo "scrapes: $n1 with 1 scraper, $n50 with 50; memory after 100 and after $leak more"
printf '%-34s %7s %7s   %7s %7s   %6s   %-20s %-10s %s\n' "" "1: p50" "p99" "50: p50" "p99" \
  "CPU ms" "resident memory" "body" "idle: p50"

port=$(free_port)
MAINBOARD_NVML_LIBRARY=$build/tests/fakes/fake_nvml/libnvidia-ml.so.1 \
  MAINBOARD_CUDA_LIBRARY=$build/tests/fakes/fake_cuda/libcuda.so.1 \
  MAINBOARD_FAKE_GPU_SCENARIO=$root/tests/fixtures/gpus/h100x8.json \
  "$cli" serve --listen "127.0.0.1:$port" --min-interval 0 --max-connections 8192 \
  2>"$work/serve.log" &
pids+=($!)
wait_http "$port"
measure "mainboard serve (8 GPUs, fresh)" "$port" "${pids[-1]}"

port2=$(free_port)
MAINBOARD_NVML_LIBRARY=$build/tests/fakes/fake_nvml/libnvidia-ml.so.1 \
  MAINBOARD_CUDA_LIBRARY=$build/tests/fakes/fake_cuda/libcuda.so.1 \
  MAINBOARD_FAKE_GPU_SCENARIO=$root/tests/fixtures/gpus/h100x8.json \
  "$cli" serve --listen "127.0.0.1:$port2" --max-connections 8192 2>"$work/serve2.log" &
pids+=($!)
wait_http "$port2"
measure "mainboard serve (8 GPUs, 1 s shared)" "$port2" "${pids[-1]}"

exporter=$(command -v prometheus-node-exporter || command -v node_exporter || true)
if [[ -n $exporter ]]; then
  port3=$(free_port)
  "$exporter" --web.listen-address="127.0.0.1:$port3" >"$work/node.log" 2>&1 &
  pids+=($!)
  wait_http "$port3"
  measure "node_exporter (default collectors)" "$port3" "${pids[-1]}"
else
  echo "(node_exporter not installed: apt-get install prometheus-node-exporter for the comparison)"
fi
