#pragma once

#include <string>
#include <vector>

#include "mainboard/export.hpp"
#include "mainboard/profile.hpp"

namespace mainboard::detail {

/// Called by the -finstrument-functions hooks (mainboard::instrument, a static library linked
/// into the instrumented program, hence exported).
MAINBOARD_API void instrumented_enter(void* fn) noexcept;
MAINBOARD_API void instrumented_exit(void* fn) noexcept;

/// Which modules' functions become spans; empty: none.
void set_instrumented_modules(std::vector<std::string> modules);

/// The /proc/self/maps lines of the modules holding the "@0x…" placeholders in `p`'s paths
/// (Profile::function_maps), so that the reader of the profile can name them.
std::vector<std::string> instrumented_function_maps(const Profile& p);

}  // namespace mainboard::detail
