#!/usr/bin/env bash
# Looks at mainboard's pictures in headless Chromium and Firefox (Debian's chromium and
# firefox-esr), with the network cut: the HTML report and the SVG flame graph of real profiles —
# the native sample target, a Python program, a PyTorch training step (when Debian's torch is
# installed), a job of two ranks merged, and the span workload's run with its own spans and
# (fake) GPU activity added.
#   pictures.sh SOURCE_DIR WORK_DIR MAINBOARD SAMPLE_TARGET SPAN_WORKLOAD [SCREENSHOT_DIR]
set -euo pipefail
mkdir -p "$2" "${6:-$2}"
src=$(realpath "$1") work=$(realpath "$2") mainboard=$(realpath "$3") target=$(realpath "$4")
workload=$(realpath "$5") shots=$(realpath "${6:-$2}")
python=/usr/bin/python3
"$src/install.sh" "$src" "$work"
cd "$work"
rm -f ./*.html ./*.svg ./*.report.json rank?.rank-*.json job.json torch.json

# The native target (it exits 3 by design).
"$mainboard" profile run -o target.json --hz 499 --html target.html --svg target.svg -- \
  "$target" hot 0.5 >/dev/null 2>&1 || [[ $? -eq 3 ]]
# A Python program: Python frames between the interpreter's.
"$mainboard" profile run -o python.json --hz 499 --html python.html --svg python.svg -- \
  "$python" "$src/pictures_work.py" >/dev/null 2>&1
names="target python"
# A PyTorch training step: `import torch`'s chain of frames, then libtorch under Python frames.
if "$python" -c 'import torch' 2>/dev/null; then
  "$mainboard" profile run -o torch.json --hz 199 --html torch.html --svg torch.svg -- \
    "$python" "$src/pictures_torch.py" 1 >/dev/null 2>&1
  names+=" torch"
else
  echo "pictures: no PyTorch (python3-torch) here: its profile is not looked at" >&2
fi
# A job of two ranks (the native target under a launcher's variables), merged.
for rank in 0 1; do
  RANK=$rank WORLD_SIZE=2 LOCAL_RANK=$rank "$mainboard" profile run -o "rank$rank.json" --hz 499 -- \
    "$target" hot 0.3 >/dev/null 2>&1 || [[ $? -eq 3 ]]
done
"$mainboard" profile merge rank?.rank-*.json -o job.json >/dev/null 2>&1  # -o names each rank's file
"$mainboard" profile report job.json --html job.html --svg job.svg >/dev/null
names+=" job"
# Three threads of spans, sampled; the spans it records itself joined to the samples, and GPU
# kernels, copies and readings added: a profile with every section of the page.
"$mainboard" profile run -o spans-sampled.json --hz 999 -- "$workload" spans-trace.json spans-own.json \
  >/dev/null 2>&1
"$python" "$src/pictures_gpu.py" spans-sampled.json spans-own.json gpu.json
"$mainboard" profile report gpu.json --html gpu.html --svg gpu.svg >/dev/null

names+=" gpu"
for name in $names; do
  "$mainboard" profile report "$name.json" --json --top 100000 > "$name.report.json"
done
status=0
for browser in chromium firefox; do
  node "$work/pictures_check.mjs" "$browser" "$work" "$shots" $names || status=1
done
exit $status
