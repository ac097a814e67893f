#pragma once

// Addresses of one process to frames: function (demangled), inlined frames, file:line, through
// elfutils libdwfl over the process's mappings, and perf maps (/tmp/perf-<pid>.map) for JIT code.

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "mainboard/profile.hpp"

struct Dwfl;

namespace mainboard::symbols {

/// A libdwfl session for a live process's files (ELF found through the paths in its maps,
/// separate debug information through build ids and debuglinks). Null if libdwfl fails.
Dwfl* begin_dwfl();

/// The text of a small /proc or /sys file; empty when it cannot be read.
std::string read_proc_file(const std::string& path);
/// The thread ids of process `pid` (/proc/PID/task), in no particular order; empty when gone.
std::vector<std::int32_t> thread_ids(std::int32_t pid);
/// Process `pid` and its descendants (children, theirs, …) as /proc shows them now, parents
/// before their children; empty when `pid` is gone.
std::vector<std::int32_t> process_tree(std::int32_t pid);
/// The state letter of a thread in /proc/PID/task/TID/stat ('R', 'S', 'D', …); 0 when gone.
char thread_state(std::int64_t pid, std::int64_t tid);

/// One line of /proc/<pid>/maps.
struct Mapping {
  std::uint64_t start = 0, end = 0, offset = 0;
  std::string perms = "r-xp";
  std::uint64_t inode = 0;
  std::string path;
};
/// Parses /proc/<pid>/maps text; malformed lines are skipped.
std::vector<Mapping> parse_maps(std::string_view text);

/// A JIT symbol from a perf map.
struct JitSymbol {
  std::uint64_t start = 0, size = 0;
  std::string name;
};
/// Parses a perf map ("START SIZE name", hex, one per line); malformed lines are skipped.
std::vector<JitSymbol> parse_perf_map(std::string_view text);

class Symbolizer {
 public:
  Symbolizer();
  ~Symbolizer();
  Symbolizer(const Symbolizer&) = delete;
  Symbolizer& operator=(const Symbolizer&) = delete;

  /// The process's file mappings (anonymous ones are ignored). Call before symbolize().
  void set_mappings(std::vector<Mapping> mappings);
  /// JIT symbols, consulted for addresses no file mapping covers.
  void set_jit_symbols(std::vector<JitSymbol> symbols);

  /// The frames at `address`, innermost first: inlined functions, then the function that holds
  /// them. `return_address`: the address follows a call (a caller's frame), so the call
  /// instruction is the one before it.
  const std::vector<StackFrame>& symbolize(std::uint64_t address, bool return_address);

  /// Unwinds a user stack captured by perf (registers in perf's order for this architecture,
  /// symbols/perf_regs.hpp, and a copy of the stack from SP) with the modules' CFI. The
  /// sampled address first, then return addresses; empty when it cannot (neither x86-64 nor
  /// arm64, no modules). `activations`, when given, gets for each address whether it is not a
  /// return address (the first, and a frame a signal interrupted).
  std::vector<std::uint64_t> unwind(std::int32_t tid, const std::vector<std::uint64_t>& regs,
                                    const std::vector<unsigned char>& stack,
                                    std::vector<bool>* activations = nullptr);

  /// Whether a module of the mappings holds `address`.
  bool covers(std::uint64_t address);

 private:
  void build();
  std::vector<StackFrame> lookup(std::uint64_t address);

  std::vector<Mapping> mappings_;
  std::vector<JitSymbol> jit_;  // by start
  Dwfl* dwfl_ = nullptr;
  bool built_ = false;
  bool attached_ = false;  // the unwinder's thread callbacks are on dwfl_

 public:
  /// What the unwinder's callbacks read: the sample being unwound.
  struct UnwindInput {
    std::int32_t tid = 0;
    const std::vector<std::uint64_t>* regs = nullptr;
    const std::vector<unsigned char>* stack = nullptr;
    bool handed_out = false;
  };

 private:
  UnwindInput input_;
  std::unordered_map<std::uint64_t, std::vector<StackFrame>> cache_;
};

}  // namespace mainboard::symbols
