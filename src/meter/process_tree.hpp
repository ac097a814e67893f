#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "core/fs.hpp"

namespace mainboard::proctree {

/// One process of a tree, as /proc/<pid>/stat describes it.
struct ProcessStat {
  int pid = 0;
  int ppid = 0;
  std::uint64_t rss_pages = 0;
};

/// Parses /proc/<pid>/stat. The command name (field 2) is in parentheses and may itself hold
/// spaces and parentheses, so fields are counted from the last ')'.
std::optional<ProcessStat> parse_stat(std::string_view text);

/// The value of a "Key:   123 kB" line of /proc/<pid>/status or smaps_rollup, in KiB; empty
/// when the key is missing or its value is not a number.
std::optional<std::uint64_t> kib_field(std::string_view text, std::string_view key);

/// `root` and every descendant alive now, through /proc/<pid>/task/*/children (one read per
/// thread), or, where the kernel lacks that file, by scanning every /proc/<pid>/stat.
std::vector<ProcessStat> process_tree(const core::Fs& fs, int root);

/// Whether two live processes share one address space: a vfork child before its exec, or a task
/// cloned with CLONE_VM but not as a thread (a sanitizer's leak checker, some runtimes' helpers).
/// Such a pair's pages are one set, so summing their RSS or PSS counts them twice. False where
/// the kernel cannot say (no kcmp, or no permission).
bool share_address_space(int a, int b);

}  // namespace mainboard::proctree
