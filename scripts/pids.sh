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

# free_ports N: N distinct TCP ports, free now on every address, chosen at random below the kernel's
# ephemeral range: a port there stays unused until its daemon binds it, where one from the
# ephemeral range could meanwhile be handed to any program that listens on port 0 (seen: the
# serve test found its port taken by another test's server, which Prometheus then scraped). At
# random, so that two runs of the tests on one machine (or a user's own Slurm) do not meet.
free_ports() {
  python3 - "$1" <<'PY'
import random, socket, sys
with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
    low = int(f.read().split()[0])
want, found = int(sys.argv[1]), []
for _ in range(10000):
    if len(found) == want:
        break
    port = random.randrange(10000, max(low, 10001))
    if port in found:
        continue
    s = socket.socket()
    try:
        s.bind(("", port))  # every address: a daemon may listen on all of them
    except OSError:
        continue
    finally:
        s.close()
    found.append(port)
if len(found) < want:
    sys.exit("free_ports: found only %d free ports" % len(found))
print(*found)
PY
}
