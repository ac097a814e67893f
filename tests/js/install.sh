#!/usr/bin/env bash
# Installs the pinned checkers (npm registry) into WORK_DIR once per package-lock.json; safe to
# call from checks that run at the same time.
#   install.sh SOURCE_DIR WORK_DIR
set -euo pipefail
src=$1 work=$2
mkdir -p "$work"
exec 9>"$work/.install.lock"
flock 9
# Replaced by rename, and only when changed: another check may be reading its script right now.
for f in "$src/package.json" "$src/package-lock.json" "$src"/*.mjs; do
  name=$(basename "$f")
  if ! cmp -s "$f" "$work/$name"; then
    cp "$f" "$work/.$name.tmp"
    mv -f "$work/.$name.tmp" "$work/$name"
  fi
done
if ! cmp -s "$src/package-lock.json" "$work/node_modules/.installed-lock" 2>/dev/null; then
  (cd "$work" && npm ci --no-audit --no-fund --loglevel=error)
  cp "$src/package-lock.json" "$work/node_modules/.installed-lock"
fi
