#pragma once

#include <spdlog/spdlog.h>

namespace mainboard::core {

/// The library's logger: stderr, level from MAINBOARD_LOG (trace, debug, info, warn, error,
/// off; default warn). Probing code logs why a reading is missing at debug level.
spdlog::logger& log();
void set_log_level(spdlog::level::level_enum level);

}  // namespace mainboard::core
