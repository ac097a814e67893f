#pragma once

// The user registers perf samples for DWARF unwinding (PERF_SAMPLE_REGS_USER), per
// architecture: which ones (a mask of perf's register numbers; a sample lists them in the
// mask's bit order), where the stack pointer and the program counter sit in that list, and how
// the list becomes the DWARF register file libdwfl's unwinder starts from.
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace mainboard::symbols {

struct PerfRegs {
  std::uint64_t mask = 0;
  std::size_t count = 0;  ///< registers in a sample (the bits of mask)
  std::size_t sp = 0;     ///< index of the stack pointer in a sample's list
  std::size_t pc = 0;     ///< index of the program counter
  /// DWARF register i is sample[dwarf_order[i]], for the first dwarf_count registers.
  std::array<std::uint8_t, 32> dwarf_order{};
  std::size_t dwarf_count = 0;
};

/// x86-64, perf's numbering: AX BX CX DX SI DI BP SP IP (0-8) and R8-R15 (16-23). DWARF's
/// order is rax rdx rcx rbx rsi rdi rbp rsp r8-r15; rip (DWARF 16) is set as the PC.
inline constexpr PerfRegs kPerfRegsX86_64{0x1ffull | (0xffull << 16),
                                          17,
                                          7,
                                          8,
                                          {0, 3, 2, 1, 4, 5, 6, 7, 9, 10, 11, 12, 13, 14, 15, 16},
                                          16};

/// arm64, perf's numbering: X0-X28, X29 (the frame pointer), LR (X30), SP, PC (0-32). DWARF
/// numbers x0-x30 and sp the same (0-31); the PC is set apart.
inline constexpr PerfRegs kPerfRegsAarch64{
    (1ull << 33) - 1,
    33,
    31,
    32,
    {0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15,
     16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31},
    32};

/// This build's registers, or null where DWARF unwinding of perf samples is not supported.
const PerfRegs* perf_regs();

/// A sample's registers (in perf's order) as DWARF's register file, its first dwarf_count
/// entries (no allocation: this runs for every sample unwound); false for a short sample.
inline bool dwarf_registers(const PerfRegs& layout, const std::vector<std::uint64_t>& sample,
                            std::array<std::uint64_t, 32>& out) {
  if (sample.size() < layout.count) return false;
  for (std::size_t i = 0; i < layout.dwarf_count; ++i)
    out[i] = sample[layout.dwarf_order[i]];
  return true;
}

}  // namespace mainboard::symbols
