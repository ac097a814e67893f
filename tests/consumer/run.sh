#!/usr/bin/env bash
# Installs the build tree into a scratch prefix, then configures, builds and runs a consumer
# project that finds the package with find_package(mainboard): a program of its own and the
# README's two library examples, extracted from the README as written.
set -euo pipefail
build=$1 src=$2 work=$3 readme=$4
rm -rf "$work"
mkdir -p "$work/examples"
# Each example is the ```cpp block after a "<!-- example: NAME.cpp (...) -->" line.
awk -v dir="$work/examples" '
  /^<!-- example: / { name = $3; next }
  name != "" && /^```cpp/ { out = dir "/" name; printf "" > out; copying = 1; next }
  copying && /^```/ { copying = 0; name = ""; close(out); next }
  copying { print >> out }
' "$readme"
for f in machine.cpp spans.cpp; do
  [[ -s "$work/examples/$f" ]] || { echo "README example $f not found"; exit 1; }
done
cmake --install "$build" --prefix "$work/prefix" >/dev/null
cmake -S "$src" -B "$work/build" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" \
      -DCMAKE_BUILD_TYPE=Release -DREADME_EXAMPLES="$work/examples" >/dev/null
cmake --build "$work/build" >/dev/null
export LD_LIBRARY_PATH="$work/prefix/lib:${LD_LIBRARY_PATH:-}"
"$work/build/consumer"
(cd "$work" && "$work/build/readme_machine" >/dev/null)
# The spans example needs the span library alone, and its profile reads in the command.
if readelf -d "$work/build/readme_spans" | grep -q 'libmainboard\.so'; then
  echo "readme_spans links libmainboard.so"; exit 1
fi
(cd "$work" && "$work/build/readme_spans")
"$work/prefix/bin/mainboard" profile report "$work/run.json" | grep -q "step/loss/forward"
# The Python package, from the prefix's Python path, finding the installed libraries.
python_dir=$(ls -d "$work"/prefix/lib/python3*/dist-packages 2>/dev/null | head -n 1)
if [[ -n "$python_dir" ]]; then
  env -u LD_LIBRARY_PATH PYTHONPATH="$python_dir" /usr/bin/python3 -c \
    'import mainboard; assert mainboard.Machine().cpu.info.threads > 0; print(mainboard.__file__)'
fi
test -x "$work/prefix/bin/mainboard"
"$work/prefix/bin/mainboard" --version
