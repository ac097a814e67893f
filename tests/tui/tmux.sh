# What the terminal tests share (sourced): a tmux server of their own, a pane that runs a view
# and writes its exit status, waits on what the screen shows, and the checks that the terminal
# was given back. A test may set `cleanup_more` to a command run at the end.
command -v tmux >/dev/null || { echo "skip: no tmux"; exit 77; }
work=$(mktemp -d)
# A server of its own for each pane: a new one on the socket of one being killed can find it
# still exiting ("server exited unexpectedly").
panes=0
sock="$work/tmux.0.sock"
cleanup_more=":"
t() { tmux -S "$sock" "$@"; }
cleanup() {
  t kill-server 2>/dev/null || true
  eval "$cleanup_more" || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*" >&2
  echo "--- screen" >&2
  t capture-pane -p -t top >&2 2>/dev/null || true
  exit 1
}
# run_in_pane WIDTH HEIGHT SHELL-COMMAND: a new pane that runs it, then writes its exit status.
run_in_pane() {
  local w=$1 h=$2
  rm -f "$work/status"
  t kill-server 2>/dev/null || true
  panes=$((panes + 1))
  sock="$work/tmux.$panes.sock"
  t -f /dev/null new-session -d -s top -x "$w" -y "$h" \
    "$3; echo \$? >$(printf '%q' "$work/status"); sleep 600"
}
screen() { t capture-pane -p -t top; }
# Waits (up to 20 s) until the screen holds a match of the extended regular expression.
wait_for() {
  for _ in $(seq 200); do
    screen | grep -qE -- "$1" && return 0
    sleep 0.1
  done
  fail "the screen never showed: $1"
}
wait_gone() {
  for _ in $(seq 200); do
    screen | grep -qE -- "$1" || return 0
    sleep 0.1
  done
  fail "the screen still shows: $1"
}
exit_status() {
  for _ in $(seq 200); do
    [[ -s $work/status ]] && { cat "$work/status"; return; }
    sleep 0.1
  done
  fail "the view did not exit"
}
# The alternate screen left and the cursor shown again.
restored() {
  [[ $(t display-message -p -t top '#{alternate_on}') == 0 ]] ||
    fail "still on the alternate screen after $1"
  [[ $(t display-message -p -t top '#{cursor_flag}') == 1 ]] ||
    fail "the cursor is still hidden after $1"
}
# The view's process (the pane's shell runs it).
view_pid() { pgrep -P "$(t display-message -p -t top '#{pane_pid}')" -f -- "$1"; }
