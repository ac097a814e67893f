#!/usr/bin/env bash
# Packs what scripts/device-check.sh needs into build/bundle, for a GPU machine that cannot build
# mainboard itself (no Debian packages, no network): the command, the GPU check and the injection
# library, stripped, with the shared libraries they need from this machine. The C library stays the
# GPU machine's own; the C++ runtime goes in lib-cxx, used there only when the machine's own is
# too old to load our programs.
#   scripts/device-bundle.sh [BUILD_DIR]    (default build/default, built first)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/default}
cmake --build "$build" --target mainboard_cli gpu_check mainboard_inject mainboard_loaded_later >/dev/null
out=build/bundle
rm -rf "$out"
mkdir -p "$out/bin" "$out/lib" "$out/lib-cxx"
programs=("$build/src/cli/mainboard" "$build/tests/gpu/gpu_check" "$build/src/libmainboard_inject.so")
for p in "${programs[@]}"; do
  strip --strip-unneeded -o "$out/bin/$(basename "$p")" "$p"
done
# With what the command loads when first needed (elfutils, libmicrohttpd): see src/CMakeLists.txt.
for lib in $(ldd "${programs[@]}" "$build/src/libmainboard_loaded_later.so" | awk '$2 == "=>" && $3 ~ /^\// {print $3}' | sort -u); do
  case $(basename "$lib") in
    libc.so.* | libm.so.* | libpthread.so.* | libdl.so.* | librt.so.* | ld-linux*) ;;
    libstdc++.so.* | libgcc_s.so.*) cp -L "$lib" "$out/lib-cxx/" ;;
    *) cp -L "$lib" "$out/lib/" ;;
  esac
done
git rev-parse --short HEAD >"$out/commit" 2>/dev/null || true
du -sh "$out"
