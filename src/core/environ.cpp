#include "core/environ.hpp"

#include <cstring>

extern char** environ;

namespace mainboard::core {

EnvMap process_environment() {
  EnvMap env;
  for (char** e = environ; e && *e; ++e) {
    const char* eq = std::strchr(*e, '=');
    if (!eq) continue;
    env[std::string(*e, static_cast<std::size_t>(eq - *e))] = std::string(eq + 1);
  }
  return env;
}

std::optional<std::string> env_value(const EnvMap& env, std::string_view name) {
  auto value = env_set(env, name);
  if (!value || value->empty()) return std::nullopt;
  return value;
}

std::optional<std::string> env_set(const EnvMap& env, std::string_view name) {
  if (env.lookups_) env.lookups_->add(name);
  auto it = env.vars_.find(name);
  if (it == env.vars_.end()) return std::nullopt;
  return it->second;
}

}  // namespace mainboard::core
