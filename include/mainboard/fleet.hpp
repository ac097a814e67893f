#pragma once

// Many nodes at once: their snapshots merged into one fleet document, grouped by what makes them
// alike, with every node that differs from the rest called out.

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mainboard/check.hpp"
#include "mainboard/export.hpp"
#include "mainboard/snapshot.hpp"

namespace mainboard {

/// Version of the fleet document's JSON layout.
inline constexpr int kFleetSchemaVersion = 1;

/// One node's answer: its snapshot, or why there is none.
struct MAINBOARD_API FleetNode {
  std::string name;  ///< the scheduler's node name (or the recorded host's directory name)
  std::optional<MachineSnapshot> snapshot;
  std::string error;  ///< why the node gave no snapshot: "timed out after 30 s", …
  bool operator==(const FleetNode&) const = default;
};

/// Nodes alike in everything a job depends on (see Fleet::traits).
struct MAINBOARD_API NodeGroup {
  std::vector<std::pair<std::string, std::string>> traits;  ///< (trait, value), in table order
  std::vector<std::string> nodes;
  bool operator==(const NodeGroup&) const = default;
};

/// A node whose trait differs from what most nodes have.
struct MAINBOARD_API Drift {
  std::string node;
  std::string trait;            ///< "driver", "GPUs", "memory", …
  std::string value;            ///< this node's
  std::string common;           ///< what the most nodes have
  std::size_t with_common = 0;  ///< how many nodes have it
  bool operator==(const Drift&) const = default;
};

struct MAINBOARD_API Fleet {
  int schema_version = kFleetSchemaVersion;
  std::vector<FleetNode> nodes;  ///< by name

  /// The traits of one snapshot that decide whether a job runs the same on two nodes: CPU model,
  /// cores, memory (to 1 %), GPU model × count, driver, CUDA, cgroup cap, compilers.
  static std::vector<std::pair<std::string, std::string>> traits(const MachineSnapshot& s);
  /// Nodes with a snapshot, grouped by equal traits; the largest group first.
  std::vector<NodeGroup> groups() const;
  /// Every node whose trait differs from the most common value, trait by trait.
  std::vector<Drift> differences() const;
  /// `mainboard check` on every node that answered: (node, its readiness), the nodes that are
  /// not ready first.
  std::vector<std::pair<std::string, Readiness>> readiness(bool strict = false) const;
  /// The nodes that are not ready and why (their blockers, and warnings when strict).
  std::string readiness_text(bool strict = false) const;
  /// A table of the groups, the differences ("n7: driver 550.54.15, the other 31 have
  /// 560.35.03") and the nodes that failed.
  std::string text() const;

  /// Reads recorded nodes from `dir`: each subdirectory a recorded host (as `mainboard gather`
  /// writes it; the node is named after the directory) and each NAME.json a saved snapshot.
  /// Throws mainboard::Error when `dir` cannot be read.
  static Fleet from_directory(const std::filesystem::path& dir);
  /// Reads the answers of `srun --label … mainboard fleet --node` (one task per node): each
  /// task's lines are prefixed "K: ", its first a {"node": NAME} line, then {"snapshot": …}. A
  /// task that named its node but gave no snapshot is listed with its standard error, or as
  /// timed out when `timed_out_after_s` is set (the run was stopped at that deadline).
  static Fleet from_tasks(std::string_view out, std::string_view err,
                          std::optional<double> timed_out_after_s = std::nullopt);
  /// Runs the snapshot on every node through `srun_argv` (srun and its options; this function
  /// adds --label, one task per node and the command, with `node_options` after
  /// `fleet --node`), stopping after `timeout_s`. Throws
  /// mainboard::Error when srun cannot be started.
  static Fleet from_srun(std::vector<std::string> srun_argv, double timeout_s,
                         const std::vector<std::string>& node_options = {});
  /// What one node's task prints (the `mainboard fleet --node` side).
  static std::string node_answer(const std::string& node, const MachineSnapshot& snapshot);
  bool operator==(const Fleet&) const = default;
};

}  // namespace mainboard
