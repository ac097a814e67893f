#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace mainboard::core {

using EnvMap = std::map<std::string, std::string, std::less<>>;

/// A copy of this process's environment.
EnvMap process_environment();

/// A variable's value when set and non-empty.
std::optional<std::string> env_value(const EnvMap& env, std::string_view name);
/// A variable's value when set, even to the empty string (CUDA_VISIBLE_DEVICES="" means none).
std::optional<std::string> env_set(const EnvMap& env, std::string_view name);

}  // namespace mainboard::core
