#!/usr/bin/env bash
# A real Prometheus scrapes `mainboard serve` (eight fake H100s on a recorded host): the
# exposition passes promtool's checks, the target is up, and the host and GPU series hold the
# values the fake driver and the fixture give.
#   serve_test.sh MAINBOARD DIR FAKE_NVML FAKE_CUDA SCENARIO SYSROOT
# DIR is where scripts/prometheus-up.sh started Prometheus; the server's PID goes to
# DIR/run/serve.pid, so prometheus-down.sh stops it even when this test fails.
set -euo pipefail
mb=$1 dir=$2 nvml=$3 cuda=$4 scenario=$5 sysroot=$6
port=$(<"$dir/target-port")
api=$(<"$dir/api")
fail() { echo "FAIL: $*" >&2; echo "--- serve log" >&2; cat "$dir/log/serve.log" >&2 || true; exit 1; }

MAINBOARD_NVML_LIBRARY=$nvml MAINBOARD_CUDA_LIBRARY=$cuda MAINBOARD_FAKE_GPU_SCENARIO=$scenario \
  "$mb" --sysroot "$sysroot" serve --listen "127.0.0.1:$port" --min-interval 0.5 \
  >"$dir/log/serve.log" 2>&1 </dev/null &
echo $! >"$dir/run/serve.pid"
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
curl -sf "http://127.0.0.1:$port/metrics" >"$dir/metrics.txt" || fail "no /metrics on port $port"

# promtool: exit 0 and no lint warning at all.
lint=$(promtool check metrics <"$dir/metrics.txt" 2>&1) || fail "promtool check metrics: $lint"
[[ -z $lint ]] || fail "promtool check metrics warns: $lint"
echo "ok: promtool check metrics, $(grep -vc '^#' "$dir/metrics.txt") samples, no warnings"

# query EXPR: the first result's value ("" when there is none).
query() {
  curl -sf --get --data-urlencode "query=$1" "$api/api/v1/query" |
    python3 -c 'import json, sys
r = json.load(sys.stdin)["data"]["result"]
print(r[0]["value"][1] if r else "")'
}
t0=$EPOCHREALTIME
up=""
for _ in $(seq 300); do
  up=$(query 'up{job="mainboard"}' || true)
  [[ $up == 1 ]] && break
  sleep 0.1
done
[[ $up == 1 ]] || fail "the target never came up: $(curl -s "$api/api/v1/targets")"
echo "ok: up == 1 after $(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }') s"

expect() {  # expect EXPR VALUE
  local got
  got=$(query "$1")
  [[ $got == "$2" ]] || fail "$1 = '$got', expected $2"
  echo "ok: $1 = $got"
}
expect 'count(mainboard_gpu_info)' 8
expect 'mainboard_gpu_utilization_ratio{gpu="3"}' 0.97
expect 'mainboard_gpu_process_memory_bytes{gpu="3",pid="4242",process="python3"}' 42949672960
expect 'mainboard_gpu_row_remap_pending{gpu="5"}' 1
expect 'mainboard_gpu_persistence_mode{gpu="7"}' 0
expect 'count(mainboard_gpu_throttle_reason{reason="SwPowerCap"})' 1
total=$(($(awk '/^MemTotal:/ { print $2 }' "$sysroot/proc/meminfo") * 1024))
expect 'mainboard_memory_total_bytes' "$total"
# A counter Prometheus sees grow: the scrapes themselves.
sleep 3
rate=$(query 'rate(mainboard_scrapes_total[3s])')
awk -v r="$rate" 'BEGIN { exit !(r > 0) }' || fail "rate(mainboard_scrapes_total[3s]) = '$rate'"
echo "ok: rate(mainboard_scrapes_total[3s]) = $rate"
samples=$(query 'scrape_samples_scraped{job="mainboard"}')
echo "ok: Prometheus stores $samples samples per scrape"
