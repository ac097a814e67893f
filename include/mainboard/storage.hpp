#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "mainboard/export.hpp"

namespace mainboard {

/// A block device from /sys/block.
struct MAINBOARD_API BlockDevice {
  std::string name;  ///< e.g. nvme0n1, sda, vda
  std::string model;
  /// Empty when /sys/block/<name>/size is missing, not a number, or too large to be bytes.
  std::optional<std::uint64_t> size_bytes;
  /// queue/rotational: true for a spinning disk, false for flash; empty when the kernel does
  /// not say (no queue/rotational, or not 0 or 1).
  std::optional<bool> rotational;
  bool nvme = false;
  bool removable = false;
  bool operator==(const BlockDevice&) const = default;
};

/// The filesystem holding one path of interest.
struct MAINBOARD_API Filesystem {
  std::string role;         ///< cwd, home, tmp, scratch
  std::string path;         ///< the path asked about
  std::string mount_point;  ///< where its filesystem is mounted
  std::string type;         ///< ext4, xfs, tmpfs, nfs4, lustre …
  std::string device;       ///< mount source
  std::optional<std::uint64_t> size_bytes;
  std::optional<std::uint64_t> free_bytes;  ///< available to unprivileged users
  bool operator==(const Filesystem&) const = default;
};

struct MAINBOARD_API Disk {
  std::vector<BlockDevice> devices;
  std::vector<Filesystem> filesystems;
  bool operator==(const Disk&) const = default;
};

/// How fast a scratch location is likely to be, best first.
enum class StorageTier { memory, local_ssd, local_disk, local, network, unknown };
MAINBOARD_API const char* to_string(StorageTier tier);

struct MAINBOARD_API ScratchCandidate {
  std::string path;
  std::string origin;  ///< the variable or rule that proposed it, e.g. $TMPDIR
  std::string fs_type;
  StorageTier tier = StorageTier::unknown;
  std::optional<std::uint64_t> free_bytes;
  bool usable = false;  ///< exists, is a directory, and is writable
  std::string reason;   ///< why it is not usable
  bool operator==(const ScratchCandidate&) const = default;
};

/// The fastest writable node-local directory, and every candidate considered.
struct MAINBOARD_API Scratch {
  bool found = false;
  std::string path;
  std::string fs_type;
  StorageTier tier = StorageTier::unknown;
  std::optional<std::uint64_t> free_bytes;
  std::vector<ScratchCandidate> candidates;
  bool operator==(const Scratch&) const = default;
};

}  // namespace mainboard
