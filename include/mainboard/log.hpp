#pragma once

/// Where the library's log lines go. By default to standard error ("mainboard: warning: …"),
/// at the level MAINBOARD_LOG sets (trace, debug, info, warn, error, off; default warn). A
/// program with logging of its own takes them instead: the Python package hands them to the
/// "mainboard" logger of Python's logging.

#include <functional>
#include <string_view>

#include "mainboard/export.hpp"

namespace mainboard {

enum class LogLevel { trace, debug, info, warn, error, critical };

/// Receives each log line (without the "mainboard: level:" prefix). Called from any thread
/// that logs; the library calls it under its own lock, one line at a time.
using LogSink = std::function<void(LogLevel level, std::string_view message)>;

/// Sends every log line at or above the MAINBOARD_LOG level to `sink`; an empty sink sends
/// them back to standard error. Set it while no other thread uses the library (at start-up,
/// at exit).
MAINBOARD_API void set_log_sink(LogSink sink);

}  // namespace mainboard
