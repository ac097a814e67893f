#!/usr/bin/env bash
# Checks a Perfetto trace the span workload wrote, with the Chrome DevTools trace engine, against
# its saved profile.
#   run.sh SOURCE_DIR WORK_DIR WORKLOAD
set -euo pipefail
src=$1 work=$2 workload=$3
"$src/install.sh" "$src" "$work"
"$workload" "$work/trace.json" "$work/profile.json"
node "$work/perfetto_check.mjs" "$work/trace.json" "$work/profile.json"
