#!/usr/bin/env bash
# Looks at mainboard's pictures in headless Chromium and Firefox (Debian's chromium and
# firefox-esr), with the network cut: the HTML report and the SVG flame graph of three real profiles — the native sample target, a Python
# program, and the span workload's run with its own spans and (fake) GPU activity added.
#   pictures.sh SOURCE_DIR WORK_DIR MAINBOARD SAMPLE_TARGET SPAN_WORKLOAD [SCREENSHOT_DIR]
set -euo pipefail
mkdir -p "$2" "${6:-$2}"
src=$(realpath "$1") work=$(realpath "$2") mainboard=$(realpath "$3") target=$(realpath "$4")
workload=$(realpath "$5") shots=$(realpath "${6:-$2}")
python=/usr/bin/python3
"$src/install.sh" "$src" "$work"
cd "$work"
rm -f ./*.html ./*.svg ./*.report.json

# The native target (it exits 3 by design).
"$mainboard" profile run -o target.json --hz 499 --html target.html --svg target.svg -- \
  "$target" hot 0.5 >/dev/null 2>&1 || [[ $? -eq 3 ]]
# A Python program: Python frames between the interpreter's.
"$mainboard" profile run -o python.json --hz 499 --html python.html --svg python.svg -- \
  "$python" "$src/pictures_work.py" >/dev/null 2>&1
# Three threads of spans, sampled; the spans it records itself joined to the samples, and GPU
# kernels, copies and readings added: a profile with every section of the page.
"$mainboard" profile run -o spans-sampled.json --hz 999 -- "$workload" spans-trace.json spans-own.json \
  >/dev/null 2>&1
"$python" "$src/pictures_gpu.py" spans-sampled.json spans-own.json gpu.json
"$mainboard" profile report gpu.json --html gpu.html --svg gpu.svg >/dev/null

for name in target python gpu; do
  "$mainboard" profile report "$name.json" --json --top 100000 > "$name.report.json"
done
status=0
for browser in chromium firefox; do
  node "$work/pictures_check.mjs" "$browser" "$work" "$shots" target python gpu || status=1
done
exit $status
