#!/usr/bin/env bash
# Prints the layout line of each CPython whose headers are given (include directories such as
# /usr/include/python3.11), computed by the compiler from that version's own headers. Without
# arguments: Debian's python3 and every pyenv interpreter present. The lines go into
# src/sampling/python_layouts.inc; tools/python_layout/check.sh (ctest python_layouts) checks that they agree.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cc=${CC:-cc}
dirs=("$@")
if [ ${#dirs[@]} -eq 0 ]; then
  for d in /usr/include/python3.*; do [ -f "$d/internal/pycore_runtime.h" ] && dirs+=("$d"); done
  root=$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")
  for d in "$root"/versions/3.*/include/python3.*; do
    [ -f "$d/internal/pycore_runtime.h" ] && dirs+=("$d")
  done
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for d in "${dirs[@]}"; do
  # The interpreter of those headers (<prefix>/include/python3.X → <prefix>/bin/python3.X) says
  # where its asyncio Task keeps its fields; without it they stay unknown (-1).
  name=$(basename "$d")
  prefix=$(dirname "$(dirname "$d")")
  [ "$prefix" = / ] && prefix=/usr
  tasks=()
  if [ -x "$prefix/bin/$name" ]; then
    read -r -a tasks <<< "$("$prefix/bin/$name" "$here/asyncio_layout.py")"
  fi
  "$cc" -w -I"$d" -I"$d/internal" "${tasks[@]}" "$here/layout.c" -o "$tmp/layout"
  "$tmp/layout"
done
