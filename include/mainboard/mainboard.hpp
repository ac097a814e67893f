#pragma once

/// Everything in one include. Prefer the individual headers in code that cares about
/// compile time.
#include "mainboard/accel.hpp"
#include "mainboard/amd.hpp"
#include "mainboard/board.hpp"
#include "mainboard/busy.hpp"
#include "mainboard/cgroup.hpp"
#include "mainboard/cpu.hpp"
#include "mainboard/cuda.hpp"
#include "mainboard/environment.hpp"
#include "mainboard/error.hpp"
#include "mainboard/gpu.hpp"
#include "mainboard/machine.hpp"
#include "mainboard/memory.hpp"
#include "mainboard/npu.hpp"
#include "mainboard/nvidia.hpp"
#include "mainboard/runner.hpp"
#include "mainboard/snapshot.hpp"
#include "mainboard/storage.hpp"
#include "mainboard/toolchain.hpp"
#include "mainboard/unit.hpp"
#include "mainboard/version.hpp"
