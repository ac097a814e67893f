#!/usr/bin/env bash
# Installs the pinned trace consumer (npm registry) into the build tree once, then checks a
# trace the span workload wrote against its saved profile.
#   run.sh SOURCE_DIR WORK_DIR WORKLOAD
set -euo pipefail
src=$1 work=$2 workload=$3
mkdir -p "$work"
cp "$src/package.json" "$src/package-lock.json" "$src/perfetto_check.mjs" "$work/"
if ! cmp -s "$src/package-lock.json" "$work/node_modules/.installed-lock" 2>/dev/null; then
  (cd "$work" && npm ci --no-audit --no-fund --loglevel=error)
  cp "$src/package-lock.json" "$work/node_modules/.installed-lock"
fi
"$workload" "$work/trace.json" "$work/profile.json"
node "$work/perfetto_check.mjs" "$work/trace.json" "$work/profile.json"
