#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mainboard/export.hpp"
#include "mainboard/snapshot.hpp"

namespace mainboard {

class Machine;

struct MAINBOARD_API ViewOptions {
  bool color = false;
  /// Columns to fill: 80 fits any terminal; wider terminals get wider cells. Below 60 the
  /// schematic degrades to a list.
  int width = 80;
};

/// The terminal schematic of a machine: system memory on the left, every unit on the right with
/// an arrow from memory labelled by the fabric that connects them (the DIMM type for the CPU,
/// the PCIe link, NVLink-C2C for a coherent GPU, "unified" on Apple silicon), and one summary
/// line. It formats a snapshot and reads nothing itself.
class MAINBOARD_API MachineView {
 public:
  explicit MachineView(MachineSnapshot snapshot);
  /// A view of a fresh snapshot of `machine` (without the toolchain probe).
  static MachineView of(const Machine& machine);

  std::string render(const ViewOptions& options = {}) const;
  /// Prints the rendering to stdout.
  void print(const ViewOptions& options = {}) const;

  /// One short line: host, CPU, memory, accelerators, memory cap, scratch.
  std::string compact_summary() const;

  // The pieces, for callers that lay out their own view.
  std::string memory_title() const;
  std::vector<std::string> memory_rows() const;
  std::string cpu_title() const;
  std::vector<std::string> cpu_rows() const;
  std::string gpu_title(std::size_t index) const;
  std::vector<std::string> gpu_rows(std::size_t index) const;
  /// Many GPUs in one cell: what they share, then a compact row per GPU.
  std::string gpu_group_title() const;
  std::vector<std::string> gpu_group_rows() const;
  std::string npu_title(std::size_t index) const;
  std::vector<std::string> npu_rows(std::size_t index) const;
  /// How memory reaches this kind of unit: "DDR5-4800", "PCIe 5 x16", "NVLink-C2C", "unified".
  std::string connection_label(UnitKind kind, std::size_t index = 0) const;
  /// The dominant host-to-accelerator fabric of the machine, or empty without accelerators.
  std::string fabric_label() const;
  std::string swap_label() const;
  /// Human label for a macOS Metal identifier ("spdisplays_metal3" → "Metal 3").
  static std::string metal_label(const std::string& value);
  /// A byte count as the view writes it: "512 B", "1.50 GiB".
  static std::string bytes(std::uint64_t value);
  /// Used and total in one unit where that reads well: "12.0 / 80.0 GiB".
  static std::string capacity_pair(std::uint64_t used, std::uint64_t total);
  /// A memory reading as a gauge and its capacity pair ("███░░░░░░░ 24.0 / 80.0 GiB"), its total
  /// alone when use is unknown, "memory unavailable" when unsupported.
  static std::string memory_usage(const Reading<Memory>& memory);

  const MachineSnapshot& snapshot() const { return snapshot_; }

 private:
  MachineSnapshot snapshot_;
};

/// The terminal width of `fd`, else $COLUMNS, else 80.
MAINBOARD_API int terminal_width(int fd);

}  // namespace mainboard
