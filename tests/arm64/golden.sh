#!/usr/bin/env bash
# The arm64 command, run under the emulator, prints what the native one prints for the
# grace-hopper host (a GH200 from the fake NVIDIA libraries, themselves built for arm64): the
# snapshot, the GPUs and the schematic, each compared with the native golden file.
# Usage: golden.sh EMULATOR MAINBOARD FAKE_NVML FAKE_CUDA FIXTURES GOLDEN
set -uo pipefail
emulator=$1 mb=$2 nvml=$3 cuda=$4 fixtures=$5 golden=$6
host=$fixtures/hosts/grace-hopper

readelf -h "$mb" | grep -q 'AArch64' || { echo "not an arm64 binary: $mb" >&2; exit 1; }

failed=0
out=$(mktemp)
trap 'rm -f "$out"' EXIT
# compare NAME GOLDEN ARGS...: the command's output against the golden file.
compare() {
  local name=$1 expected=$2
  shift 2
  env -u MAINBOARD_SYSROOT -u NO_COLOR -u CUDA_VISIBLE_DEVICES PATH=/usr/bin:/bin \
    MAINBOARD_FAKE_GPU_SCENARIO="$fixtures/gpus/gh200.json" \
    MAINBOARD_NVML_LIBRARY="$nvml" MAINBOARD_CUDA_LIBRARY="$cuda" \
    "$emulator" "$mb" --sysroot "$host" "$@" >"$out"
  local rc=$?
  if ((rc != 0)); then
    echo "FAIL $name: exit $rc" >&2
    failed=1
  elif ! diff -u "$expected" "$out" >&2; then
    echo "FAIL $name: differs from $expected" >&2
    failed=1
  else
    echo "ok   $name"
  fi
}

compare "snapshot" "$golden/grace-hopper.txt" --color=never snapshot
compare "gpus" "$golden/grace-hopper.gpus.txt" --color=never gpus
compare "schematic" "$golden/schematic/grace-hopper.txt" --color=never --width 80
compare "schematic, colour" "$golden/schematic/grace-hopper.color.txt" --color=always --width 80
exit $failed
