#include "machine/record.hpp"

#include <nlohmann/json.hpp>

#include "core/log.hpp"
#include "core/paths.hpp"

namespace mainboard::machine {

core::EnvMap recorded_environment(const core::Fs& fs) {
  core::EnvMap env;
  auto text = fs.read(core::paths::kRecordEnvironment);
  if (!text) return env;
  auto j = nlohmann::json::parse(*text, nullptr, false);
  if (!j.is_object()) {
    core::log().warn("ignoring malformed {}",
                     fs.host_path(core::paths::kRecordEnvironment).string());
    return env;
  }
  for (auto& [key, value] : j.items())
    if (value.is_string()) env[key] = value.get<std::string>();
  return env;
}

core::EnvMap host_environment(const core::Fs& fs) {
  if (fs.is_live()) return core::process_environment();
  auto env = recorded_environment(fs);
  for (const auto& [name, value] : core::process_environment())
    if (name.rfind("MAINBOARD_", 0) == 0) env[name] = value;
  return env;
}

std::shared_ptr<const Runner> recorded_runner(const core::Fs& fs) {
  std::map<std::string, std::string> executables;
  std::vector<ReplayRunner::Entry> entries;
  auto text = fs.read(core::paths::kRecordCommands);
  auto j = text ? nlohmann::json::parse(*text, nullptr, false) : nlohmann::json();
  if (text && !j.is_object())
    core::log().warn("ignoring malformed {}", fs.host_path(core::paths::kRecordCommands).string());
  if (j.is_object()) {
    if (auto it = j.find("executables"); it != j.end() && it->is_object())
      for (auto& [name, path] : it->items())
        if (path.is_string()) executables[name] = path.get<std::string>();
    if (auto it = j.find("commands"); it != j.end() && it->is_array()) {
      for (const auto& c : *it) {
        if (!c.is_object() || !c.contains("argv") || !c["argv"].is_array()) continue;
        ReplayRunner::Entry e;
        bool ok = true;
        for (const auto& a : c["argv"]) {
          if (!a.is_string())
            ok = false;
          else
            e.argv.push_back(a.get<std::string>());
        }
        if (!ok || e.argv.empty()) continue;
        e.result.started = true;
        try {
          e.result.exit_code = c.value("exit_code", 0);
          e.result.out = c.value("stdout", std::string());
          e.result.err = c.value("stderr", std::string());
        } catch (const nlohmann::json::exception&) {
          continue;  // a field of the wrong type: skip the entry, keep the rest
        }
        entries.push_back(std::move(e));
      }
    }
  }
  return std::make_shared<ReplayRunner>(std::move(executables), std::move(entries));
}

}  // namespace mainboard::machine
