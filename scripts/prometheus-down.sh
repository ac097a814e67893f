#!/usr/bin/env bash
# Stops what scripts/prometheus-up.sh DIR started, by the PIDs recorded under DIR/run: the
# server under test (serve.pid, written by the test) and Prometheus. Safe to run twice.
set -uo pipefail
# shellcheck source=pids.sh
source "$(dirname "$0")/pids.sh"
dir=$1
pids=()
p=$(pid_of "$dir/run/serve.pid" mainboard) && pids+=("$p")
p=$(pid_of "$dir/run/prometheus.pid" prometheus) && pids+=("$p")
stop "${pids[@]}"
rm -f "$dir"/run/*.pid
echo "prometheus-down: stopped ${#pids[@]} process(es)"
