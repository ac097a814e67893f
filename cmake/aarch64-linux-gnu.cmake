# Cross-building for arm64 (Grace, Graviton, Ampere) on an x86-64 Debian host: Debian's aarch64
# cross compiler, and Debian's arm64 libraries installed alongside the host's (multiarch:
# `dpkg --add-architecture arm64`, then the `-dev:arm64` packages; scripts/install-deps.sh
# --arm64). Programs built here run under qemu-user: CMake runs test discovery through it.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)

# The arm64 libraries live beside the host's, in /usr/lib/aarch64-linux-gnu; headers are shared.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
# pkg-config: the arm64 .pc files only.
set(ENV{PKG_CONFIG_LIBDIR} "/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_PATH} "")

find_program(MAINBOARD_QEMU_AARCH64 NAMES qemu-aarch64-static qemu-aarch64)
if(MAINBOARD_QEMU_AARCH64)
  # The emulated programs find their dynamic loader and libraries where multiarch puts them.
  set(CMAKE_CROSSCOMPILING_EMULATOR ${MAINBOARD_QEMU_AARCH64})
endif()
