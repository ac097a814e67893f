#!/usr/bin/env bash
# Samples a program with `mainboard profile run --speedscope` and validates the file against the
# schema speedscope publishes (from its npm package).
#   speedscope.sh SOURCE_DIR WORK_DIR MAINBOARD TARGET
set -euo pipefail
src=$1 work=$2 mainboard=$3 target=$4
"$src/install.sh" "$src" "$work"
"$mainboard" profile run -o "" --hz 499 --speedscope "$work/run.speedscope.json" -- "$target" hot 0.3 >/dev/null 2>&1 ||
  [[ $? -eq 3 ]]  # the target exits 3
node "$work/speedscope_check.mjs" "$work/run.speedscope.json" hot_a hot_b
