#!/usr/bin/env bash
# Samples a program with `mainboard profile run --perfetto` and checks the trace's stack samples
# with the Chrome DevTools trace engine against the saved profile: every sample's stack, its time,
# and the flame chart of calls built from them.
#   perfetto_samples.sh SOURCE_DIR WORK_DIR MAINBOARD TARGET
set -euo pipefail
src=$1 work=$2 mainboard=$3 target=$4
"$src/install.sh" "$src" "$work"
"$mainboard" profile run -o "$work/sampled.json" --hz 499 --perfetto "$work/sampled.trace.json" \
  -- "$target" hot 0.3 >/dev/null 2>&1 || [[ $? -eq 3 ]]  # the target exits 3
node "$work/perfetto_check.mjs" "$work/sampled.trace.json" "$work/sampled.json"
