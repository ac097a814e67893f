#pragma once
// GPU drivers report the PIDs of the initial PID namespace (the host's). A process in a
// container has other PIDs there, and a caller in a container may not see the host's at all.
// This maps a driver's PID to the PID the caller knows, through NSpid in /proc/PID/status (the
// PIDs of a process in every namespace from the /proc mount's down to its own).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/fs.hpp"
#include "core/process.hpp"

namespace mainboard::host {

/// Where one of the driver's PIDs is, seen from this process.
struct ResolvedPid {
  std::uint32_t pid = 0;  ///< as this process knows it, or the driver's when it cannot see it
  std::optional<std::uint32_t> host_pid;       ///< the driver's PID, when it differs from pid
  std::optional<std::uint32_t> container_pid;  ///< its PID in its own (deeper) PID namespace
  bool visible = true;  ///< false: in a PID namespace this process cannot see into
  std::string name;     ///< its command name, where visible
};

/// The inode of the initial PID namespace (PROC_PID_INIT_INO): "pid:[4026531836]".
inline constexpr const char* kInitPidNamespace = "pid:[4026531836]";

class PidNamespaceView {
 public:
  /// Reads this process's own namespace through `fs` (/proc/self/status and /proc/self/ns/pid).
  explicit PidNamespaceView(const core::Fs& fs);
  ResolvedPid resolve(std::uint32_t driver_pid) const;

 private:
  const core::Fs& fs_;
  std::string own_namespace_;             // "pid:[...]", empty when unreadable
  std::vector<std::uint32_t> own_nspid_;  // this process's NSpid
  bool proc_is_host_ = true;              // /proc numbers PIDs as the driver does
};

}  // namespace mainboard::host
