// The operating system: the distribution from os-release (freedesktop.org's format: KEY=value,
// the value optionally quoted with shell-like escapes), the kernel's release from /proc, and the
// C library (confstr on this system, `getconf GNU_LIBC_VERSION` through a sysroot or a recording).
#include <unistd.h>

#include <chrono>

#include "core/text.hpp"
#include "host/probes.hpp"

namespace mainboard::host {

std::map<std::string, std::string> parse_os_release(std::string_view text) {
  std::map<std::string, std::string> out;
  for (auto line : core::split_lines(text)) {
    line = core::trim(line);
    if (line.empty() || line[0] == '#') continue;
    auto eq = line.find('=');
    if (eq == std::string_view::npos || eq == 0) continue;
    std::string key(line.substr(0, eq));
    std::string_view raw = line.substr(eq + 1);
    std::string value;
    if (!raw.empty() && (raw[0] == '"' || raw[0] == '\'')) {
      char quote = raw[0];
      std::size_t i = 1;
      for (; i < raw.size() && raw[i] != quote; ++i) {
        if (quote == '"' && raw[i] == '\\' && i + 1 < raw.size()) ++i;  // \" \\ \$ \`
        value += raw[i];
      }
      if (i >= raw.size()) continue;  // no closing quote: not a value
    } else {
      value = std::string(raw);
    }
    if (value.size() > 256) value.resize(256);
    out[key] = std::move(value);
  }
  return out;
}

OperatingSystem probe_os(const core::Fs& fs, const Runner& runner, Note& note) {
  OperatingSystem os;
  auto text = fs.read("/etc/os-release");
  if (!text) text = fs.read("/usr/lib/os-release");
  if (text) {
    auto kv = parse_os_release(*text);
    os.id = kv["ID"];
    os.version_id = kv["VERSION_ID"];
    os.name = kv["PRETTY_NAME"];
    if (os.name.empty()) {
      std::string joined = kv["NAME"] + " " + kv["VERSION"];
      os.name = std::string(core::trim(joined));
    }
  } else {
    note.unsupported("no /etc/os-release");
  }
  if (auto release = fs.read_line("/proc/sys/kernel/osrelease"))
    os.kernel = *release;
  else
    note.unsupported("no /proc/sys/kernel/osrelease");
  // The C library and the page size this very process runs with are the system's: asked
  // directly, no program starts. Through a sysroot, or when the reading is recorded (gather) or
  // replayed, getconf answers.
  auto set_libc = [&](std::string_view said) {
    auto words = core::split_ws(core::trim(said));  // "glibc 2.36"
    if (words.size() == 2 && words[0] == "glibc") os.libc = "glibc " + std::string(words[1]);
  };
  auto set_page = [&](std::string_view said) {
    auto n = core::parse_i64(core::trim(said));
    // A power of two from 4 KiB to 1 MiB: anything else is not a page size.
    if (n && *n >= 4096 && *n <= (1 << 20) && (*n & (*n - 1)) == 0)
      os.page_size_bytes = static_cast<std::uint64_t>(*n);
  };
  if (fs.root() == "/" && runner.search_path()) {
    char buf[64] = {};
    if (::confstr(_CS_GNU_LIBC_VERSION, buf, sizeof buf) > 0) set_libc(buf);
    set_page(std::to_string(::sysconf(_SC_PAGESIZE)));
  } else if (auto getconf = runner.find_executable("getconf")) {
    auto r = runner.run(Command{{*getconf, "GNU_LIBC_VERSION"}, std::chrono::milliseconds(2000)});
    if (r.ok()) set_libc(r.out);
    auto page = runner.run(Command{{*getconf, "PAGESIZE"}, std::chrono::milliseconds(2000)});
    if (page.ok()) set_page(page.out);
  }
  return os;
}

}  // namespace mainboard::host
