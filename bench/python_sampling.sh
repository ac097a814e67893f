#!/usr/bin/env bash
# The slowdown of a CPU-bound Python program (bench/python_work.py: a fixed amount of work on two
# threads, timed by the program itself) under `mainboard profile run` at 100 Hz: bare, with
# --no-python (native frames only), with Python frames (the default: read while it runs), with
# --pause (stopped for each read), and --wall. Runs
# interleaved, median of each; ratios to bare from this one run. Also the whole command's time
# (the profiler's start and end included) and the reads dropped as torn, from the profiles.
#   bench/python_sampling.sh [CLI] [RUNS]
set -euo pipefail
cli=${1:-build/default/src/cli/mainboard}
runs=${2:-7}
python=/usr/bin/python3
work="$(dirname "$0")/python_work.py"
rounds=150
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

now() { date +%s%N; }
declare -A work whole
modes=(bare no-python python paused wall)
for ((i = 0; i < runs; i++)); do
  for mode in "${modes[@]}"; do
    start=$(now)
    case $mode in
      bare) "$python" "$work" "$rounds" "$tmp/work" ;;
      no-python) "$cli" profile run --hz 100 --no-python -o "$tmp/$mode.json" -- "$python" "$work" "$rounds" "$tmp/work" >/dev/null 2>&1 ;;
      python) "$cli" profile run --hz 100 -o "$tmp/$mode-$i.json" -- "$python" "$work" "$rounds" "$tmp/work" >/dev/null 2>&1 ;;
      paused) "$cli" profile run --hz 100 --pause -o "$tmp/$mode.json" -- "$python" "$work" "$rounds" "$tmp/work" >/dev/null 2>&1 ;;
      wall) "$cli" profile run --hz 100 --wall -o "$tmp/$mode-$i.json" -- "$python" "$work" "$rounds" "$tmp/work" >/dev/null 2>&1 ;;
    esac
    whole[$mode]+="$(( ($(now) - start) / 1000 )) "
    work[$mode]+="$(cat "$tmp/work") "
  done
done
median() { tr ' ' '\n' | grep . | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
bare_work=$(echo "${work[bare]}" | median)
bare_whole=$(echo "${whole[bare]}" | median)
printf '%-28s %14s %8s %16s %8s\n' "at 100 Hz, 2 threads" "work (median)" "vs bare" "whole command" "vs bare"
for mode in "${modes[@]}"; do
  w=$(echo "${work[$mode]}" | median)
  c=$(echo "${whole[$mode]}" | median)
  printf '%-28s %11.1f ms %7.3fx %13.1f ms %7.3fx\n' "$mode" "$w" "$(echo "$w / $bare_work" | bc -l)" \
    "$(echo "$c / 1000" | bc -l)" "$(echo "$c / $bare_whole" | bc -l)"
done
# Reads that did not validate, from the profiles' "python: N of M stack reads changed" lines.
"$python" - "$tmp" <<'PY'
import glob, json, re, sys
dropped = reads = 0
for path in glob.glob(sys.argv[1] + "/*-*.json"):
    profile = json.load(open(path))
    n = len(profile.get("samples", []))
    for line in profile.get("unavailable", []):
        m = re.match(r"python: (\d+) of (\d+) stack reads", line)
        if m:
            dropped += int(m.group(1))
            reads += int(m.group(2))
print(f"torn Python reads dropped: {dropped} in the runs' profiles"
      + (f" ({1000 * dropped / reads:.1f} per thousand reads of the runs that dropped any)"
         if reads else " (none reported)"))
PY
