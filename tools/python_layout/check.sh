#!/usr/bin/env bash
# Fails when the layout the compiler computes from an installed CPython's headers differs from the
# line src/sampling/python_layouts.inc holds for that version (or the table lacks the version).
# Exit 77 (skipped) when no CPython headers are installed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
table="$here/../../src/sampling/python_layouts.inc"
lines=$("$here/generate.sh" "$@")
if [ -z "$lines" ]; then echo "no CPython headers with internal ones here: skipped"; exit 77; fi
status=0
while IFS= read -r line; do
  if grep -qxF "$line" "$table"; then
    echo "ok      ${line%%,*}"
  else
    echo "DIFFERS ${line%%,*}: the headers give"; echo "  $line"
    echo "  the table has"; grep -F "${line%%,*}," "$table" | sed 's/^/  /' || echo "  nothing"
    status=1
  fi
done <<< "$lines"
exit $status
