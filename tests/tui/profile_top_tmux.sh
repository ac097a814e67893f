#!/usr/bin/env bash
# `mainboard profile top` in a real terminal (tmux) on a real Python program: the table names
# its hot function with file:line; the keys act; q and SIGTERM leave an attached program running
# and give the terminal back (exit 0, 143); a launched program that ends ends the view with its
# status; Ctrl-C ends a launched program (130).
#
#   profile_top_tmux.sh MAINBOARD PYTHON
set -euo pipefail
mb=$1 python=$2
here=$(cd "$(dirname "$0")" && pwd)
source "$here/tmux.sh"
target=""
cleanup_more='[[ -n $target ]] && kill "$target" 2>/dev/null'
export MAINBOARD_LOG=error
# Sampling needs perf events: skip where the kernel refuses them.
if ! "$mb" profile attach $$ --duration 0.1 -o "$work/probe.json" --quiet 2>"$work/probe.err"; then
  grep -q "perf_event" "$work/probe.err" && { echo "skip: $(head -1 "$work/probe.err")"; exit 77; }
fi

start() { run_in_pane 120 30 "$(printf '%q ' "$mb" profile top --interval 0.5 "$@")"; }

# 1. Attached to a running program: its hot function, by line, with its file.
"$python" "$here/busy.py" 0 &
target=$!
start "$target"
wait_for "hot \(busy\.py:[0-9]+\)"
wait_for "cold \(busy\.py:[0-9]+\)"
wait_for "sleeper"
echo "ok: the hot function by file:line and the threads"

# 2. Keys.
t send-keys -t top '?'
wait_for "sort by %Own"
t send-keys -t top x
t send-keys -t top 2
wait_for "%Total▼"
t send-keys -t top l
wait_for "Function \(file\)"
wait_for "hot \(busy\.py\)"
t send-keys -t top t
wait_for "thread .*\(tid [0-9]+\)"
t send-keys -t top t t t t t t t t
t send-keys -t top ' '
wait_for "PAUSED"
t send-keys -t top ' '
wait_gone "PAUSED"
t send-keys -t top 3
wait_for "OwnTime▼"
t send-keys -t top n
wait_for "native frames shown"
t send-keys -t top n
wait_gone "native frames shown"
t send-keys -t top r
wait_for "samples [0-9]+ \(this interval"
echo "ok: ? 2 l t space 3 n r act"

# 3. q: exit 0, the program still runs.
t send-keys -t top q
[[ $(exit_status) == 0 ]] || fail "q: exit status $(cat "$work/status")"
restored q
kill -0 "$target" 2>/dev/null || fail "the attached program did not survive q"
echo "ok: q exits 0, the attached program runs on"

# 4. SIGTERM: 143, the program still runs.
start "$target"
wait_for "hot \("
kill -TERM "$(view_pid "profile top")" || fail "no view to signal"
[[ $(exit_status) == 143 ]] || fail "SIGTERM: exit status $(cat "$work/status")"
restored SIGTERM
kill -0 "$target" 2>/dev/null || fail "the attached program did not survive SIGTERM"
kill "$target"
wait "$target" 2>/dev/null || true
target=""
echo "ok: SIGTERM exits 143, the attached program runs on"

# 5. A launched program that ends: the view ends with its status, the terminal restored.
start -- "$python" "$here/busy.py" 2
wait_for "hot \("
[[ $(exit_status) == 0 ]] || fail "a program that ended: exit status $(cat "$work/status")"
restored "the program's end"
echo "ok: a launched program's end ends the view (exit 0)"

# 6. Ctrl-C on a launched program: 130, the program ended.
start -- "$python" "$here/busy.py" 0
wait_for "hot \("
view=$(view_pid "profile top")
program=$(pgrep -P "$view")
[[ -n $program ]] || fail "no launched program under the view"
t send-keys -t top C-c
[[ $(exit_status) == 130 ]] || fail "Ctrl-C: exit status $(cat "$work/status")"
restored Ctrl-C
kill -0 "$program" 2>/dev/null && fail "the launched program (pid $program) still runs after Ctrl-C"
echo "ok: Ctrl-C exits 130 and ends the launched program"

# 7. Without a terminal: frames, and usage errors.
"$mb" profile top --count 2 --interval 0.3 -- "$python" "$here/busy.py" 0 >"$work/plain.txt" 2>/dev/null || true
[[ $(grep -c "^mainboard profile top" "$work/plain.txt") == 2 ]] || fail "not two plain frames"
if "$mb" profile top 2>"$work/err"; then fail "no PID nor command was taken"; fi
grep -q "needs a PID or a command" "$work/err" || fail "no PID: $(cat "$work/err")"
if "$mb" profile top 999999999 2>"$work/err"; then fail "a PID past the last was taken"; fi
"$mb" profile top -- /no/such/program >/dev/null 2>"$work/err" && fail "a missing program ran"
echo "ok: plain frames without a terminal; usage errors"
