// libFuzzer target: a PyTorch profiler trace's bytes must become a Profile or a mainboard::Error
// — never a crash, a hang, another exception, or an unbounded allocation — and what reads must
// also merge with itself, be compared rank by rank and export as pprof.
#include <cstdint>
#include <sstream>
#include <string>

#include "mainboard/error.hpp"
#include "mainboard/profile.hpp"
#include "traces/kineto.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    std::stringbuf bytes(std::string(reinterpret_cast<const char*>(data), size));
    auto profile = mainboard::traces::parse_trace(bytes, "fuzz input");
    (void)profile.pprof();
    auto job = mainboard::Profile::merge_ranks({profile, profile}, {"a", "b"});
    (void)job.ranks();
  } catch (const mainboard::Error&) {
  }
  return 0;
}
