#!/usr/bin/env bash
# Installs the Debian packages mainboard needs to build, test and run, and only those missing.
# Idempotent: a second run finds everything present and returns at once.
set -euo pipefail

packages=(
  # build (lld: the command's link puts the code its first commands run side by side, which GNU
  # ld 2.40 cannot; 16 for glibc's packed relocations, see src/cli/CMakeLists.txt)
  g++ cmake ninja-build pkg-config make lld-16
  # libraries (see README: why each one)
  libhwloc-dev nlohmann-json3-dev libcli11-dev libfmt-dev libspdlog-dev libdw-dev libelf-dev
  # the HTTP server of `mainboard serve` (event loops: idle connections cost no thread; the one
  # Prometheus's C client library serves with)
  libmicrohttpd-dev
  # zlib: gzipped PyTorch profiler traces read, pprof profiles written
  zlib1g-dev
  # tests and benchmarks (clang: the libFuzzer target; strace: what a spans-only program runs
  # and opens; locales: a comma-decimal locale for the parsing tests)
  libgtest-dev libgmock-dev libbenchmark-dev hyperfine python3 python3-psutil clang strace
  locales
  # callgrind: which functions the first commands run (scripts/startup-order.py, make bench)
  valgrind
  libclang-rt-14-dev
  # the Python package (pybind11 extension module, tests with Debian's pytest)
  python3-dev python3-pybind11 python3-pytest
  # real clients the Python tests run with: a CPU PyTorch (training loops, spans, sampling of
  # libtorch), Rich (the terminal view and tables), mypy (the stubs and type hints)
  python3-torch python3-rich python3-mypy
  # Jupyter's kernel and nbconvert: a notebook that profiles, executed and exported as users do
  python3-ipykernel python3-nbconvert
  # wheels (make wheels, and the tests that install them): patchelf sets the bundled
  # libraries' run paths; venv makes the environments they are installed into
  patchelf python3-venv python3-pip
  # a real terminal for the live view's tests (`mainboard top` driven by keys, its screen read)
  tmux
  # Go's pprof (`go tool pprof`): reads the pprof profiles `--pprof` writes, in the tests
  golang-go
  # the headless browsers that look at the HTML report and the SVG flame graph (tests/js)
  chromium firefox-esr
  # run time, optional readings (DIMMs)
  dmidecode
  # a throw-away Slurm cluster for the fleet tests (scripts/slurm-up.sh)
  slurm-wlm munge
  # a real Prometheus (and promtool) for the serve tests (scripts/prometheus-up.sh), and curl
  # to ask it
  prometheus curl
)

# --arm64: also what `make test-arm64` needs to cross-build for arm64 and run the tests under
# emulation: Debian's aarch64 cross compiler, qemu-user, and the arm64 builds of the libraries
# above (multiarch: installed beside the host's), with arm64 libpython for the arm64 wheel.
arm64=0
[[ "${1:-}" == "--arm64" ]] && arm64=1
if ((arm64)); then
  packages+=(g++-aarch64-linux-gnu qemu-user-static)
  for lib in libhwloc-dev libfmt-dev libspdlog-dev libdw-dev libelf-dev libmicrohttpd-dev \
             zlib1g-dev libgtest-dev libgmock-dev libpython3-dev; do
    packages+=("$lib:arm64")
  done
fi

missing=()
for p in "${packages[@]}"; do
  # One line per installed architecture (a -dev package installed for arm64 too answers twice).
  status=$(dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null || true)
  grep -qx "install ok installed" <<< "$status" || missing+=("$p")
done

# Node.js and npm run the trace-format checks; any installation on PATH will do.
command -v node >/dev/null 2>&1 || missing+=(nodejs)
command -v npm >/dev/null 2>&1 || missing+=(npm)

if ((${#missing[@]} == 0)); then
  exit 0
fi

echo "install-deps: installing ${missing[*]}" >&2
sudo=()
if [[ $(id -u) -ne 0 ]]; then
  if command -v sudo >/dev/null 2>&1; then
    sudo=(sudo)
  else
    echo "install-deps: need root (or sudo) to install: ${missing[*]}" >&2
    exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
if ((arm64)) && ! dpkg --print-foreign-architectures | grep -qx arm64; then
  "${sudo[@]}" dpkg --add-architecture arm64
fi
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
