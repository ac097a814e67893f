#pragma once

#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>

namespace mainboard::core {

/// The names of the variables the probes looked up (gather records the environment a host's
/// probes actually read, not a list kept by hand).
class EnvLookups {
 public:
  void add(std::string_view name) {
    std::lock_guard<std::mutex> lock(mutex_);
    names_.emplace(name);
  }
  std::set<std::string> names() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return names_;
  }

 private:
  mutable std::mutex mutex_;
  std::set<std::string> names_;
};

/// Environment variables as the probes see them: this process's, or a recorded host's.
class EnvMap {
 public:
  using Map = std::map<std::string, std::string, std::less<>>;
  EnvMap() = default;
  template <class It>
  EnvMap(It first, It last) : vars_(first, last) {}
  EnvMap(std::initializer_list<Map::value_type> vars) : vars_(vars) {}

  std::string& operator[](const std::string& name) { return vars_[name]; }
  const Map& vars() const { return vars_; }
  Map::const_iterator begin() const { return vars_.begin(); }
  Map::const_iterator end() const { return vars_.end(); }

  /// Every lookup through env_value and env_set is told to `lookups` from now on (copies too).
  void record_lookups(std::shared_ptr<EnvLookups> lookups) { lookups_ = std::move(lookups); }

 private:
  friend std::optional<std::string> env_set(const EnvMap& env, std::string_view name);
  Map vars_;
  std::shared_ptr<EnvLookups> lookups_;
};

/// A copy of this process's environment.
EnvMap process_environment();

/// A variable's value when set and non-empty.
std::optional<std::string> env_value(const EnvMap& env, std::string_view name);
/// A variable's value when set, even to the empty string (CUDA_VISIBLE_DEVICES="" means none).
std::optional<std::string> env_set(const EnvMap& env, std::string_view name);

}  // namespace mainboard::core
