#include "core/proc_stat.hpp"

#include "core/text.hpp"

namespace mainboard::core {

std::optional<ProcStat> parse_proc_stat(std::string_view text) {
  auto close = text.rfind(')');
  auto open = text.find('(');
  if (close == std::string_view::npos || open == std::string_view::npos || open > close)
    return std::nullopt;
  auto pid = parse_i64(trim(text.substr(0, open)));
  if (!pid || *pid <= 0 || *pid > 0x7fffffff) return std::nullopt;
  // After ')': state(3) ppid(4) … utime(14) stime(15) … num_threads(20) … starttime(22)
  // vsize(23) rss(24); index 0 here is field 3.
  auto fields = split_ws(trim(text.substr(close + 1)));
  if (fields.size() < 22 || fields[0].size() != 1) return std::nullopt;
  auto ppid = parse_i64(fields[1]);
  auto utime = parse_u64(fields[11]);
  auto stime = parse_u64(fields[12]);
  auto threads = parse_i64(fields[17]);
  auto start = parse_u64(fields[19]);
  auto rss = parse_i64(fields[21]);
  if (!ppid || *ppid < 0 || *ppid > 0x7fffffff || !rss) return std::nullopt;
  ProcStat s;
  s.pid = static_cast<std::uint32_t>(*pid);
  s.ppid = static_cast<std::uint32_t>(*ppid);
  s.name = std::string(text.substr(open + 1, close - open - 1));
  s.state = fields[0][0];
  if (utime && stime) s.cpu_ticks = *utime + *stime;
  if (start) s.start_ticks = *start;
  s.rss_pages = *rss > 0 ? static_cast<std::uint64_t>(*rss) : 0;
  if (threads && *threads > 0 && *threads < (1ll << 31))
    s.threads = static_cast<std::uint32_t>(*threads);
  return s;
}

}  // namespace mainboard::core
