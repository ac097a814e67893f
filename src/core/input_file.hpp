#pragma once

// Files a user hands mainboard to read (a saved profile, a recorded node's snapshot): read whole,
// after their size is checked against a documented bound and the memory reading them takes, and
// when they are not what they should be, said what they are instead.

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace mainboard::core {

struct InputLimits {
  std::uint64_t max_bytes;     ///< larger files are refused, with their size
  const char* what;            ///< "a profile", "a node's snapshot": for the messages
  double memory_per_byte = 4;  ///< what parsing takes per byte of text, checked against
                               ///< MemAvailable
};

/// The file's bytes. Throws mainboard::Error naming the file: it cannot be read, it is larger
/// than `limits.max_bytes` ("… is 1.2 GB: past the 1 GiB a profile may be"), or reading it would
/// take more memory than the machine has available.
std::string read_input(const std::filesystem::path& path, const InputLimits& limits);

/// What bytes that should be JSON text are, when they are recognisably something else:
/// "gzip-compressed data (gunzip it first)", "only NUL bytes", "binary data (a NUL byte at offset
/// 12)", a perf.data file, an ELF file, …; empty when they look like text.
std::string describe_bytes(std::string_view head);

/// 1234567890 → "1.2 GB".
std::string human_bytes(std::uint64_t bytes);

}  // namespace mainboard::core
