#!/usr/bin/env bash
# Fails when the layout the compiler computes from an installed CPython's headers differs from the
# block src/sampling/python_layouts.inc holds for that version (or the table lacks the version).
# Exit 77 (skipped) when no CPython headers are installed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
table="$here/../../src/sampling/python_layouts.inc"
generated=$(mktemp)
trap 'rm -f "$generated"' EXIT
"$here/generate.sh" "$@" > "$generated"
if [ ! -s "$generated" ]; then echo "no CPython headers with internal ones here: skipped"; exit 77; fi
# block VERSION FILE: the lines from "{  // VERSION" to the next "},".
block() { awk -v head="{  // $1" '$0 == head { on = 1 } on { print } on && $0 == "}," { exit }' "$2"; }
status=0
for version in $(sed -n 's|^{  // \([0-9.]*\)$|\1|p' "$generated" | sort -u); do
  if diff -u <(block "$version" "$table") <(block "$version" "$generated") > /dev/null; then
    echo "ok      $version"
  else
    echo "DIFFERS $version: the table, then what the headers give"
    diff -u <(block "$version" "$table") <(block "$version" "$generated") | sed 's/^/  /' || true
    status=1
  fi
done
exit $status
