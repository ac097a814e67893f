#!/usr/bin/env bash
# Checks mainboard against a real NVIDIA GPU. Run on a machine with the NVIDIA driver. A GPU
# machine may have nvcc and nvidia-smi but not our Debian packages nor a network: pack the
# programs first with scripts/device-bundle.sh (build/bundle, about 12 MB) and bring that folder
# along; without it this script builds here (installing missing packages when apt can). Writes
# everything under $OUT (default ./device-check-out), a summary in $OUT/summary.txt:
#   1. mainboard's GPU readings against nvidia-smi's: name, uuid, memory, driver, compute capability
#   2. the GPU check (tests/gpu): kernels of known character under mainboard::profile, with CUPTI
#      tracing: MEMORY and COMPUTE verdicts, copy bandwidth against the peak, a badly shaped
#      launch, demangled names, a 1 GiB cudaMemcpy
#   3. the CUDA injection library under a CUDA program launched with CUDA_INJECTION64_PATH
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/device-check-out}
mkdir -p "$OUT"
log() { echo "== $*" | tee -a "$OUT/summary.txt"; }

log "host: $(uname -m) $(nproc) CPUs"
nvidia-smi -L >"$OUT/nvidia-smi-L.txt" 2>&1 || log "nvidia-smi -L failed"

# Our programs: from build/bundle when it was carried here (scripts/device-bundle.sh: no build, no
# packages needed), else built here.
bundle=build/bundle
build=build/device
ourlibs=
if [[ -x $bundle/bin/mainboard ]]; then
  mb=$bundle/bin/mainboard gpu_check=$bundle/bin/gpu_check inject=$PWD/$bundle/bin/libmainboard_inject.so
  ourlibs=$PWD/$bundle/lib
  if ! LD_LIBRARY_PATH=$ourlibs "$mb" --version >/dev/null 2>&1; then
    ourlibs=$ourlibs:$PWD/$bundle/lib-cxx  # this machine's C++ runtime is older than ours
  fi
  if ! LD_LIBRARY_PATH=$ourlibs "$mb" --version >"$OUT/bundle.txt" 2>&1; then
    log "the carried bundle cannot run here"; ldd "$mb" >>"$OUT/bundle.txt" 2>&1; cat "$OUT/bundle.txt"; exit 1
  fi
  log "using the carried bundle of commit $(cat $bundle/commit 2>/dev/null) (libraries: $ourlibs)"
  mkdir -p "$build"
else
  if ! cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMAINBOARD_BUILD_TESTS=OFF \
       -DMAINBOARD_BUILD_BENCH=OFF >"$OUT/configure.txt" 2>&1; then
    log "configure failed (missing packages?); trying scripts/install-deps.sh"
    scripts/install-deps.sh >>"$OUT/configure.txt" 2>&1 || true
    cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMAINBOARD_BUILD_TESTS=OFF \
      -DMAINBOARD_BUILD_BENCH=OFF >>"$OUT/configure.txt" 2>&1 || { log "configure failed"; tail -20 "$OUT/configure.txt"; exit 1; }
  fi
  cmake --build "$build" -j "$(nproc)" >"$OUT/build.txt" 2>&1 || { log "build failed"; tail -30 "$OUT/build.txt"; exit 1; }
  mb=$build/src/cli/mainboard gpu_check=$build/tests/gpu/gpu_check inject=$PWD/$build/src/libmainboard_inject.so
fi
# Runs one of our programs with the libraries it was built against.
ours() { LD_LIBRARY_PATH=$ourlibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} "$@"; }

ours "$mb" gpus --json >"$OUT/gpus.json" 2>"$OUT/gpus.stderr" || log "mainboard gpus --json failed"
ours "$mb" --color=never gpus >"$OUT/gpus.txt" 2>&1
ours "$mb" --color=never snapshot >"$OUT/snapshot.txt" 2>&1
ours "$mb" snapshot --json >"$OUT/snapshot.json" 2>&1
for i in 1 2 3; do
  start=$EPOCHREALTIME
  ours "$mb" snapshot --json >/dev/null 2>&1
  awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "snapshot --json: %.3f s\n", b - a }' >>"$OUT/timing.txt"
done
nvidia-smi --query-gpu=index,name,uuid,memory.total,driver_version,compute_cap,pci.bus_id \
  --format=csv,noheader,nounits >"$OUT/nvidia-smi.csv" 2>&1

python3 - "$OUT" <<'PY' | tee -a "$OUT/summary.txt"
import csv, json, sys
out = sys.argv[1]
gpus = json.load(open(out + "/gpus.json"))["gpus"]
rows = list(csv.reader(open(out + "/nvidia-smi.csv")))
ok = True
for g, row in zip(gpus, rows):
    idx, name, uuid, mem_mib, driver, cc, bus = [c.strip() for c in row]
    info, mem = g["info"], g["telemetry"]["memory"]
    checks = [("name", info["label"], name), ("uuid", info["uuid"], uuid),
              ("memory MiB", str(info["memory_total_bytes"] // (1 << 20)), mem_mib),
              ("driver", info["driver_version"], driver),
              ("compute capability", info["compute_capability"], cc),
              ("pci bus id", info["pci_bus_id"].upper(), bus.upper())]
    for what, ours, theirs in checks:
        same = ours == theirs
        ok &= same
        print(f"GPU {idx} {what}: mainboard={ours!r} nvidia-smi={theirs!r} {'OK' if same else 'DIFFERENT'}")
    print(f"GPU {idx} sm_count={info['sm_count']} peak_bandwidth_gbs={info['peak_bandwidth_gbs']} "
          f"coherent={info['coherent']} memory.source={mem['source']} used={mem['used_bytes']}")
if len(gpus) != len(rows):
    ok = False
    print(f"GPU count: mainboard={len(gpus)} nvidia-smi={len(rows)} DIFFERENT")
print("RESULT:", "all identical" if ok else "differences above")
PY
log "GPU check: kernels built with nvcc, profiled through CUPTI"
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
if "$nvcc" -O2 -shared -Xcompiler -fPIC -o "$build/libgpu_kernels.so" tests/gpu/kernels.cu >"$OUT/nvcc.txt" 2>&1; then
  ours timeout 300 "$gpu_check" "$PWD/$build/libgpu_kernels.so" "$OUT/gpu_check.json" 2>&1 | tee "$OUT/gpu_check.txt"
  grep -E "^(PASS|FAIL|RESULT)" "$OUT/gpu_check.txt" >>"$OUT/summary.txt"
else
  log "nvcc failed"; tail -20 "$OUT/nvcc.txt"
fi

log "injection: a CUDA program launched with CUDA_INJECTION64_PATH writes its trace at exit"
cat >"$build/inject_probe.cu" <<'CU'
#include <cstdio>
__global__ void probe_kernel(float* x) { x[threadIdx.x] += 1.0f; }
int main() {
  float* x = nullptr;
  cudaMalloc(&x, 1024 * sizeof(float));
  for (int i = 0; i < 5; ++i) probe_kernel<<<1, 256>>>(x);
  cudaDeviceSynchronize();
  std::puts("probe done");
  return 0;
}
CU
if "$nvcc" -O2 -o "$build/inject_probe" "$build/inject_probe.cu" >>"$OUT/nvcc.txt" 2>&1; then
  CUDA_INJECTION64_PATH=$inject MAINBOARD_INJECT_OUTPUT=$OUT/inject_profile.json \
    ours timeout 60 "$build/inject_probe" >"$OUT/inject.txt" 2>&1
  if [[ -s $OUT/inject_profile.json ]]; then
    ours "$mb" profile report "$OUT/inject_profile.json" | tee -a "$OUT/inject.txt"
    if grep -q "probe_kernel(float\*)" "$OUT/inject.txt"; then log "PASS injection traced probe_kernel"; else log "FAIL injection: no probe_kernel"; fi
  else
    log "FAIL injection: no profile written"; cat "$OUT/inject.txt"
  fi
fi
log "done; files in $OUT"
