#!/usr/bin/env bash
# Installs the pinned checkers (npm registry) into WORK_DIR once per package-lock.json; safe to
# call from checks that run at the same time.
#   install.sh SOURCE_DIR WORK_DIR
set -euo pipefail
src=$1 work=$2
mkdir -p "$work"
exec 9>"$work/.install.lock"
flock 9
cp "$src/package.json" "$src/package-lock.json" "$src"/*.mjs "$work/"
if ! cmp -s "$src/package-lock.json" "$work/node_modules/.installed-lock" 2>/dev/null; then
  (cd "$work" && npm ci --no-audit --no-fund --loglevel=error)
  cp "$src/package-lock.json" "$work/node_modules/.installed-lock"
fi
