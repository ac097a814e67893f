# Sourced by the scripts that start and stop the test daemons (Slurm, Prometheus): processes are
# found by the PIDs they recorded, and only while that PID still runs the program it was.

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
