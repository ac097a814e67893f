#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/stdout_sinks.h>

#include <mutex>
#include <string>

#include "core/log.hpp"
#include "mainboard/log.hpp"

namespace mainboard {

namespace {

/// Hands each formatted line to the program's sink.
class ForwardingSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  explicit ForwardingSink(LogSink to) : sink_(std::move(to)) {}

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    LogLevel level = LogLevel::critical;
    switch (msg.level) {
      case spdlog::level::trace: level = LogLevel::trace; break;
      case spdlog::level::debug: level = LogLevel::debug; break;
      case spdlog::level::info: level = LogLevel::info; break;
      case spdlog::level::warn: level = LogLevel::warn; break;
      case spdlog::level::err: level = LogLevel::error; break;
      default: break;
    }
    sink_(level, std::string_view(msg.payload.data(), msg.payload.size()));
  }
  void flush_() override {}

 private:
  LogSink sink_;
};

}  // namespace

void set_log_sink(LogSink sink) {
  auto& sinks = core::log().sinks();
  sinks.clear();
  if (sink)
    sinks.push_back(std::make_shared<ForwardingSink>(std::move(sink)));
  else
    sinks.push_back(std::make_shared<spdlog::sinks::stderr_sink_mt>());
  core::log().set_pattern("mainboard: %l: %v");
}

}  // namespace mainboard
