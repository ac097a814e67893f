#!/usr/bin/env bash
# Stops what scripts/prometheus-up.sh DIR started, by the PIDs recorded under DIR/run: the
# server under test (serve.pid, written by the test) and Prometheus. Safe to run twice.
set -uo pipefail
dir=$1
pid_of() {  # pid_of PIDFILE COMM: the recorded PID, if that process still runs COMM
  [[ -s $1 ]] || return 1
  local p; p=$(<"$1")
  [[ -r /proc/$p/comm && $(</proc/$p/comm) == "$2" ]] && echo "$p"
}
stop() {  # stop PID...: TERM, then KILL whatever is left after 10 s
  (($#)) || return 0
  kill "$@" 2>/dev/null
  for _ in $(seq 40); do
    local left=0
    for p; do [[ -e /proc/$p ]] && ! grep -q ') Z' "/proc/$p/stat" 2>/dev/null && left=1; done
    ((left)) || return 0
    sleep 0.25
  done
  kill -9 "$@" 2>/dev/null
}
pids=()
p=$(pid_of "$dir/run/serve.pid" mainboard) && pids+=("$p")
p=$(pid_of "$dir/run/prometheus.pid" prometheus) && pids+=("$p")
stop "${pids[@]}"
rm -f "$dir"/run/*.pid
echo "prometheus-down: stopped ${#pids[@]} process(es)"
