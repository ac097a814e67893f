#!/usr/bin/env bash
# One wheel per CPython on this machine: Debian's python3 and every pyenv CPython 3.9 or later,
# all from one Release build (the libraries and the command are built once; the extension once
# per interpreter), into OUT (dist/ by default). Says which versions of 3.9-3.13 it did not find.
set -euo pipefail
out=${1:-dist}
root=$(cd "$(dirname "$0")/.." && pwd)
build="$root/build/wheels"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_UNITY_BUILD=ON -DCMAKE_UNITY_BUILD_BATCH_SIZE=8 \
  -DPython_EXECUTABLE=/usr/bin/python3 -DMAINBOARD_PYTHON_EXTRA=pyenv \
  -DMAINBOARD_BUILD_TESTS=OFF -DMAINBOARD_BUILD_BENCH=OFF -DMAINBOARD_INSTALL=OFF >/dev/null
cmake --build "$build" --target mainboard_python mainboard_cli
mkdir -p "$out"
/usr/bin/python3 "$root/tools/wheel/wheelkit.py" "$build" "$out"
for minor in 9 10 11 12 13; do
  if ! grep -q "python3\.$minor=" "$build/python-packages.txt" &&
     ! { [[ $minor == 11 ]] && grep -q "^/usr/bin/python3=" "$build/python-packages.txt"; }; then
    echo "build-wheels: no CPython 3.$minor here: no wheel for it" >&2
  fi
done
