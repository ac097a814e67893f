#include "core/pyenv.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <vector>

#include "core/fs.hpp"
#include "core/process.hpp"
#include "core/text.hpp"

namespace mainboard::core {

namespace {

namespace fs = std::filesystem;

/// pyenv's files, read as every probe reads files (size-capped, binary refused).
const Fs& host() {
  static const Fs fs("/");
  return fs;
}

/// PYENV_ROOT as the shim exports it; empty when the file is not a pyenv shim.
std::optional<std::string> shim_root(const std::string& shim) {
  auto text = host().read(shim, 4096);
  if (!text || text->rfind("#!", 0) != 0) return std::nullopt;
  if (text->find("pyenv\" exec \"$program\"") == std::string::npos) return std::nullopt;
  const std::string key = "export PYENV_ROOT=\"";
  auto at = text->find(key);
  if (at == std::string::npos) return std::nullopt;
  auto end = text->find('"', at + key.size());
  if (end == std::string::npos) return std::nullopt;
  std::string root = text->substr(at + key.size(), end - at - key.size());
  if (root.empty() || root.front() != '/') return std::nullopt;
  return root;
}

/// The version names of a version file: the first word of each line, comment lines skipped, as
/// pyenv reads them. Empty when it cannot be read or is too large to be one.
std::optional<std::vector<std::string>> read_version_file(const std::string& file) {
  std::vector<std::string> out;
  auto text = host().read(file, 64 * 1024);
  if (!text) return std::nullopt;
  for (auto line : split(*text, '\n')) {
    line = trim(line);
    if (line.empty() || line.front() == '#') continue;
    auto words = split_ws(line);
    if (!words.empty()) out.emplace_back(words.front());
  }
  return out;
}

std::optional<std::vector<std::string>> or_system(std::optional<std::vector<std::string>> names) {
  if (names && names->empty()) names->push_back("system");
  return names;
}

/// The names to try, in order; empty when pyenv itself must be asked (a version file this cannot
/// read). A version file that names nothing means "system", as for pyenv.
std::optional<std::vector<std::string>> chosen_versions(const std::string& root,
                                                        const PyenvContext& context) {
  if (auto v = context.env ? context.env("PYENV_VERSION") : std::nullopt; v && !v->empty()) {
    std::vector<std::string> out;
    for (auto name : split(*v, ':'))
      if (!name.empty()) out.emplace_back(name);
    return out;
  }
  for (fs::path dir = context.directory; !dir.empty(); dir = dir.parent_path()) {
    auto file = (dir / ".python-version").string();
    if (host().exists(file) && !host().is_dir(file)) return or_system(read_version_file(file));
    if (dir == dir.root_path()) break;
  }
  auto global = root + "/version";
  if (host().exists(global)) return or_system(read_version_file(global));
  return std::vector<std::string>{"system"};
}

/// "3.12.1" before "3.12.0" and "3.12.10" before "3.12.9": numeric runs compared as numbers.
bool newer(const std::string& a, const std::string& b) {
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (std::isdigit(static_cast<unsigned char>(a[i])) &&
        std::isdigit(static_cast<unsigned char>(b[j]))) {
      std::size_t i2 = i, j2 = j;
      while (i2 < a.size() && std::isdigit(static_cast<unsigned char>(a[i2])))
        ++i2;
      while (j2 < b.size() && std::isdigit(static_cast<unsigned char>(b[j2])))
        ++j2;
      auto x = a.substr(i, i2 - i), y = b.substr(j, j2 - j);
      x.erase(0, std::min(x.find_first_not_of('0'), x.size()));
      y.erase(0, std::min(y.find_first_not_of('0'), y.size()));
      if (x.size() != y.size()) return x.size() > y.size();
      if (x != y) return x > y;
      i = i2;
      j = j2;
    } else {
      if (a[i] != b[j]) return a[i] > b[j];
      ++i;
      ++j;
    }
  }
  return a.size() - i > b.size() - j;
}

/// The installed version directory a name selects: itself, or the newest "NAME.*" release.
std::optional<fs::path> version_dir(const std::string& root, const std::string& name) {
  fs::path versions = fs::path(root) / "versions";
  if (host().is_dir((versions / name).string())) return versions / name;
  std::optional<std::string> best;
  for (const auto& candidate : host().list(versions.string())) {
    if (candidate.rfind(name + ".", 0) != 0) continue;
    // A release, not a pre-release or a variant: digits and dots after the prefix.
    auto rest = candidate.substr(name.size() + 1);
    if (rest.empty() || rest.find_first_not_of("0123456789.") != std::string::npos) continue;
    if (!host().is_dir((versions / candidate).string())) continue;  // a broken link is none
    if (!best || newer(candidate, *best)) best = candidate;
  }
  if (!best) return std::nullopt;
  return versions / *best;
}

/// The search path without pyenv's shims, as `pyenv exec` searches for a "system" program.
std::string without_shims(const std::string& path, const std::string& root) {
  std::string out;
  const std::string shims = root + "/shims";
  for (auto dir : split(path, ':')) {
    std::string d(dir);
    while (d.size() > 1 && d.back() == '/')
      d.pop_back();
    if (d == shims) continue;
    out += (out.empty() ? "" : ":") + std::string(dir);
  }
  return out;
}

}  // namespace

std::optional<std::string> pyenv_shim_target(const std::string& shim, const PyenvContext& context) {
  return pyenv_shim_target(shim, [&] { return context; });
}

std::optional<std::string> pyenv_shim_target(const std::string& shim,
                                             const std::function<PyenvContext()>& make_context) {
  auto root = shim_root(shim);
  if (!root) return std::nullopt;
  const PyenvContext context = make_context();
  auto program = fs::path(shim).filename().string();
  auto names = chosen_versions(*root, context);
  if (!names) return std::nullopt;
  // pyenv refuses the whole choice when one name in it is not installed, and knows names this
  // does not (a "pypy3.10" prefix, "python-" names, a virtualenv's "3.11.4/envs/foo"): any name
  // this cannot place leaves pyenv to be asked rather than a later name taken in its stead.
  std::vector<std::string> found;
  for (const auto& name : *names) {
    if (name == "system") {
      found.push_back(find_program(program, without_shims(context.path, *root)).value_or(""));
      continue;
    }
    if (name.find('/') != std::string::npos || name == "." || name == "..") return std::nullopt;
    auto dir = version_dir(*root, name);
    if (!dir) return std::nullopt;
    auto file = (*dir / "bin" / program).string();
    found.push_back(executable_file(file) ? file : "");
  }
  // The first chosen version that has the program, as `pyenv which` takes it.
  for (const auto& file : found)
    if (!file.empty()) return file;
  return std::nullopt;
}

}  // namespace mainboard::core
