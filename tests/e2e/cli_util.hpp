#pragma once

// The mainboard command run as a user runs it, for the end-to-end tests.
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "mainboard/runner.hpp"

/// Runs the command with `args` (no sysroot from the environment, no NO_COLOR unless given).
inline mainboard::CommandResult cli(std::vector<std::string> args,
                                    std::map<std::string, std::optional<std::string>> env = {}) {
  mainboard::Command c;
  c.argv = {MAINBOARD_CLI};
  c.argv.insert(c.argv.end(), args.begin(), args.end());
  c.timeout = std::chrono::seconds(60);
  c.environment = std::move(env);
  c.environment.emplace("MAINBOARD_SYSROOT", std::nullopt);
  c.environment.emplace("NO_COLOR", std::nullopt);
  return mainboard::LocalRunner("/usr/bin:/bin").run(c);
}

/// A fixture host's sysroot.
inline std::string host(const std::string& name) {
  return std::string(MAINBOARD_FIXTURES) + "/hosts/" + name;
}
