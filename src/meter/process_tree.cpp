#include "meter/process_tree.hpp"

#include <algorithm>
#include <map>
#include <set>

#include <linux/kcmp.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/proc_stat.hpp"
#include "core/text.hpp"

namespace mainboard::proctree {

std::optional<ProcessStat> parse_stat(std::string_view text) {
  auto stat = core::parse_proc_stat(text);
  if (!stat) return std::nullopt;
  return ProcessStat{static_cast<int>(stat->pid), static_cast<int>(stat->ppid), stat->rss_pages};
}

namespace {

std::optional<ProcessStat> read_stat(const core::Fs& fs, int pid) {
  auto text = fs.read("/proc/" + std::to_string(pid) + "/stat", 4096);
  if (!text) return std::nullopt;
  return parse_stat(*text);
}

/// Children from the per-thread children files; empty optional when the kernel has none.
std::optional<std::vector<int>> children(const core::Fs& fs, int pid) {
  std::string task = "/proc/" + std::to_string(pid) + "/task";
  std::vector<int> out;
  bool any_file = false;
  for (const auto& tid : fs.list(task)) {
    auto text = fs.read(task + "/" + tid + "/children", 1u << 20);
    if (!text) continue;
    any_file = true;
    for (auto c : core::split_ws(core::trim(*text)))
      if (auto n = core::parse_i64(c); n && *n > 0) out.push_back(static_cast<int>(*n));
  }
  if (!any_file) return std::nullopt;
  return out;
}

}  // namespace

std::vector<ProcessStat> process_tree(const core::Fs& fs, int root) {
  std::vector<ProcessStat> out;
  auto first = read_stat(fs, root);
  if (!first) return out;
  out.push_back(*first);
  std::set<int> seen{root};
  std::vector<int> frontier{root};
  bool scan = false;
  while (!frontier.empty() && !scan) {
    std::vector<int> next;
    for (int pid : frontier) {
      auto kids = children(fs, pid);
      if (!kids) {
        scan = true;
        break;
      }
      for (int k : *kids) {
        if (!seen.insert(k).second) continue;
        if (auto st = read_stat(fs, k)) {
          out.push_back(*st);
          next.push_back(k);
        }
      }
    }
    frontier = std::move(next);
  }
  if (!scan) return out;

  // No children files (CONFIG_PROC_CHILDREN off): every process, then the tree by ppid.
  std::multimap<int, ProcessStat> by_parent;
  for (const auto& name : fs.list("/proc")) {
    auto pid = core::parse_i64(name);
    if (!pid || *pid <= 0) continue;
    if (auto st = read_stat(fs, static_cast<int>(*pid))) by_parent.emplace(st->ppid, *st);
  }
  out.assign(1, *first);
  std::vector<int> queue{root};
  std::set<int> done{root};
  while (!queue.empty()) {
    int pid = queue.back();
    queue.pop_back();
    auto [lo, hi] = by_parent.equal_range(pid);
    for (auto it = lo; it != hi; ++it) {
      if (!done.insert(it->second.pid).second) continue;
      out.push_back(it->second);
      queue.push_back(it->second.pid);
    }
  }
  return out;
}

std::optional<std::uint64_t> kib_field(std::string_view text, std::string_view key) {
  auto value = core::find_value(text, key);
  if (!value) return std::nullopt;
  auto words = core::split_ws(*value);
  if (words.empty()) return std::nullopt;
  return core::parse_u64(words[0]);
}

bool share_address_space(int a, int b) {
#ifdef SYS_kcmp
  return ::syscall(SYS_kcmp, a, b, KCMP_VM, 0, 0) == 0;
#else
  (void)a;
  (void)b;
  return false;
#endif
}

}  // namespace mainboard::proctree
