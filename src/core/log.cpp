#include "core/log.hpp"

#include <spdlog/sinks/stdout_sinks.h>

#include <cstdlib>
#include <mutex>

namespace mainboard::core {

spdlog::logger& log() {
  static std::shared_ptr<spdlog::logger> logger = [] {
    auto sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
    auto l = std::make_shared<spdlog::logger>("mainboard", sink);
    l->set_pattern("mainboard: %l: %v");
    auto level = spdlog::level::warn;
    if (const char* env = std::getenv("MAINBOARD_LOG"); env && *env)
      level = spdlog::level::from_str(env);
    l->set_level(level);
    return l;
  }();
  return *logger;
}

void set_log_level(spdlog::level::level_enum level) {
  log().set_level(level);
}

}  // namespace mainboard::core
