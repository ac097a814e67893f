#pragma once

#include <string>
#include <vector>

#include "mainboard/profile.hpp"

namespace mainboard::detail {

/// Called by the -finstrument-functions hooks (mainboard_instrument).
void instrumented_enter(void* fn) noexcept;
void instrumented_exit(void* fn) noexcept;

/// Which modules' functions become spans; empty: none.
void set_instrumented_modules(std::vector<std::string> modules);

/// Replaces the "@0x…" placeholders of instrumented functions in the paths by their names.
void name_instrumented_functions(Profile& p);

}  // namespace mainboard::detail
