#!/usr/bin/env bash
# Starts a throw-away Prometheus (Debian's package, started by hand, not as a service) that
# scrapes `mainboard serve` every second, for the tests. Picks two free ports: the scrape
# target's (written to DIR/target-port; start `mainboard serve --listen 127.0.0.1:PORT` there)
# and the API's (DIR/api holds its URL). Its data lives in DIR/data; its PID in DIR/run.
#   scripts/prometheus-up.sh DIR
# scripts/prometheus-down.sh DIR stops it, and a server a test recorded in DIR/run/serve.pid.
set -euo pipefail
# shellcheck source=pids.sh
source "$(dirname "$0")/pids.sh"
dir=$1
command -v prometheus >/dev/null && command -v promtool >/dev/null ||
  { echo "prometheus-up: prometheus is not installed (scripts/install-deps.sh)" >&2; exit 1; }
"$(dirname "$0")/prometheus-down.sh" "$dir" >/dev/null 2>&1 || true
rm -rf "$dir"
mkdir -p "$dir"/{run,log}

# Two ports chosen at random among free ones below the kernel's ephemeral range (pids.sh): the
# target's stays unused until the serve test starts, and two runs of the tests do not meet.
read -r target api_port <<<"$(free_ports 2)"
cat >"$dir/prometheus.yml" <<CONF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: mainboard
    scrape_interval: 1s
    scrape_timeout: 900ms
    static_configs:
      - targets: ['127.0.0.1:$target']
CONF
promtool check config "$dir/prometheus.yml" >/dev/null
t0=$EPOCHREALTIME
prometheus --config.file="$dir/prometheus.yml" --storage.tsdb.path="$dir/data" \
  --web.listen-address="127.0.0.1:$api_port" >"$dir/log/prometheus.log" 2>&1 </dev/null &
echo $! >"$dir/run/prometheus.pid"
echo "$target" >"$dir/target-port"
api=http://127.0.0.1:$api_port
echo "$api" >"$dir/api"
for _ in $(seq 300); do
  curl -sf "$api/-/ready" >/dev/null 2>&1 && break
  kill -0 "$(<"$dir/run/prometheus.pid")" 2>/dev/null || break
  sleep 0.1
done
if ! curl -sf "$api/-/ready" >/dev/null 2>&1; then
  echo "prometheus-up: Prometheus did not become ready" >&2
  tail -20 "$dir/log/prometheus.log" >&2
  exit 1
fi
printf 'prometheus-up: ready in %.1f s at %s, scraping 127.0.0.1:%s every second\n' \
  "$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { print b - a }')" "$api" "$target"
