// The counters of the live view (host/live.hpp).
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "core/text.hpp"
#include "host/live.hpp"

namespace mainboard::host {

std::vector<CpuTimes> parse_cpu_times(std::string_view text) {
  std::vector<CpuTimes> out;
  for (auto line : core::split_lines(text)) {
    if (!core::starts_with(line, "cpu")) continue;
    auto f = core::split_ws(line);
    // cpu user nice system idle iowait irq softirq steal [guest guest_nice]: kernels before
    // 2.6.11 stop after softirq; steal is then 0.
    if (f.size() < 8) continue;
    CpuTimes t;
    if (f[0] != "cpu") {
      auto n = core::parse_u64(f[0].substr(3));
      if (!n || *n > 1u << 20) continue;
      t.cpu = static_cast<int>(*n);
    }
    std::uint64_t* slots[] = {&t.user,   &t.nice, &t.system,  &t.idle,
                              &t.iowait, &t.irq,  &t.softirq, &t.steal};
    bool ok = true;
    for (std::size_t i = 0; i < 8 && ok; ++i) {
      if (i + 1 >= f.size()) break;
      auto v = core::parse_u64(f[i + 1]);
      if (!v)
        ok = false;
      else
        *slots[i] = *v;
    }
    if (ok) out.push_back(t);
  }
  return out;
}

std::string command_line(std::string_view cmdline) {
  while (!cmdline.empty() && cmdline.back() == '\0')
    cmdline.remove_suffix(1);
  std::string out(cmdline);
  // Words with spaces between; a line break or tab inside a word (python3 -c "…") is a space
  // too: the command is one row of a table.
  for (char& c : out)
    if (c == '\0' || c == '\n' || c == '\r' || c == '\t') c = ' ';
  return core::terminal_text(out);
}

std::string read_command_line(const core::Fs& fs, std::uint32_t pid, std::size_t max_bytes) {
  int fd = fs.open("/proc/" + std::to_string(pid) + "/cmdline", O_RDONLY);
  if (fd < 0) return {};
  std::string bytes(max_bytes, '\0');
  std::size_t got = 0;
  while (got < max_bytes) {
    ssize_t n = ::read(fd, bytes.data() + got, max_bytes - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  ::close(fd);
  bytes.resize(got);
  return command_line(bytes);
}

std::optional<std::uint32_t> status_uid(std::string_view status) {
  auto value = core::find_value(status, "Uid");
  if (!value) return std::nullopt;
  auto f = core::split_ws(core::trim(*value));
  if (f.empty()) return std::nullopt;
  auto uid = core::parse_u64(f[0]);
  if (!uid || *uid > 0xffffffffu) return std::nullopt;
  return static_cast<std::uint32_t>(*uid);
}

std::map<std::uint32_t, std::string> user_names(std::string_view passwd) {
  std::map<std::uint32_t, std::string> out;
  for (auto line : core::split_lines(passwd)) {
    auto f = core::split(line, ':');
    if (f.size() < 3 || f[0].empty()) continue;
    auto uid = core::parse_u64(f[2]);
    if (uid && *uid <= 0xffffffffu) out.emplace(static_cast<std::uint32_t>(*uid), f[0]);
  }
  return out;
}

std::vector<CpuTimes> read_cpu_times(const core::Fs& fs) {
  auto text = fs.read("/proc/stat", 4u << 20);
  return text ? parse_cpu_times(*text) : std::vector<CpuTimes>{};
}

std::vector<std::uint32_t> list_pids(const core::Fs& fs) {
  std::vector<std::uint32_t> out;
  for (const auto& name : fs.list("/proc"))
    if (auto n = core::parse_u64(name); n && *n > 0 && *n <= 0x7fffffff)
      out.push_back(static_cast<std::uint32_t>(*n));
  std::sort(out.begin(), out.end());
  return out;
}

std::optional<double> uptime_s(const core::Fs& fs) {
  auto line = fs.read_line("/proc/uptime");
  if (!line) return std::nullopt;
  auto f = core::split_ws(*line);
  if (f.empty()) return std::nullopt;
  return core::parse_double(f[0]);
}

}  // namespace mainboard::host
