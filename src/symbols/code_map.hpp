#pragma once

// Where a native walk of a stack must stay: the executable memory of one process, and whether the
// instruction before a return address is a call. An unwinder that lost the stack (a frame
// pointer used as an ordinary register, CFI that does not describe the code, a stack copy too
// short) reads on through whatever the stack holds: small integers, text, data addresses, or an
// address walking down a library 0x50 at a time. Such "frames" end the walk here, and the sample
// says why (WalkStop), instead of being named as if they had run.

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "symbols/symbolizer.hpp"

namespace mainboard::symbols {

/// Why a native walk was ended before it ran out of frames by itself.
enum class WalkStop : std::uint8_t {
  none = 0,
  outside_code,    ///< an address in no executable mapping of the process
  not_after_call,  ///< a return address with no call instruction before it
};

/// "outside any code", "after no call".
const char* to_string(WalkStop stop);

/// The function name of the frame a stopped walk ends in.
inline constexpr const char* kWalkStoppedFrame = "[unwind stopped]";
inline constexpr const char* kWalkStoppedModule = "[unwind]";

class CodeMap {
 public:
  /// The executable mappings among `mappings` of process `pid` (perf's records: what was mapped
  /// executable), with the code a JIT's perf map names (`jit`: runtimes map code writable, then
  /// make it executable with mprotect, which perf does not record) and, while the process
  /// lives, what /proc/PID/maps says is executable now. Code bytes are read from the mapped
  /// files (as the process sees them, through /proc/PID/root, while it lives) or, for anonymous
  /// code, from the process.
  CodeMap(std::int32_t pid, const std::vector<Mapping>& mappings,
          const std::vector<JitSymbol>& jit = {});
  ~CodeMap();
  CodeMap(const CodeMap&) = delete;
  CodeMap& operator=(const CodeMap&) = delete;

  /// Whether `address` is in executable memory.
  bool executable(std::uint64_t address) const;
  /// Whether the instruction that ends right before `address` is a call (x86-64, arm64), or it
  /// cannot be told (its bytes unreadable, another architecture).
  bool after_call(std::uint64_t address);
  /// Why a walk must end at `address` (a return address, or the address a frame was stopped at:
  /// the leaf, a frame a signal interrupted), WalkStop::none when it need not.
  WalkStop stop_at(std::uint64_t address, bool return_address);
  /// Cuts `ips` (the sampled address first, then return addresses) before the first address
  /// that cannot be a frame's, and says why. The first address (and the one after a "[kernel]"
  /// leaf, where the thread entered the kernel) is where the processor was: never cut.
  /// `activations[i]`, where given, is true for an address that is not a return address (the
  /// frame a signal interrupted), whose instruction need not follow a call.
  WalkStop check(std::vector<std::uint64_t>& ips, const std::vector<bool>* activations = nullptr,
                 std::uint64_t kernel_marker = 0);

 private:
  struct Range {
    std::uint64_t start, end, offset;
    std::string path;
  };
  const Range* find(std::uint64_t address) const;
  bool read_before(const Range& r, std::uint64_t address, unsigned char* into, std::size_t n);
  std::int32_t pid_;
  std::vector<Range> ranges_;                      // by start, no two overlapping
  std::unordered_map<std::uint64_t, bool> calls_;  // return address → after a call
  std::map<std::string, int> files_;               // open code files, by path (-1: unreadable)
};

/// Whether `bytes` (the `n` bytes right before a return address, the last one the byte just
/// before it) end with a call instruction of this machine. Exposed for tests.
bool ends_with_call(const unsigned char* bytes, std::size_t n);

}  // namespace mainboard::symbols
