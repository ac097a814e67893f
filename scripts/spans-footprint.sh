#!/usr/bin/env bash
# The span library's footprint, side by side in one run: the same program linked against
# mainboard::spans and against mainboard::mainboard — the shared libraries it loads, the time from
# a session's start to its saved file, and the memory 256 threads map when each stores one span;
# then what each library exports.
#   scripts/spans-footprint.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/default}
spans=$build/bench/spans_footprint
full=$build/bench/spans_footprint_full
libs() { ldd "$1" | grep -c '=>'; }
echo "shared libraries loaded (ldd): spans $(libs "$spans"), full $(libs "$full")"
echo "  spans: $(ldd "$spans" | awk '/=>/ {print $1}' | tr '\n' ' ')"
for run in 1 2; do
  echo "session to saved file, median of 15 (run $run): spans $("$spans" session 15 | awk '{print $2}') us," \
       "full $("$full" session 15 | awk '{print $2}') us"
done
echo "256 threads storing one span each: spans $("$spans" threads 256 | awk '{print $6}') KiB," \
     "full $("$full" threads 256 | awk '{print $6}') KiB"
for lib in "$build/src/libmainboard_spans.so" "$build/src/libmainboard.so"; do
  echo "exported symbols of $(basename "$lib"): $(nm -DC --defined-only "$lib" | wc -l)"
done
