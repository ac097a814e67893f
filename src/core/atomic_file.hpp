#pragma once

#include <filesystem>
#include <string_view>

namespace mainboard::core {

/// Writes `content` to a temporary file beside `path`, flushes it, and renames it over `path`,
/// so a crash never leaves half a file. Throws mainboard::Error naming the path on failure.
void write_file_atomic(const std::filesystem::path& path, std::string_view content);

}  // namespace mainboard::core
