#!/usr/bin/env bash
# `mainboard top` in a real terminal (tmux): the screen shows the fake NVIDIA library's GPUs and
# their process; the keys act; a resize redraws; q, SIGTERM and SIGINT each give the terminal
# back (the alternate screen left, the cursor shown) with exit 0, 143 and 130; TERM=dumb prints
# frames; --json lines parse and agree with `snapshot --json`.
#
#   top_tmux.sh MAINBOARD FAKE_NVML SCENARIO SYSROOT [PYTHONPATH]
# With the Python package's directory, also mainboard.top() on the terminal.
set -euo pipefail
mb=$1 nvml=$2 scenario=$3 sysroot=$4 pypath=${5:-}
source "$(dirname "$0")/tmux.sh"
export MAINBOARD_NVML_LIBRARY=$nvml MAINBOARD_FAKE_GPU_SCENARIO=$scenario MAINBOARD_LOG=error

start() {  # start WIDTH HEIGHT ARGS...
  local w=$1 h=$2
  shift 2
  run_in_pane "$w" "$h" "$(printf '%q ' "$mb" --sysroot "$sysroot" top "$@")"
}

# 1. What the screen shows, on 100 x 30.
start 100 30 --interval 0.3
wait_for "GPU3"
wait_for "4242"
s=$(screen)
grep -q "GPU3 .* 97%" <<<"$s" || fail "GPU3's 97 % utilisation is not on the screen"
grep -q "4242 .* 3 .*40.0 GiB" <<<"$s" || fail "the GPU's process (PID 4242, 40 GiB on GPU 3) is not listed"
[[ $(t display-message -p -t top '#{alternate_on}') == 1 ]] || fail "not drawn on the alternate screen"
echo "ok: the GPUs and their process are on the screen"

# 2. Keys: help, sort, filter, GPU, all processes, pause.
t send-keys -t top '?'
wait_for "sort by the next"
t send-keys -t top x
wait_gone "sort by the next"
t send-keys -t top 5
wait_for "CPU%▼"
t send-keys -t top 5
wait_for "CPU%▲"
t send-keys -t top g
wait_for "▶GPU0"
wait_for "0 of 1 processes on the GPUs · GPU0"
t send-keys -t top g g g
wait_for "1 of 1 processes on the GPUs · GPU3"
t send-keys -t top g g g g g
wait_for "1 of 1 processes on the GPUs"
t send-keys -t top / n o p e
wait_for "filter: nope"
t send-keys -t top Enter
wait_for "0 of 1 processes on the GPUs · filter: nope"
t send-keys -t top / Escape
wait_for "1 of 1 processes on the GPUs"
t send-keys -t top a
wait_for "processes"
screen | grep -q "on the GPUs" && sleep 1
screen | grep -q "of [0-9]* processes on the GPUs" && fail "a did not list every process"
t send-keys -t top ' '
wait_for "PAUSED"
t send-keys -t top ' '
wait_gone "PAUSED"
t send-keys -t top s
wait_for "MEM▼"
t send-keys -t top r
wait_for "MEM▲"
t send-keys -t top S S
wait_for "GPU MEM▼"
t send-keys -t top Down
wait_for "▶ +4242 "
t send-keys -t top e
wait_for "^    python3"
t send-keys -t top e t
wait_gone "^    python3"
t send-keys -t top Up Escape
wait_gone "▶ +4242 "
echo "ok: ? 5 g / a space s r S arrows e t Esc act"

# 3. A resize redraws at the new width.
t resize-window -t top -x 160 -y 40
wait_for "SM 1980 MHz"  # the details come back on a screen with room for them
widest() { screen | python3 -c 'import sys; print(max(len(l) for l in sys.stdin.read().splitlines()))'; }
w=$(widest)
((w > 100)) || fail "nothing wider than 100 columns at 160"
t resize-window -t top -x 80 -y 24
wait_gone "SM 1980 MHz"
(($(widest) <= 80)) || fail "a line wider than 80 columns after the resize"
echo "ok: a resize redraws (widest line $w at 160 columns, none over 80 at 80)"

# 4. q gives the terminal back, exit 0.
t send-keys -t top q
[[ $(exit_status) == 0 ]] || fail "q: exit status $(cat "$work/status")"
restored q
echo "ok: q exits 0 with the terminal restored"

# 5. SIGTERM: 143; SIGINT (Ctrl-C): 130; both restore.
for sig in TERM INT; do
  start 100 30 --interval 0.3
  wait_for "GPU3"
  if [[ $sig == INT ]]; then
    t send-keys -t top C-c
  else
    kill -TERM "$(view_pid "--sysroot $sysroot top")" || fail "no view process to signal"
  fi
  want=$([[ $sig == TERM ]] && echo 143 || echo 130)
  got=$(exit_status)
  [[ $got == "$want" ]] || fail "SIG$sig: exit status $got, not $want"
  restored "SIG$sig"
  echo "ok: SIG$sig exits $got with the terminal restored"
done

# 6. TERM=dumb: a compact frame per interval, no escape sequences.
TERM=dumb "$mb" --sysroot "$sysroot" top --interval 0.2 --count 2 >"$work/dumb.txt"
[[ $(grep -c "^mainboard top" "$work/dumb.txt") == 2 ]] || fail "TERM=dumb: not two frames"
grep -q $'\033' "$work/dumb.txt" && fail "TERM=dumb: escape sequences in the output"
echo "ok: TERM=dumb prints two plain frames"

# 7. --json: one line per interval, agreeing with the snapshot.
"$mb" --sysroot "$sysroot" top --json --count 2 --interval 0.2 >"$work/lines.jsonl"
"$mb" --sysroot "$sysroot" snapshot --json --no-toolchain >"$work/snapshot.json"
python3 - "$work/lines.jsonl" "$work/snapshot.json" <<'PY'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) == 2, f"{len(lines)} lines, not 2"
frames = [json.loads(l) for l in lines]
snap = json.load(open(sys.argv[2]))
f = frames[-1]
assert [g["reading"]["info"]["uuid"] for g in f["gpus"]] == [g["info"]["uuid"] for g in snap["gpus"]]
for g, s in zip(f["gpus"], snap["gpus"]):
    a, b = g["reading"]["telemetry"], s["telemetry"]
    assert a["utilization"] == b["utilization"], (a["utilization"], b["utilization"])
    assert a["memory"]["total_bytes"] == b["memory"]["total_bytes"]
assert f["memory"]["total_bytes"] == snap["memory"]["total_bytes"]
procs = {p["pid"]: p for p in f["processes"]}
assert procs[4242]["gpus"] == [3] and procs[4242]["gpu_memory_bytes"] == 40 * 2**30, procs
assert frames[0]["sequence"] < frames[1]["sequence"]
print("ok: --json writes", len(lines), "lines that agree with snapshot --json")
PY

# 8. mainboard.top() from Python takes the same screen and gives it back.
# (A sanitizer build has no Python package: the step is left out there.)
if [[ -n $pypath && -f $pypath/mainboard/__init__.py ]]; then
  run_in_pane 100 30 "cd $(printf '%q' "$work") && MAINBOARD_SYSROOT=$(printf '%q' "$sysroot") PATH=$(printf '%q' "$(dirname "$mb")"):\$PATH PYTHONPATH=$(printf '%q' "$pypath") /usr/bin/python3 -c 'import mainboard, sys; sys.exit(mainboard.top(interval=0.3))'"
  wait_for "4242"
  t send-keys -t top q
  [[ $(exit_status) == 0 ]] || fail "mainboard.top(): exit status $(cat "$work/status")"
  restored "mainboard.top()"
  echo "ok: mainboard.top() runs the view on the terminal and returns 0 on q"
fi

# 9. Usage errors.
if "$mb" top --interval 0.01 2>"$work/err"; then fail "--interval 0.01 was taken"; fi
grep -q "interval" "$work/err" || fail "--interval 0.01: $(cat "$work/err")"
if "$mb" top --once --json 2>"$work/err"; then fail "--once --json was taken"; fi
echo "ok: bad options are refused"
